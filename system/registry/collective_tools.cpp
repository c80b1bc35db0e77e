#include "system/registry/collective_tools.h"

#include <memory>
#include <optional>
#include <stdexcept>

#include "core/error.h"
#include "core/units.h"
#include "network/topology.h"
#include "system/registry/algorithm_registry.h"
#include "system/registry/collective_checker.h"
#include "system/program/collective_writer.h"
#include "workload/et/rank_set_writer.h"
#include "system/program/et_algorithm.h"
#include "system/registry/algorithm_source.h"

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
  const std::vector<EtTrace> traces =
      native_algorithm_ets(options.algorithm, type, options.npus, options.chunks, bytes, dims);
  const std::string removed = write_rank_ets(traces, options.prefix);
  std::string name;
  for (const auto& a : traces.front().metadata.attr()) {
    if (a.name() == "algorithm_full") name = a.string_val();
  }
  out << "wrote " << traces.size() << (traces.size() == 1 ? " file " : " files ") << options.prefix << ".{0.."
      << traces.size() - 1 << "}.et: " << name << " " << collective_name(normalized(type)) << " on " << options.npus
      << " NPUs, " << options.chunks << (options.chunks == 1 ? " chunk" : " chunks") << ", "
      << traces.front().nodes.size() << " nodes per rank, sized for " << format_bytes(bytes);
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
