// A collectives microbenchmark's size on N ranks: a reduce-scatter's or
// all-to-all's must be a multiple of N bytes (NCCL has no other call), refused
// where typed once and rounded down as nccl-tests rounds it where a sweep asks
// (UnevenSize::kRoundDown); an all-gather's size is the per-rank input, so any
// size is a call; a size below N is an error either way.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "workload/generators/workload_generator.h"

namespace sim {
namespace {

WorkloadGenOptions collectives(std::uint32_t npus, const std::string& coll, const std::string& size,
                               UnevenSize uneven = UnevenSize::kRefuse) {
  WorkloadGenOptions o;
  o.kind = "collectives";
  o.npus = npus;
  o.collectives = coll;
  o.size_text = size;
  o.uneven = uneven;
  return o;
}

std::string microbenchmark_error(const WorkloadGenOptions& o,
                                 gen::OptionSpelling spelling = gen::OptionSpelling::kFlags) {
  try {
    make_microbenchmark(o, spelling);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// comm_size of each collective of rank 0's trace.
std::vector<std::int64_t> sizes(const Microbenchmark& mb) {
  std::vector<std::int64_t> out;
  for (const et::Node& n : microbenchmark_trace(mb, 0).nodes) out.push_back(attr_int(n, "comm_size").value_or(-1));
  return out;
}

TEST(CollectiveSizes, AReduceScatterOrAllToAllThatDoesNotSplitIsRefusedNamingTheNearestSizes) {
  EXPECT_EQ(microbenchmark_error(collectives(16, "reducescatter", "1000001")),
            "--size 1000001 B: REDUCE_SCATTER on 16 ranks needs a multiple of 16 B (NCCL splits its buffer into 16 "
            "equal parts of 1-byte elements); the nearest sizes that split are 1000000 B and 1000016 B");
  EXPECT_EQ(microbenchmark_error(collectives(6, "alltoall", "1MiB")),
            "--size 1MiB (1048576 B): ALL_TO_ALL on 6 ranks needs a multiple of 6 B (NCCL splits its buffer into 6 "
            "equal parts of 1-byte elements); the nearest sizes that split are 1048572 B and 1048578 B");
  // A query names its key; a chain names the first collective that cannot run.
  EXPECT_EQ(microbenchmark_error(collectives(12, "allreduce,allgather,alltoall,reducescatter", "100"),
                                 gen::OptionSpelling::kQuery),
            "gen:collectives: size 100 B: ALL_TO_ALL on 12 ranks needs a multiple of 12 B (NCCL splits its buffer "
            "into 12 equal parts of 1-byte elements); the nearest sizes that split are 96 B and 108 B");
}

TEST(CollectiveSizes, AnAllGathersSizeIsThePerRankInputSoEverySizeRunsAsGiven) {
  for (const UnevenSize uneven : {UnevenSize::kRefuse, UnevenSize::kRoundDown}) {
    const Microbenchmark mb = make_microbenchmark(collectives(16, "allgather,allreduce,broadcast", "1000001", uneven));
    EXPECT_EQ(sizes(mb), (std::vector<std::int64_t>{1000001, 1000001, 1000001}));
  }
}

TEST(CollectiveSizes, RoundingDownIsNcclTestsPerCollective) {
  // nccl-tests: count / nranks elements per rank, truncated; the others run as asked.
  const Microbenchmark mb =
      make_microbenchmark(collectives(6, "reducescatter,alltoall,allgather,allreduce", "1MiB", UnevenSize::kRoundDown));
  EXPECT_EQ(sizes(mb), (std::vector<std::int64_t>{1048572, 1048572, 1048576, 1048576}));
  EXPECT_EQ(nccl_tests_bytes(CollectiveType::kReduceScatter, 1000001, 16), 1000000u);
  EXPECT_EQ(nccl_tests_bytes(CollectiveType::kAllToAll, 1000001, 16), 1000000u);
  EXPECT_EQ(nccl_tests_bytes(CollectiveType::kAllGather, 1000001, 16), 1000001u);
  EXPECT_EQ(nccl_tests_bytes(CollectiveType::kAllToAll, 15, 16), 0u);
}

TEST(CollectiveSizes, ASizeBelowTheRankCountIsAnErrorNotAZeroByteRun) {
  EXPECT_EQ(microbenchmark_error(collectives(16, "reducescatter", "15")),
            "--size 15 B: REDUCE_SCATTER on 16 ranks needs a multiple of 16 B (NCCL splits its buffer into 16 equal "
            "parts of 1-byte elements); the nearest size that splits is 16 B");
  EXPECT_EQ(
      microbenchmark_error(collectives(16, "alltoall", "15", UnevenSize::kRoundDown), gen::OptionSpelling::kQuery),
      "gen:collectives: size 15 B: ALL_TO_ALL on 16 ranks needs a multiple of 16 B (NCCL splits its buffer into "
      "16 equal parts of 1-byte elements), and nccl-tests' rounding down leaves 0 B: give at least 16 B");
}

TEST(CollectiveSizes, SizesThatSplitAreTheSameTraceUnderEitherRule) {
  for (const char* coll : {"reducescatter", "alltoall", "allgather"}) {
    const Microbenchmark exact = make_microbenchmark(collectives(8, coll, "1000000"));
    const Microbenchmark rounded = make_microbenchmark(collectives(8, coll, "1000000", UnevenSize::kRoundDown));
    EXPECT_EQ(sizes(exact), std::vector<std::int64_t>{1000000}) << coll;
    EXPECT_EQ(sizes(rounded), sizes(exact)) << coll;
  }
  // One rank: every size splits.
  EXPECT_EQ(sizes(make_microbenchmark(collectives(1, "alltoall", "7"))), std::vector<std::int64_t>{7});
}

TEST(CollectiveSizes, AQueryTakesTheRuleItIsOpenedWith) {
  const std::string q = "gen:collectives?npus=16&coll=reducescatter&size=1000001";
  EXPECT_THROW(parse_microbenchmark_workload(q), InputError);
  EXPECT_EQ(sizes(parse_microbenchmark_workload(q, UnevenSize::kRoundDown)), std::vector<std::int64_t>{1000000});
}

}  // namespace
}  // namespace sim
