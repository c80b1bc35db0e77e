// `sim workload gen transformer`: per-rank Chakra ETs of one Megatron-style
// training iteration (workload/generators/, docs/generators.md).
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "workload/generators/spec/training_spec.h"

namespace sim {

struct TransformerCommand {
  gen::TrainingOptions options;
  std::string prefix;
  unsigned threads = 0;
  CLI::App* app = nullptr;  // the subcommand, once added
};

// Adds `transformer` under `workload gen`.
void add_transformer_command(CLI::App& workload_gen, TransformerCommand& command);
// Runs it; returns the exit code, throws SimError for bad input.
int run_transformer_command(const TransformerCommand& command, std::ostream& out);

}  // namespace sim
