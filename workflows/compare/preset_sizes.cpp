#include "workflows/compare/preset_sizes.h"

#include "core/error.h"

namespace sim::workflows {

namespace {

// A count as a row writes it: digits only, 1 to `max`; nothing otherwise.
std::optional<std::uint32_t> whole_count(const std::string& text, std::uint64_t max) {
  const std::optional<std::uint64_t> v = parse_byte_count(text);
  if (!v || *v == 0 || *v > max) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

}  // namespace

std::uint32_t row_nodes(const CurvePoint& p, const presets::Preset& preset) {
  const std::uint32_t per_node = preset.gpus_per_node;
  const std::string* nodes_text = column_value(p, "nodes");
  const auto ranks_it = p.labels.find("npus");
  const std::string* ranks_text = ranks_it == p.labels.end() ? nullptr : &ranks_it->second;
  std::optional<std::uint32_t> nodes;
  if (nodes_text) {
    nodes = whole_count(*nodes_text, kMaxPresetNodes);
    if (!nodes) {
      throw InputError(p.where + ": nodes '" + *nodes_text + "': expected a whole number of nodes from 1 to " +
                       std::to_string(kMaxPresetNodes));
    }
  }
  if (ranks_text) {
    const std::optional<std::uint32_t> ranks =
        whole_count(*ranks_text, static_cast<std::uint64_t>(kMaxPresetNodes) * per_node);
    if (!ranks) {
      throw InputError(p.where + ": ranks '" + *ranks_text + "': expected a whole number of ranks from 1 to " +
                       std::to_string(static_cast<std::uint64_t>(kMaxPresetNodes) * per_node));
    }
    if (*ranks % per_node != 0) {
      throw InputError(p.where + ": ranks " + *ranks_text + " is not a whole number of " + preset.name + " nodes (" +
                       std::to_string(per_node) + " GPUs each)");
    }
    // The log's own hosts, when it names several: 16 ranks on 4 hosts were
    // simulated as 2 nodes of 8 GPUs, another machine, without a word. (One
    // host name for every rank may be containers named alike: not a count.)
    if (p.hosts > 1 && std::uint64_t{p.hosts} * per_node != *ranks) {
      throw InputError(p.where + ": the '# Rank' lines put " + *ranks_text + " ranks on " + std::to_string(p.hosts) +
                       " hosts, but " + preset.name + " runs " + std::to_string(per_node) +
                       " GPUs per node: the curve was measured on another machine");
    }
    if (p.hosts > 1 && p.most_on_a_host > per_node) {
      throw InputError(p.where + ": the '# Rank' lines put " + std::to_string(p.most_on_a_host) +
                       " ranks on one host, but a " + preset.name + " node has " + std::to_string(per_node) +
                       " GPUs: the curve was measured on another machine");
    }
    if (nodes && *nodes * per_node != *ranks) {
      throw InputError(p.where + ": nodes " + *nodes_text + " and ranks " + *ranks_text + " disagree: a " +
                       preset.name + " node has " + std::to_string(per_node) + " GPUs");
    }
    if (!nodes) nodes = *ranks / per_node;
  }
  if (!nodes) {
    throw InputError(p.where +
                     ": the row says no node count (a 'nodes' or 'ranks' column, nccl-tests' '# Rank' lines) "
                     "to build preset " +
                     preset.name + " at");
  }
  return *nodes;
}

const SizedSystem& PresetSizes::at(std::uint32_t nodes, const std::string& where) {
  if (const auto it = sizes_.find(nodes); it != sizes_.end()) return it->second;
  presets::PresetFiles files;
  try {
    files = presets::generate_preset(preset_, nodes);
  } catch (const InputError& e) {
    throw InputError(where + ": " + std::to_string(nodes) + " nodes of preset " + preset_.name + ": " + e.what());
  }
  SizedSystem s;
  s.nodes = nodes;
  s.npus = files.npus;
  s.network_text = std::move(files.network_yaml);
  s.system_text = std::move(files.system_yaml);
  s.calibration_text = std::move(files.calibration_yaml);
  const std::string at = preset_.name + " --nodes " + std::to_string(nodes) + ": ";
  s.network_source = at + "network.yml";
  s.system_source = at + "system.yml";
  s.calibration_source = at + "calibration.yml";
  return sizes_.emplace(nodes, std::move(s)).first->second;
}

}  // namespace sim::workflows
