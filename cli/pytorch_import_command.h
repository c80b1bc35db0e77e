// `sim workload import pytorch`: PyTorch host execution traces (+ Kineto
// device traces) written as per-rank Chakra ETs (workload/pytorch/).
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace sim {

struct PytorchImportCommand {
  std::vector<std::string> host_et, kineto;
  std::string prefix;
  CLI::App* app = nullptr;  // the `pytorch` subcommand, once added
};

// Adds `import pytorch` under `workload`.
void add_pytorch_import_command(CLI::App& workload, PytorchImportCommand& command);
// Runs it; returns the exit code, throws SimError for bad input.
int run_pytorch_import_command(const PytorchImportCommand& command, std::ostream& out, std::ostream& err);

}  // namespace sim
