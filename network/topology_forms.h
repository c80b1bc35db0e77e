// The three YAML topology forms, each read into a Topology (internal to
// network/; users go through load_topology / parse_topology).
#pragma once

#include <string>
#include <vector>

#include "core/config_reader.h"
#include "network/topology.h"

namespace sim {

// `topology: [Ring, Switch]`, `npus_count`, `bandwidth`, `latency` lists.
Topology parse_astrasim_form(const ConfigReader& config, const YAML::Node& root);
// `shape: Torus`, `dims: [8, 8]` (or `npus: 64`), `bandwidth`, `latency`.
Topology parse_shape_form(const ConfigReader& config, const YAML::Node& root);
// `shape: FatTree`, `leaves`, `npus_per_leaf`, `spines` (or `k`), ...; called
// by parse_shape_form.
Topology parse_fat_tree_shape(const ConfigReader& config, const YAML::Node& root);
// `npus`, `switches`, `links: [{src, dst, bandwidth, latency, bidirectional}]`.
Topology parse_graph_form(const ConfigReader& config, const YAML::Node& root);

// "<label> (64 NPUs, 256 links, 50 GB/s, 500 ns)"; ranges when links differ.
std::string describe_topology(const std::string& label, std::uint32_t npus, std::uint32_t switches,
                              const std::vector<Link>& links);

}  // namespace sim
