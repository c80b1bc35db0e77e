// Presets of real systems: `sim system list`, `sim system gen NAME --nodes N
// -o DIR`. A preset is a machine description (GPU, NVLink domain, NIC per
// GPU, the switch levels above) from which three files are written:
//
//   DIR/network.yml      ASTRA-sim form (docs/network.md), one Switch
//                        dimension per level: NVSwitch inside a node, then
//                        the network's levels (rail leaf, spine, core)
//   DIR/system.yml       compute roofline and collective choices (docs/system.md)
//   DIR/calibration.yml  the parameters `sim calibrate` may fit, with bounds
//
// Every number carries its source (presets/hardware.h) into the files'
// comments: spec sheet, NCCL constant, estimate, or a fit (the calibrated
// presets, presets/calibrated.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "presets/hardware.h"

namespace sim::presets {

// `--attention`'s one value: FlashAttention-2's published speeds.
inline constexpr const char* kFlashAttention2 = "flash-attention-2";

// What a user may choose beside the node count (`sim system gen`'s options),
// not properties of the machine.
struct PresetChoices {
  // A placement: the nodes under each first-level switch, so that a job's
  // groups can sit on whole switches; 0 spreads the nodes as level_sizes does.
  std::uint32_t leaf_nodes = 0;  // --leaf-nodes
  bool sharp = false;            // --sharp: the fabric's switches reduce
  // --attention: "" times attention from the GPU's measured kernel table,
  // "flash-attention-2" at FlashAttention-2's published speeds (the kernel of early 2024).
  std::string attention;
};

// One switch level above the NVLink domain. Its groups join `radix` of the
// groups below (nodes at the first level); 0 = every group that is left.
struct NetworkLevel {
  std::string name;          // "rail leaf", "spine", ...
  std::uint32_t radix = 0;
  Figure bandwidth;          // each GPU's share, per direction
  Figure latency;            // per link
  std::string why_radix;     // the source of the radix
};

// A parameter `sim calibrate` may fit: a key of one of the files, searched in
// log space between the bounds (presets write it into calibration.yml).
struct FreeParameter {
  std::string name;     // "nvlink_bandwidth"
  std::string file;     // "network" | "system"
  std::string key;      // key path, "bandwidth.0", "collective.endpoint_delay"
  std::string min, max; // with units
  std::string what;
};

struct Preset {
  std::string name, summary;
  const GpuSpec* gpu = nullptr;
  std::uint32_t gpus_per_node = 8;
  Figure nvswitch_bandwidth;   // per GPU per direction
  Figure nvswitch_latency;
  std::vector<NetworkLevel> levels;
  std::uint32_t default_nodes = 1;
  // compute.efficiency (written when set): cluster presets sustain less than
  // the one-GPU kernel measurements (docs/published-runs.md).
  Figure compute_efficiency{"", ""};
  // The same fitted with FlashAttention-2's speeds for attention, written
  // instead under `--attention flash-attention-2`.
  Figure compute_efficiency_flash_attention_2{"", ""};
  // NCCL as the platform runs it (docs/nccl.md), written into every `nccl`
  // choice when set: its release (the NVLS-tree chunk rule), the tuner
  // plugin the platform ships, and the costs NCCL's tuning model leaves out,
  // the proxy thread's per network message and the fabric's latency per hop.
  // A preset that sets `nccl_proxy` calibrates these (calibration.yml), not
  // the published link bandwidths.
  Figure nccl_version{"", ""};
  Figure nccl_tuner{"", ""};
  Figure nccl_proxy{"", ""};
  Figure nccl_net_latency{"", ""};
  // NCCL's NVLS chunk sizes where the platform sets them in the environment
  // (NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE, both this size),
  // written as `nvls_chunk` and `nvlstree_max_chunk` into the collectives NVLS runs.
  Figure nccl_nvls_chunk{"", ""};
  // NCCL_BUFFSIZE (Simple's buffer per connection) and NCCL_P2P_NET_CHUNKSIZE
  // (a point-to-point chunk across nodes) where the platform sets them:
  // `buffsize` into the collectives NCCL's algorithms run, `p2p_net_chunk`
  // into all-to-all.
  Figure nccl_buffsize{"", ""};
  Figure nccl_p2p_net_chunk{"", ""};
  // The network device's cost per RDMA write and the rails a GPU's device
  // stripes a message over (`net_write_cost`, `net_rails`; nccl/model/net_writes.h),
  // into every collective, where the platform's network plugin is known to stripe.
  Figure nccl_net_write_cost{"", ""};
  Figure nccl_net_rails{"", ""};
  // How the fabric spreads a GPU pair's traffic over equal-cost paths
  // (network.routing: ecmp-hash, spray, adaptive; docs/network.md), written
  // into system.yml's `network:` section when set.
  Figure routing{"", ""};
  // The fabric's transport on the packet-level backend (`ns3: {transport:
  // roce | ib}` in system.yml's `network:` section, applied only when ns3 runs).
  Figure transport{"", ""};
  // The transport's own options as the fabric's NICs run them (key, value and
  // source), written under `ns3:` after the transport.
  struct TransportOption {
    const char* key;
    Figure figure;
  };
  std::vector<TransportOption> transport_options;
  // Fitted presets: the files' values replaced (key path -> value, source).
  struct Fitted {
    std::string file, key, value;
  };
  std::vector<Fitted> fitted;
  std::string fit_note;  // what the fit was made on (comment lines)
  // The fabric's switches reduce and multicast (InfiniBand SHARP, which NCCL
  // runs as CollNet, and with NVLS as NVLS across nodes): its source, or ""
  // when they cannot. Offered, not assumed (a SHARP-enabled fabric needs its
  // aggregation manager and NCCL's SHARP plugin): `sim system gen --sharp`.
  Figure fabric_sharp{"", ""};
  // What the user chose (none in the catalog).
  PresetChoices chosen;
};

const std::vector<Preset>& all_presets();
// Throws InputError (exit 2) naming the known presets.
const Preset& find_preset(const std::string& name);

struct PresetFiles {
  std::string network_yaml, system_yaml, calibration_yaml;
  std::uint32_t npus = 0;
  std::vector<std::uint32_t> dims;  // NPUs per dimension
};

// The files of `preset` on `nodes` nodes. Throws InputError when `nodes`
// does not fit the preset's levels (it says what would).
PresetFiles generate_preset(const Preset& preset, std::uint32_t nodes);
// The same with the user's choices: `leaf_nodes` nodes under each
// first-level switch (it must divide `nodes` and fit the switch's radix),
// `sharp` the fabric's switches reducing, `attention` another attention
// kernel. An InputError says what a preset cannot take.
PresetFiles generate_preset(const Preset& preset, std::uint32_t nodes, const PresetChoices& choices);

// The free parameters written for `preset` on `nodes` nodes (a network
// level's keys only exist when its dimension does).
std::vector<FreeParameter> free_parameters(const Preset& preset, std::uint32_t nodes);

// Writes DIR/network.yml, DIR/system.yml, DIR/calibration.yml (creating DIR).
// The texts are checked by loading them (topology and system readers) before
// anything is written; each file is replaced atomically.
void write_preset_folder(const PresetFiles& files, const std::string& dir);

// `sim system list`: one line per preset.
std::string describe_presets();

}  // namespace sim::presets
