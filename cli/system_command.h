// `sim system list` and `sim system gen NAME --nodes N -o DIR`: presets of
// real systems (presets/preset.h, docs/presets.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>

namespace sim {

struct SystemCommand {
  std::string name, output;
  std::uint32_t nodes = 0;  // 0: the preset's default
  std::uint32_t leaf_nodes = 0;  // 0: the preset spreads the nodes (docs/presets.md)
  bool sharp = false;            // the fabric's switches reduce (SHARP)
  std::string attention;         // --attention: another attention kernel ("" the measured one)
  CLI::App* list = nullptr;
  CLI::App* gen = nullptr;
};

// Adds `system` with `list` and `gen` under `app`.
void add_system_command(CLI::App& app, SystemCommand& command);
// Whether one of them was given.
bool system_command_given(const SystemCommand& command);
// Runs it; returns the exit code, throws SimError for bad input.
int run_system_command(const SystemCommand& command, std::ostream& out);

}  // namespace sim
