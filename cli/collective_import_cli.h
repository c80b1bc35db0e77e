// `sim collective import msccl ALGO.xml -o PREFIX [--coll T] [--size S]`:
// the subcommand's options (system/producers/msccl_import.h does the work).
#pragma once

#include <CLI/CLI.hpp>

#include "system/producers/msccl_import.h"

namespace sim {

// Adds `import msccl` under `collective`; returns the `msccl` subcommand,
// which is set (`*cmd`) when the command line chose it.
CLI::App* add_collective_import(CLI::App& collective, MscclImportOptions& options);

}  // namespace sim
