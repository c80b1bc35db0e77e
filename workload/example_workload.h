// The bundled example that `sim` runs with no arguments: one data-parallel
// training step on 8 ranks. Each rank runs a forward pass of 4 layers, then
// the backward pass; each layer's weight-gradient all-reduce (ring) overlaps
// the next layer's backward compute, and the step ends when all gradients are
// reduced. Built in memory, so the binary needs no files to show what it does.
#pragma once

#include <vector>

#include "workload/et/et_io.h"

namespace sim {

std::vector<EtTrace> example_workload(int ranks = 8);

// The topology the example runs on: configs/ring8.yml's content.
extern const char* const kExampleTopologyYaml;

}  // namespace sim
