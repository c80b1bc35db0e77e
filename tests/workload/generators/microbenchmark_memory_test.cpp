// A microbenchmark whose one rank cannot fit in memory (its trace and graph
// are built whole) is refused when it is made, with the estimate, instead of
// generating for minutes until memory runs out.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/error.h"
#include "workload/generators/workload_generator.h"
#include "workload/loader/memory_budget.h"

namespace sim {
namespace {

std::string memory_error(const WorkloadGenOptions& o) {
  try {
    make_microbenchmark(o, gen::OptionSpelling::kQuery);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MicrobenchmarkMemory, ARankTooLargeForMemoryIsRefusedWithTheEstimate) {
  WorkloadGenOptions ring;
  ring.kind = "p2p-ring";
  ring.npus = 8;
  ring.iterations = std::numeric_limits<std::uint32_t>::max();  // 2^33 nodes a rank: about 1 TB
  // The chain's 2^32 nodes, half the ring's, are about 500 GB.
  const std::uint64_t need = std::uint64_t{ring.iterations} * (kTraceBytesPerNode + kGraphBytesPerNode);
  if (available_memory().bytes >= need) GTEST_SKIP() << "this machine has " << need << " B available";
  const std::string e = memory_error(ring);
  EXPECT_EQ(e.rfind("gen:p2p-ring: iterations: 8589934590 nodes a rank at 116 B per node (its trace and its graph) "
                    "need at least 950272 MiB but only ",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find("is available ("), std::string::npos) << e;

  WorkloadGenOptions chain;
  chain.kind = "chain";
  chain.npus = 8;
  chain.nodes = std::numeric_limits<std::uint32_t>::max();
  EXPECT_EQ(memory_error(chain).rfind("gen:chain: nodes: 4294967295 nodes a rank", 0), 0u) << memory_error(chain);
  // A count that fits is made.
  chain.nodes = 1000;
  EXPECT_EQ(memory_error(chain), "no error");
}

}  // namespace
}  // namespace sim
