// The workflow subcommands of `sim` (workflows/): sweep, sweep merge,
// compare, plot. main() adds them to its CLI::App and, after parsing, asks
// whether one of them was chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>

namespace sim {

struct WorkflowCommands;

std::shared_ptr<WorkflowCommands> add_workflow_commands(CLI::App& app);
// The exit code when a workflow subcommand was chosen and ran; nothing otherwise.
// Throws SimError for bad input like the other commands.
std::optional<int> run_workflow_commands(WorkflowCommands& commands);

}  // namespace sim
