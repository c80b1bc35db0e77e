#include "system/registry/collective_tools.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include "core/checked_count.h"
#include "core/error.h"
#include "core/units.h"
#include "network/topology.h"
#include "system/registry/algorithm_registry.h"
#include "system/registry/collective_checker.h"
#include "system/program/collective_writer.h"
#include "workload/et/rank_set_writer.h"
#include "system/program/et_algorithm.h"
#include "system/registry/algorithm_source.h"
#include "workload/loader/memory_budget.h"

namespace sim {

namespace {

std::uint64_t size_option(const std::string& text) {
  std::uint64_t bytes = 0;
  try {
    bytes = parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--size: ") + e.what());
  }
  if (bytes == 0) throw InputError("--size must be > 0 (a zero-byte message cannot be matched by size)");
  return bytes;
}

CollectiveType collective_option(const std::string& text) {
  CollectiveType type;
  if (!parse_collective_name(text, type)) {
    throw InputError("--coll '" + text + "' is not a collective (allreduce, allgather, reducescatter, alltoall, ...)");
  }
  return type;
}

// Bytes per node while one rank's algorithm is built and written: its DAG
// (an op, its chunk range and its dependencies), its protobuf trace (a node
// with its name and attributes) and the encoded file. Measured as peak RSS
// (/usr/bin/time -v, 2026-12-05) over nodes per rank: a ring all-reduce on
// 8 ranks of 143,360 to 573,440 nodes, 1,465 B; a direct one on 64 ranks of
// 80,640 to 322,560, 1,564 B. Rounded down: a count is refused only when it
// clearly cannot fit. (All ranks used to be built before the first was
// written: 5.5 GB for 64 ranks of 80,640 nodes, now 140 MB.)
constexpr std::uint64_t kGenBytesPerNode = 1400;

// InputError naming --npus and --chunks when the largest rank's nodes cannot
// fit in the memory available (as the workload generators refuse theirs).
void check_generation_memory(const CollectiveProgram& program, std::uint32_t chunks) {
  const MemoryAvailable avail = available_memory();
  if (avail.bytes == UINT64_MAX) return;
  std::uint64_t most = 0;
  for (std::uint32_t r = 0; r < program.group_size(); ++r) most = std::max(most, program.op_count(r));
  const CheckedCount need = CheckedCount(most) * kGenBytesPerNode;
  if (need.fits(avail.bytes)) return;
  char need_text[64], have[64];
  std::snprintf(need_text, sizeof need_text, "%.0f MiB", need.fits() ? static_cast<double>(need.value()) / (1 << 20) : 1.7e13);
  std::snprintf(have, sizeof have, "%.0f MiB", static_cast<double>(avail.bytes) / (1 << 20));
  throw InputError("collective gen: --npus " + std::to_string(program.group_size()) + " and --chunks " + std::to_string(chunks) +
                   ": a rank of " +
                   std::to_string(most) + " nodes at " + std::to_string(kGenBytesPerNode) +
                   " B per node while it is built (its DAG, its trace and its file) needs at least " + need_text +
                   " but only " + have + " is available (" + avail.source + "): give fewer chunks or ranks");
}

}  // namespace

std::shared_ptr<const CollectiveProgram> native_program(const std::string& algorithm, CollectiveType type,
                                                        std::uint32_t npus, std::uint32_t& chunks, std::uint64_t bytes,
                                                        const std::vector<std::uint32_t>& dims) {
  if (!names_native_algorithm(algorithm)) {
    throw InputError("collective gen: unknown algorithm '" + algorithm + "' (" + native_algorithm_names() + ")");
  }
  const AlgorithmChoice choice = parse_algorithm_choice(algorithm, type);
  if (const auto it = choice.params.find("chunks"); it != choice.params.end()) chunks = static_cast<std::uint32_t>(it->second);
  if (choice.hierarchical) {
    std::vector<std::uint32_t> members(npus);
    for (std::uint32_t i = 0; i < npus; ++i) members[i] = i;
    return make_hierarchical_program(choice, type, bytes, chunks, members, dims, false, 0);
  }
  return make_native_program(*choice.native, choice.params, type, npus, bytes, chunks);
}

std::vector<EtTrace> native_algorithm_ets(const std::string& algorithm, CollectiveType type, std::uint32_t npus,
                                          std::uint32_t chunks, std::uint64_t bytes,
                                          const std::vector<std::uint32_t>& dims) {
  const auto program = native_program(algorithm, type, npus, chunks, bytes, dims);
  return program_ets(*program, normalized(type), bytes, chunks);
}

int generate_algorithm(const GenOptions& options, std::ostream& out) {
  if (options.npus == 0) throw InputError("collective gen: --npus must be >= 1");
  if (options.chunks == 0) throw InputError("collective gen: --chunks must be >= 1");
  prepare_rank_prefix(options.prefix);
  const CollectiveType type = collective_option(options.collective);
  const std::uint64_t bytes = size_option(options.size_text);
  std::vector<std::uint32_t> dims;
  if (!options.network.empty()) {
    // The hierarchical algorithm needs the topology's dimensions.
    const Topology topo = load_topology(options.network);
    if (topo.npu_count() != options.npus) {
      throw InputError("collective gen: --npus " + std::to_string(options.npus) + " but " + options.network + " has " +
                       std::to_string(topo.npu_count()) + " NPUs");
    }
    dims = topo.dims();
  }
  std::uint32_t chunks = options.chunks;
  const auto program = native_program(options.algorithm, type, options.npus, chunks, bytes, dims);
  check_generation_memory(*program, chunks);
  // One rank in memory at a time (the files are what program_ets() writes).
  RankSetWriter writer(options.prefix, program->group_size());
  std::string name;
  std::size_t nodes = 0;
  for (std::uint32_t r = 0; r < program->group_size(); ++r) {
    const EtTrace trace = program_et(*program, normalized(type), bytes, chunks, r);
    if (r == 0) {
      nodes = trace.nodes.size();
      for (const auto& a : trace.metadata.attr()) {
        if (a.name() == "algorithm_full") name = a.string_val();
      }
    }
    writer.write(r, trace);
  }
  writer.commit();
  const std::string removed = writer.removed_note();
  out << "wrote " << writer.ranks() << (writer.ranks() == 1 ? " file " : " files ") << options.prefix << ".{0.."
      << writer.ranks() - 1 << "}.et: " << name << " " << collective_name(normalized(type)) << " on " << options.npus
      << " NPUs, " << options.chunks << (options.chunks == 1 ? " chunk" : " chunks") << ", "
      << nodes << " nodes per rank, sized for " << format_bytes(bytes);
  out << removed;
  out << "\n";
  return kExitOk;
}

int check_algorithm(const CheckOptions& options, std::ostream& out) {
  const std::uint64_t bytes = size_option(options.size_text);
  std::optional<CollectiveType> expected;
  if (!options.collective.empty()) expected = collective_option(options.collective);
  auto algo = std::make_shared<const EtAlgorithm>(load_et_algorithm(options.prefix, expected));
  const bool type_known = expected.has_value() || algo->type_recorded;
  const AlgorithmCheck c = check_et_algorithm(algo, type_known, bytes);

  out << options.prefix << ": " << (type_known ? collective_name(algo->type) : "collective not recorded") << " on "
      << c.ranks << " ranks, " << c.ops << " ops, " << c.messages << " messages\n";
  out << "at " << format_bytes(bytes) << " ";
  if (c.min_rank_bytes == c.max_rank_bytes) out << "each rank sends " << c.max_rank_bytes << " B\n";
  else out << "ranks send " << c.min_rank_bytes << " to " << c.max_rank_bytes << " B\n";
  out << "structure: ok (every send meets a receive of its size, FIFO per peer pair and tag; every rank finishes)\n";
  out << c.data_note << "\n";
  out << "verdict: ok\n";
  return kExitOk;
}

}  // namespace sim
