// What a generated training iteration may ask for: every FLOP, byte,
// element and tag count the transformer generator writes into a node is an
// int64 in the trace, and a rank holds at most 2^32 - 1 nodes. Checked up
// front from the spec, in closed form (no graph is built), so that an
// impossible size is an error naming the options and model keys that make
// it, not a wrapped product reported as a result. The generator checks each
// value again as it writes it (transformer_graph.cpp).
#pragma once

#include <cstdint>

#include "workload/generators/spec/training_spec.h"

namespace sim::gen {

// Nodes every rank writes per layer and micro-batch, at least (10 forward,
// 14 backward: norms, GEMMs, attention, activation, residual adds): the
// low bound of a rank's nodes that quantity and memory checks use.
inline constexpr std::uint64_t kMinNodesPerLayerAndMicrobatch = 24;

// Layers on the stage that holds the most (all its chunks).
std::uint64_t max_stage_layers(const TrainingSpec& spec);

// InputError naming the options (as spelled: seq= or --seq) and the model's
// keys when a count would not fit. Called by make_training_spec.
void check_quantity_limits(const TrainingSpec& spec);

}  // namespace sim::gen
