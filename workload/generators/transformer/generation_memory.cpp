#include "workload/generators/transformer/generation_memory.h"

#include <cstdio>

#include "core/checked_count.h"
#include "core/error.h"
#include "workload/generators/spec/quantity_limits.h"
#include "workload/loader/memory_budget.h"

namespace sim::gen {
namespace {

std::string mib(std::uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

std::uint64_t min_nodes_per_rank(const TrainingSpec& spec) {
  // check_quantity_limits (make_training_spec) has kept this under 2^32.
  return kMinNodesPerLayerAndMicrobatch * max_stage_layers(spec) * spec.microbatches;
}

void check_memory_for_generation(const TrainingSpec& spec, std::uint64_t ranks_held, std::uint64_t bytes_per_node,
                                 const std::string& what) {
  const MemoryAvailable avail = available_memory();
  if (avail.bytes == UINT64_MAX) return;
  const std::uint64_t per_rank = min_nodes_per_rank(spec);
  const CheckedCount need = CheckedCount(per_rank) * bytes_per_node * ranks_held;
  if (need.fits(avail.bytes)) return;
  const ModelConfig& m = spec.model;
  throw InputError(what + ": the workload is too large for the memory available: " + std::to_string(ranks_held) +
                   " rank(s) held at once of at least " + std::to_string(per_rank) + " nodes (" +
                   std::to_string(kMinNodesPerLayerAndMicrobatch) + " per layer and micro-batch x " +
                   std::to_string(max_stage_layers(spec)) + " layers on a stage x " +
                   std::to_string(spec.microbatches) + " micro-batches) at " + std::to_string(bytes_per_node) +
                   " B per node need at least " + (need.fits() ? mib(need.value()) : "2^64 B") + " but only " +
                   mib(avail.bytes) + " is available (" + avail.source + "): lower " + spec.option("global-batch") +
                   ", raise " + spec.option("micro-batch") + ", or use fewer layers (layers " +
                   std::to_string(m.layers) + " of " + m.source + ")");
}

}  // namespace sim::gen
