// `sim collective synth`: a topology-aware algorithm (system/producers/synthesizer.h)
// written as per-rank Chakra ETs.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>

namespace sim {

struct SynthCommand {
  std::string collective, network, prefix, size_text = "1MiB";
  std::uint32_t chunks = 1;
  std::uint64_t seed = 1;
  CLI::App* app = nullptr;  // the subcommand, once added
};

// Adds `synth` under `collective`.
void add_synth_command(CLI::App& collective, SynthCommand& command);
// Runs it; returns the exit code, throws SimError for bad input.
int run_synth_command(const SynthCommand& command, std::ostream& out);

}  // namespace sim
