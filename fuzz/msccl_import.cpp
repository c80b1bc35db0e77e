// The MSCCL-IR importer as a user reaches it: XML -> parse_msccl_ir ->
// import_msccl (ids, peers, buffers, dependencies, cycles, send/receive
// pairing) -> et_algorithm_from_traces (what `sim collective import msccl`
// loads before writing, and what `--collective allreduce=algo.xml` runs) ->
// every op sized by EtProgram -> check_et_algorithm (`sim collective check
// algo.xml`: structure and data).
//
// An input that starts with '<' is all XML, read with the defaults (the
// collective the XML names, no --size, checked at 1 MiB), so the seed files
// and fuzz/regressions/msccl_import/*.xml replay as they are. Otherwise the
// first byte picks the options and the rest is the XML:
//   bits 0-2  --coll: 0 none, 1 allreduce, 2 allgather, 3 reducescatter,
//             4 alltoall, 5 reducescatter_block, 6 broadcast, 7 none
//   bit  3    --size given (written into comm_size), bits 4-5 pick it
//   bit  6    skip the checker
#include <memory>
#include <optional>
#include <stdexcept>

#include "fuzz/harness.h"
#include "system/registry/collective_checker.h"
#include "system/program/et_algorithm.h"
#include "system/producers/msccl_ir.h"
#include "system/producers/msccl_import.h"

namespace {

std::optional<sim::CollectiveType> coll_option(std::uint8_t bits) {
  using sim::CollectiveType;
  switch (bits & 7) {
    case 1: return CollectiveType::kAllReduce;
    case 2: return CollectiveType::kAllGather;
    case 3: return CollectiveType::kReduceScatter;
    case 4: return CollectiveType::kAllToAll;
    case 5: return CollectiveType::kReduceScatterBlock;
    case 6: return CollectiveType::kBroadcast;
    default: return std::nullopt;
  }
}

// Sizes that divide evenly, do not, and are large.
constexpr std::uint64_t kSizes[] = {1, 1000, 1u << 20, 3'000'000'007ull};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  if (size == 0) return 0;
  const bool plain = data[0] == '<';
  const std::uint8_t options = plain ? 0 : data[0];
  const std::string text = plain ? fuzz::text_of(data, size) : fuzz::text_of(data + 1, size - 1);
  const std::optional<CollectiveType> coll = coll_option(options);
  std::optional<std::uint64_t> written;
  if (options & 8) written = kSizes[(options >> 4) & 3];
  const std::uint64_t bytes = written ? *written : (1u << 20);
  fuzz::expect_clean("msccl_import", [&] {
    const MscclAlgo xml = parse_msccl_ir(text, "fuzz.xml");
    const MscclImport imp = import_msccl(xml, coll, written);
    if (imp.traces.empty()) throw std::logic_error("import accepted XML without ranks");
    auto algo = std::make_shared<const EtAlgorithm>(et_algorithm_from_traces(imp.traces, "fuzz.xml", coll));
    const EtProgram program(algo, bytes);
    for (std::uint32_t r = 0; r < program.group_size(); ++r) {
      for (std::uint64_t k = 0; k < program.op_count(r); ++k) program.op(r, static_cast<OpRef>(k));
    }
    // The data check at 16 MiB of bitsets at most: sim allows 1 GiB, which
    // under the sanitizers is seconds and most of the RSS limit per input
    // (the first long campaign slowed to 200 inputs/s at 1.9 GB).
    if (!(options & 64)) check_et_algorithm(algo, true, bytes, std::uint64_t{1} << 24);
  });
  return 0;
}
