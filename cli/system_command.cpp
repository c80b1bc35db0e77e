#include "system_command.h"

#include "core/error.h"
#include "presets/preset.h"

namespace sim {

void add_system_command(CLI::App& app, SystemCommand& c) {
  CLI::App* system = app.add_subcommand("system", "presets of real systems: network and system files with sources");
  system->require_subcommand(1);
  c.list = system->add_subcommand("list", "list the presets");
  c.gen = system->add_subcommand(
      "gen", "write DIR/network.yml, DIR/system.yml and DIR/calibration.yml of a preset (docs/presets.md)");
  c.gen->add_option("name", c.name, "preset name (sim system list)")->required();
  c.gen->add_option("--nodes", c.nodes, "nodes of 8 GPUs (default: the preset's)")->check(CLI::Range(1, 1 << 16));
  c.gen->add_option("--leaf-nodes", c.leaf_nodes,
                    "nodes under each first-level switch (a placement; default: spread evenly, docs/presets.md)")
      ->check(CLI::Range(1, 1 << 16));
  c.gen->add_flag("--sharp", c.sharp,
                  "the fabric's switches reduce (InfiniBand SHARP): NCCL runs CollNet, and NVLS across nodes "
                  "(presets on InfiniBand only; docs/presets.md)");
  c.gen->add_option("--attention", c.attention,
                    "time attention at another kernel's speeds: flash-attention-2 (its published H100 speeds, the "
                    "kernel of early 2024; H100 presets, docs/presets.md)")
      ->check(CLI::IsMember({std::string(presets::kFlashAttention2)}));
  c.gen->add_option("-o,--output", c.output, "folder to write")->required();
}

bool system_command_given(const SystemCommand& c) { return (c.list && *c.list) || (c.gen && *c.gen); }

int run_system_command(const SystemCommand& c, std::ostream& out) {
  if (*c.list) {
    out << presets::describe_presets();
    return kExitOk;
  }
  const presets::Preset& p = presets::find_preset(c.name);
  const std::uint32_t nodes = c.nodes ? c.nodes : p.default_nodes;
  const presets::PresetFiles files = presets::generate_preset(p, nodes, {c.leaf_nodes, c.sharp, c.attention});
  presets::write_preset_folder(files, c.output);
  std::string dims;
  for (const std::uint32_t d : files.dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
  out << "wrote " << c.output << "/{network,system,calibration}.yml: " << p.name << ", " << nodes
      << (nodes == 1 ? " node, " : " nodes, ") << files.npus << " GPUs (dimensions " << dims << ")"
      << (c.sharp ? ", the fabric reducing (SHARP)" : "")
      << (c.attention.empty() ? "" : ", attention at " + c.attention + "'s speeds") << "\n"
      << "run: sim --workload ... --network " << c.output << "/network.yml --system " << c.output << "/system.yml\n";
  return kExitOk;
}

}  // namespace sim
