#include "synth_command.h"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "core/error.h"
#include "core/units.h"
#include "network/topology.h"
#include "system/program/collective_writer.h"
#include "system/producers/synthesizer.h"
#include "workload/et/rank_set_writer.h"

namespace sim {

void add_synth_command(CLI::App& collective, SynthCommand& c) {
  c.app = collective.add_subcommand(
      "synth", "synthesize a topology-aware algorithm (TACOS-style greedy matching) as per-rank Chakra ETs");
  c.app->add_option("--coll", c.collective, "collective: allgather, reducescatter or allreduce")->required();
  c.app->add_option("--network", c.network, "topology YAML the algorithm is made for (any form)")->required();
  c.app->add_option("--chunks", c.chunks, "chunks per NPU's share (default 1)")->check(CLI::Range(1, 1 << 16));
  c.app->add_option("--size", c.size_text,
                    "collective size link costs are priced at and comm_size is written for (default 1MiB); "
                    "runs rescale it through the chunk attributes");
  // CLI11 converts an unsigned 64-bit option with strtoull, which takes "-1"
  // and saturates past 2^64 - 1: three seeds written, one algorithm.
  c.app->add_option("--seed", c.seed, "tie-breaking seed (default 1): the same seed writes the same algorithm")
      ->check(CLI::Validator(
          [](const std::string& text) {
            std::uint64_t v = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, v);
            if (!text.empty() && ec == std::errc() && ptr == end) return std::string();
            return "expected a whole number 0.." + std::to_string(UINT64_MAX) + ", got '" + text + "'";
          },
          "SEED"));
  c.app->add_option("-o,--output", c.prefix, "output prefix")->required();
}

int run_synth_command(const SynthCommand& c, std::ostream& out) {
  SynthOptions o;
  if (!parse_collective_name(c.collective, o.type) || !synthesizer_supports(o.type)) {
    throw InputError("collective synth: --coll '" + c.collective +
                     "' is not a collective the synthesizer writes (allgather, reducescatter, allreduce)");
  }
  try {
    o.bytes = parse_size(c.size_text);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("collective synth: --size: ") + e.what());
  }
  o.chunks = c.chunks;
  o.seed = c.seed;
  prepare_rank_prefix(c.prefix);
  const Topology topology = load_topology(c.network);
  const auto start = std::chrono::steady_clock::now();
  const Synthesis s = synthesize(topology, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string removed = write_program_ets(*s.program, o.type, o.bytes, o.chunks, c.prefix);

  const std::uint32_t n = topology.npu_count();
  std::uint64_t nodes = 0;
  for (std::uint32_t r = 0; r < n; ++r) nodes = std::max(nodes, s.program->op_count(r));
  // busbw (nccl-tests) of the schedule at --size, against what an NPU can receive at all.
  const double factor = o.type == CollectiveType::kAllReduce ? 2.0 * (n - 1) / n : (n - 1.0) / n;
  const double algbw_bytes = o.type == CollectiveType::kAllGather ? static_cast<double>(o.bytes) * n : o.bytes;
  const double busbw = s.predicted > 0 ? algbw_bytes * factor / (to_ns(s.predicted)) : 0;  // GB/s
  const double bound = static_cast<double>(min_npu_ingress(topology)) / 1e9;
  char line[256];
  std::snprintf(line, sizeof line, "busbw %.2f GB/s, %.1f%% of the %.2f GB/s an NPU can receive", busbw,
                bound > 0 ? 100 * busbw / bound : 0.0, bound);
  out << "wrote " << n << (n == 1 ? " file " : " files ") << c.prefix << ".{0.." << n - 1
      << "}.et: synth " << collective_name(o.type) << " on " << topology.description() << ", " << o.chunks
      << (o.chunks == 1 ? " chunk" : " chunks") << " per share, seed " << o.seed;
  out << removed;
  out << "\n";
  out << s.channels << " channels, " << s.transfers << " chunk transfers, up to " << nodes << " nodes per rank\n";
  out << "schedule at " << format_bytes(o.bytes) << ": " << format_time(s.predicted) << " (" << line << ")\n";
  std::snprintf(line, sizeof line, "synthesis time: %.3f s (writing the ETs not included)\n", seconds);
  out << line;
  return kExitOk;
}

}  // namespace sim
