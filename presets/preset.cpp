#include "presets/preset.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/output_file.h"
#include "core/units.h"
#include "network/topology.h"
#include "presets/catalog.h"
#include "system/scenario/system_files.h"

namespace sim::presets {

namespace {

// "180GB/s" for a bandwidth written as `figure` times `factor` (the bounds
// of a free bandwidth), to 6 significant digits.
std::string scaled_bandwidth(const char* figure, double factor) {
  const double bps = static_cast<double>(parse_bandwidth(figure)) * factor / 1e9;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6gGB/s", bps);
  return buf;
}

// The largest divisor of `n` from 2 to `radix`; 0 when there is none.
std::uint32_t largest_divisor_up_to(std::uint32_t n, std::uint32_t radix) {
  for (std::uint32_t d = radix; d >= 2; --d) {
    if (n % d == 0) return d;
  }
  return 0;
}

// Splits `nodes` over the levels: each takes min(remaining, radix) groups of
// the level below. When the radix does not divide what is left, the groups are
// spread evenly over partly populated switches: the largest divisor of what is
// left that the radix allows (Selene's 384-node job as 24 leaves of 16 nodes
// each, not 19 full and one fifth-full). Every dimension must be regular, and
// on a non-blocking level only which pairs share a switch changes, i.e. which
// messages pay the upper level's latency.
std::vector<std::uint32_t> level_sizes(const Preset& p, std::uint32_t nodes) {
  std::vector<std::uint32_t> sizes;
  std::uint32_t left = nodes;
  std::uint32_t capacity = 1;
  for (std::size_t i = 0; i < p.levels.size(); ++i) {
    const NetworkLevel& level = p.levels[i];
    if (i + 1 == p.levels.size() && level.radix != 0 && left > level.radix) {
      throw InputError("--nodes " + std::to_string(nodes) + ": " + p.name + " has at most " +
                       std::to_string(capacity * level.radix) + " nodes (" + level.why_radix + ")");
    }
    std::uint32_t size = (level.radix == 0 || left <= level.radix) ? left : level.radix;
    if (left % size != 0) size = largest_divisor_up_to(left, level.radix);
    const std::uint32_t leaf = p.chosen.leaf_nodes;
    if (i == 0 && leaf != 0) {
      if (p.levels.size() == 1 && leaf != nodes) {
        throw InputError("--leaf-nodes " + std::to_string(leaf) + ": " + p.name + " has one network level (" +
                         level.name + "), which holds every node: give --leaf-nodes " + std::to_string(nodes) +
                         " or leave it out");
      }
      if (leaf > nodes || nodes % leaf != 0 || (level.radix != 0 && leaf > level.radix)) {
        throw InputError("--leaf-nodes " + std::to_string(leaf) + ": must divide --nodes " + std::to_string(nodes) +
                         (level.radix == 0 ? std::string()
                                           : " and be at most the " + level.name + " switch's " +
                                                 std::to_string(level.radix) + " (" + level.why_radix + ")"));
      }
      size = leaf;
    }
    if (size == 0) {
      // Name the nearest counts that split evenly, below and above.
      std::uint32_t below = nodes - capacity, above = nodes + capacity;
      while (below > 0 && largest_divisor_up_to(below / capacity, level.radix) == 0) below -= capacity;
      while (largest_divisor_up_to(above / capacity, level.radix) == 0) above += capacity;
      throw InputError("--nodes " + std::to_string(nodes) + ": " + p.name + " puts at most " +
                       std::to_string(level.radix) + " groups under one " + level.name + " switch (" +
                       level.why_radix + "), and " + std::to_string(left) +
                       " groups cannot be spread evenly over such switches (no divisor from 2 to " +
                       std::to_string(level.radix) + "); give e.g. " + std::to_string(below) + " or " +
                       std::to_string(above));
    }
    sizes.push_back(size);
    left /= size;
    capacity *= size;
  }
  if (left > 1) {
    throw InputError("--nodes " + std::to_string(nodes) + ": " + p.name + " has at most " + std::to_string(capacity) +
                     " nodes (" + (p.levels.empty() ? std::string("one node") : p.levels.back().why_radix) + ")");
  }
  return sizes;
}

std::string comment_block(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) out += line.empty() ? "#\n" : "# " + line + "\n";
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s;
}

// NVLS's parameters inside the all-reduce's algorithm string (docs/calibrate.md).
const std::string kNvlsEfficiencyKey = "collective.algorithms.all_reduce:nvls_efficiency";
// The per-call overhead in every NCCL collective's string.
const std::string kNcclOverheadKey = "collective.algorithms.*:overhead";
const std::string kNcclProxyKey = "collective.algorithms.*:proxy";
const std::string kNcclNetLatencyKey = "collective.algorithms.*:net_latency";
const std::string kNvlsCopyKey = "collective.algorithms.all_reduce:copy_bw";

// The value `key` has in `preset` after its fit (if it has one), else `dflt`.
Figure value_of(const Preset& p, const std::string& file, const std::string& key, Figure dflt) {
  for (const Preset::Fitted& f : p.fitted) {
    if (f.file == file && f.key == key) return Figure{f.value.c_str(), "fit (see the header)"};
  }
  return dflt;
}

struct Dimension {
  std::string name;
  std::uint32_t size;
  Figure bandwidth, latency;
  std::size_t level = 0;  // index in Preset::levels (dimensions >= 1)
};

// Figures are views of text that lives as long as the program: text made
// here (a latency summed over levels) is kept once in a pool.
const char* kept_text(const std::string& text) {
  static std::mutex lock;
  static std::set<std::string> pool;
  const std::lock_guard<std::mutex> hold(lock);
  return pool.insert(text).first->c_str();
}

std::vector<Dimension> dimensions(const Preset& p, std::uint32_t nodes) {
  std::vector<Dimension> dims;
  dims.push_back({"NVSwitch (NVLink domain of one node)", p.gpus_per_node, p.nvswitch_bandwidth, p.nvswitch_latency});
  const std::vector<std::uint32_t> sizes = level_sizes(p, nodes);
  // A level of one group per switch is no dimension, but a message that
  // crosses a level above it still crosses its switch (one node per leaf:
  // NIC, leaf, spine, leaf, NIC): its latency goes to the next level up.
  Time carried = 0;
  std::string carried_from;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const NetworkLevel& l = p.levels[i];
    if (sizes[i] < 2) {
      carried += parse_time(l.latency.value);
      carried_from += l.name + std::string(" ") + l.latency.value + " + ";
      continue;
    }
    dims.push_back({l.name, sizes[i], l.bandwidth, l.latency, i});
    if (carried > 0) {
      dims.back().latency = Figure{kept_text(format_ns(carried + parse_time(l.latency.value)) + "ns"),
                                   kept_text(carried_from + l.name + " " + l.latency.value +
                                             ": one group per switch below, so every message crosses both")};
      carried = 0;
      carried_from.clear();
    }
  }
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::string k = std::to_string(d);
    dims[d].bandwidth = value_of(p, "network", "bandwidth." + k, dims[d].bandwidth);
    dims[d].latency = value_of(p, "network", "latency." + k, dims[d].latency);
  }
  return dims;
}

std::string header(const Preset& p, std::uint32_t nodes, std::uint32_t npus, const std::string& what) {
  std::string h = "# " + what + " of preset '" + p.name + "', " + std::to_string(nodes) + " node" +
                  (nodes == 1 ? "" : "s") + " (" + std::to_string(npus) + " GPUs): " + p.summary + "\n" +
                  "# Written by `sim system gen " + p.name + " --nodes " + std::to_string(nodes) +
                  (p.chosen.leaf_nodes ? " --leaf-nodes " + std::to_string(p.chosen.leaf_nodes) : std::string()) +
                  (p.chosen.sharp ? " --sharp" : "") +
                  (p.chosen.attention.empty() ? "" : " --attention " + p.chosen.attention) +
                  "` (presets/, docs/presets.md).\n"
                  "# Each number says its source: spec sheet, NCCL constant, estimate, or fit.\n";
  if (!p.fit_note.empty()) h += "#\n" + comment_block(p.fit_note);
  return h + "\n";
}

std::string network_yaml(const Preset& p, std::uint32_t nodes, const std::vector<Dimension>& dims, std::uint32_t npus) {
  std::ostringstream o;
  o << header(p, nodes, npus, "Network");
  o << "# One Switch dimension per level (docs/network.md, ASTRA-sim form). GPU id is\n"
       "# (position in node, then node, ...), dimension 0 fastest. A level's switch\n"
       "# joins the GPUs that differ only in that coordinate: inside a node the\n"
       "# NVSwitch; across nodes, GPU i of every node shares a switch (one rail per\n"
       "# GPU position, as NCCL's rings use them). Bandwidth is each GPU's own,\n"
       "# per direction; a switch adds no delay or contention of its own.\n";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    o << "#   dimension " << d << ": " << dims[d].name << ", " << dims[d].size << " per group\n";
    if (d > 0 && d + 1 < dims.size() && p.levels[dims[d].level].radix > dims[d].size) {
      // level_sizes spread the nodes evenly over partly populated switches.
      std::uint32_t nodes_per_switch = 1;
      for (std::size_t k = 1; k <= d; ++k) nodes_per_switch *= dims[k].size;
      o << "#     partly populated: " << dims[d].size << " of the switch's " << p.levels[dims[d].level].radix
        << " ports down; the nodes spread evenly over " << nodes / nodes_per_switch << " switches per rail\n";
    }
    o << "#     bandwidth " << dims[d].bandwidth.value << ": " << dims[d].bandwidth.source << "\n"
      << "#     latency   " << dims[d].latency.value << " per link: " << dims[d].latency.source << "\n";
  }
  std::vector<std::string> topo, count, bw, lat, roles;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::size_t level = dims[d].level;
    roles.push_back(d == 0 ? "nvswitch" : level == 0 ? "leaf" : level == 1 ? "spine" : "core");
  }
  o << "# roles: dimension 0 is one host (a node) and its NVSwitch; the levels\n"
       "# above are the fabric's. Each GPU's link into the first of them is its\n"
       "# NIC (NCCL's network device; several NICs of one GPU, as on p5, are one\n"
       "# device of their summed speed).\n";
  for (const Dimension& d : dims) {
    topo.push_back("Switch");
    count.push_back(std::to_string(d.size));
    bw.push_back(d.bandwidth.value);
    lat.push_back(d.latency.value);
  }
  o << "name: " << p.name << " x" << nodes << "\n"
    << "topology: [" << join(topo) << "]\n"
    << "npus_count: [" << join(count) << "]\n"
    << "bandwidth: [" << join(bw) << "]\n"
    << "latency: [" << join(lat) << "]\n"
    << "roles: [" << join(roles) << "]\n";
  if (*p.gpu->nvswitch_reduces || p.chosen.sharp) {
    // The NVSwitch (dimension 0) reduces; the fabric's switches only when
    // the user says its SHARP runs (--sharp).
    std::vector<std::string> reduces(dims.size(), p.chosen.sharp ? "true" : "false");
    reduces[0] = *p.gpu->nvswitch_reduces ? "true" : "false";
    if (*p.gpu->nvswitch_reduces) o << "# dimension 0 reduces and multicasts (" << p.gpu->nvswitch_reduces << ")\n";
    if (p.chosen.sharp) {
      o << "# dimensions 1 and up reduce (--sharp: " << p.fabric_sharp.value << "; " << p.fabric_sharp.source
        << "): NCCL runs CollNet, and NVLS across nodes\n";
    }
    o << "in_network_reduction: [" << join(reduces) << "]\n";
  }
  return o.str();
}

std::string system_yaml(const Preset& p, std::uint32_t nodes, std::uint32_t npus) {
  const GpuSpec& g = *p.gpu;
  const Figure overhead = value_of(p, "system", "collective.endpoint_delay",
                                   {"0ns", "none by default; free for calibration (per-message overhead)"});
  std::ostringstream o;
  o << header(p, nodes, npus, "System");
  o << "# GPU: " << g.name << ". Dense tensor peaks per dtype, TFLOP/s:\n"
    << "#   bf16 " << g.bf16.value << " (" << g.bf16.source << ")\n"
    << "#   fp16 " << g.fp16.value << " (" << g.fp16.source << ")\n"
    << "#   fp8  " << g.fp8.value << " (" << g.fp8.source << ")\n"
    << "#   tf32 " << g.tf32.value << " (" << g.tf32.source << ")\n"
    << "#   fp64 " << g.fp64.value << " (" << g.fp64.source << ")\n"
    << "#   fp32 nodes (optimizer, norms) are priced at the tf32 tensor-core peak: the roofline of such\n"
    << "#   memory-bound ops is set by HBM bandwidth anyway.\n"
    << "# The roofline takes a COMP node's dtype's peak, bf16's for a node without one (docs/compute.md).\n"
    << "compute:\n"
    << "  peak_tflops: {bf16: " << g.bf16.value << ", fp16: " << g.fp16.value
    << (std::string(g.fp8.value) == "0" ? std::string() : std::string(", fp8: ") + g.fp8.value) << ", tf32: " << g.tf32.value
    << ", fp32: " << g.tf32.value << "}\n"
    << "  memory_bandwidth: " << g.hbm_bandwidth.value << "   # " << g.hbm_bandwidth.source << "\n";
  const bool flash_attention_2 = p.chosen.attention == kFlashAttention2;
  if (flash_attention_2) {
    o << "  # COMP nodes with a kernel shape are timed from kernels measured on one " << g.name << "\n"
      << "  # (GEMMs, memory-bound ops), attention at FlashAttention-2's published speeds, the kernel of\n"
      << "  # early 2024 (--attention flash-attention-2; configs/kernels/, docs/compute.md).\n"
      << "  kernels: " << g.flash_attention_2_kernels << "\n";
  } else if (*g.kernel_table) {
    o << "  # COMP nodes with a kernel shape (GEMM, attention, memory-bound ops) are timed from kernels\n"
      << "  # measured on one " << g.name << ", interpolated; the roofline above outside the table\n"
      << "  # (configs/kernels/, docs/compute.md).\n"
      << "  kernels: " << g.kernel_table << "\n";
  }
  const Figure& efficiency = flash_attention_2 ? p.compute_efficiency_flash_attention_2 : p.compute_efficiency;
  if (*efficiency.value) {
    o << "  # The fraction of that speed sustained in a long training run at scale (power capping,\n"
      << "  # communication kernels beside compute, stragglers); COMP nodes take time / efficiency.\n"
      << "  efficiency: " << efficiency.value << "   # " << efficiency.source << "\n";
  }
  o << "collective:\n"
    << "  chunks: 1\n"
    << "  endpoint_delay: " << overhead.value << "   # " << overhead.source << "\n";
  // NCCL's algorithms, chosen per size by NCCL's tuning model (docs/nccl.md),
  // over the whole group, on any number of nodes; all-to-all is NCCL's
  // grouped point-to-point sends (nccl_p2p.h). A large job's data-parallel replicas
  // still fold where NCCL's programs do not mirror (its tree; its rings
  // through leaf and spine): with stand-ins (docs/system.md).
  // The parameters calibration fits are written out, with their sources.
  const Figure call = value_of(p, "system", kNcclOverheadKey,
                               {"0us", "none in NCCL's model; free for calibration: kernel launch, framework"});
  std::string nccl = std::string("nccl:overhead=") + call.value;
  o << "  # overhead " << call.value << ": a fixed cost per call (" << call.source << ")\n";
  if (std::string(g.nccl_arch.value) != "sm90") {
    nccl += std::string(",arch=") + g.nccl_arch.value;
    o << "  # arch " << g.nccl_arch.value << ": " << g.nccl_arch.source << "\n";
  }
  if (*p.nccl_version.value) {
    nccl += std::string(",version=") + p.nccl_version.value;
    o << "  # version " << p.nccl_version.value << ": NCCL's release (" << p.nccl_version.source << ")\n";
  }
  if (*p.nccl_proxy.value) {
    const Figure proxy = value_of(p, "system", kNcclProxyKey, p.nccl_proxy);
    const Figure hop = value_of(p, "system", kNcclNetLatencyKey, p.nccl_net_latency);
    nccl += std::string(",proxy=") + proxy.value + ",net_latency=" + hop.value;
    o << "  # proxy " << proxy.value << ": NCCL's proxy thread per network message (" << proxy.source << ")\n"
      << "  # net_latency " << hop.value << ": the fabric's latency per network hop (" << hop.source << ")\n";
  } else if (nodes > 1) {
    // Across nodes the proxy is written out, none by default, so that
    // calibration can fit it (calibration.yml); the hop stays NCCL's table's,
    // which was measured on InfiniBand, per algorithm and protocol.
    const Figure proxy = value_of(p, "system", kNcclProxyKey,
                                  {"0us", "none in NCCL's model; free for calibration"});
    nccl += std::string(",proxy=") + proxy.value;
    o << "  # proxy " << proxy.value << ": NCCL's proxy thread per network message (" << proxy.source << ")\n";
  }
  if (*p.nccl_net_write_cost.value) {
    nccl += std::string(",net_write_cost=") + p.nccl_net_write_cost.value + ",net_rails=" + p.nccl_net_rails.value;
    o << "  # net_write_cost " << p.nccl_net_write_cost.value << ": the network device's cost per write beyond its bytes ("
      << p.nccl_net_write_cost.source << ")\n"
      << "  # net_rails " << p.nccl_net_rails.value << ": rails a GPU's network device stripes a message over ("
      << p.nccl_net_rails.source << ")\n";
  }
  std::string model = nccl;  // the collectives NCCL's algorithms run (not all-to-all: point-to-point sends)
  std::string p2p = nccl;    // all-to-all
  if (*p.nccl_buffsize.value) {
    model += std::string(",buffsize=") + p.nccl_buffsize.value;
    o << "  # buffsize " << p.nccl_buffsize.value << ": NCCL_BUFFSIZE (" << p.nccl_buffsize.source << ")\n";
  }
  if (*p.nccl_p2p_net_chunk.value) {
    p2p += std::string(",p2p_net_chunk=") + p.nccl_p2p_net_chunk.value;
    o << "  # p2p_net_chunk " << p.nccl_p2p_net_chunk.value << " (all-to-all): NCCL_P2P_NET_CHUNKSIZE ("
      << p.nccl_p2p_net_chunk.source << ")\n";
  }
  std::string nvls = model;  // the collectives NVLS may run
  if (*p.nccl_nvls_chunk.value) {
    nvls += std::string(",nvls_chunk=") + p.nccl_nvls_chunk.value + ",nvlstree_max_chunk=" + p.nccl_nvls_chunk.value;
    o << "  # nvls_chunk, nvlstree_max_chunk " << p.nccl_nvls_chunk.value << ": NCCL_NVLS_CHUNKSIZE and "
      << "NCCL_NVLSTREE_MAX_CHUNKSIZE (" << p.nccl_nvls_chunk.source << ")\n";
  }
  std::string all_reduce = nvls;
  std::string gather_scatter = nvls;  // all-gather and reduce-scatter
  if (*p.nccl_tuner.value) {
    all_reduce += std::string(",tuner=") + p.nccl_tuner.value;
    gather_scatter += std::string(",tuner=") + p.nccl_tuner.value;
    o << "  # tuner " << p.nccl_tuner.value << " (all-reduce, all-gather, reduce-scatter, where its tables have the "
      << "group's GPUs per node): " << p.nccl_tuner.source << "\n";
  }
  if (*g.nvswitch_reduces) {
    const Figure eff = value_of(p, "system", kNvlsEfficiencyKey,
                                {"1", "NCCL's model through 2.27 as is; NCCL 2.28's scales NVLS by 0.85 on Hopper"});
    all_reduce += std::string(",nvls_efficiency=") + eff.value;
    o << "  # nvls_efficiency " << eff.value << ": NVLS's bandwidth over NCCL's model (" << eff.source << ")\n";
    if (nodes > 1 && *g.nvls_copy_bandwidth.value) {
      const Figure copy = value_of(p, "system", kNvlsCopyKey, g.nvls_copy_bandwidth);
      all_reduce += std::string(",copy_bw=") + copy.value;
      o << "  # copy_bw " << copy.value << " (all-reduce): NVLS's copy warps, into and out of NCCL's NVLS buffer ("
        << copy.source << ")\n";
    }
  }
  o << "  algorithms:                # NCCL's choice per collective and size (docs/nccl.md)\n"
    << "    all_reduce: " << all_reduce << "\n"
    << "    all_gather: " << gather_scatter << "\n"
    << "    reduce_scatter: " << gather_scatter << "\n"
    << "    broadcast: " << model << "\n"
    << "    reduce: " << model << "\n"
    << "    all_to_all: " << p2p << "   # NCCL's all-to-all: grouped sends and receives, through the proxy across nodes\n"
    << "    send_recv: " << p2p << "   # COMM_SEND / COMM_RECV: NCCL's send and receive, the same point-to-point sends\n";
  if (*p.routing.value || *p.transport.value) o << "network:\n";
  if (*p.routing.value) {
    o << "  # routing " << p.routing.value << ": " << p.routing.source << ".\n"
      << "  # The levels of network.yml are Switch dimensions, one path per GPU pair, where it changes\n"
      << "  # nothing; it applies when network.yml is a FatTree (docs/network.md, \"Multi-path routing\").\n"
      << "  routing: " << p.routing.value << "\n";
  }
  if (*p.transport.value) {
    o << "  # transport " << p.transport.value << " on the packet-level backend (--backend ns3): " << p.transport.source
      << ".\n"
      << "  ns3:\n"
      << "    transport: " << p.transport.value << "\n";
    for (const Preset::TransportOption& t : p.transport_options) {
      o << "    " << t.key << ": " << t.figure.value << "   # " << t.figure.source << "\n";
    }
  }
  return o.str();
}

std::string calibration_yaml(const Preset& p, std::uint32_t nodes, const std::vector<FreeParameter>& free,
                             std::uint32_t npus) {
  std::ostringstream o;
  o << header(p, nodes, npus, "Free parameters");
  o << "# What `sim calibrate REFERENCE --system DIR` fits by default (docs/calibrate.md):\n"
       "# each a key of network.yml or system.yml, searched in log space between\n"
       "# min and max (a golden-section search per parameter, in this order).\n"
       "preset: " << p.name << "\n"
       "free:\n";
  for (const FreeParameter& f : free) {
    o << "  - name: " << f.name << "   # " << f.what << "\n"
      << "    file: " << f.file << "\n"
      << "    key: " << f.key << "\n"
      << "    min: " << f.min << "\n"
      << "    max: " << f.max << "\n";
  }
  return o.str();
}

}  // namespace

const std::vector<Preset>& all_presets() { return catalog(); }

const Preset& find_preset(const std::string& name) {
  std::vector<std::string> names;
  for (const Preset& p : all_presets()) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  throw InputError("unknown preset '" + name + "' (known: " + join(names) + "; `sim system list`)");
}

namespace {

// NVLS's copy warps across nodes: at most a copy at the HBM's rate (each byte
// read and written), at least a sixteenth of the HBM's rate.
FreeParameter copy_parameter(const GpuSpec& g) {
  return {"nvls_copy_bandwidth", "system", kNvlsCopyKey, scaled_bandwidth(g.hbm_bandwidth.value, 1.0 / 16),
          scaled_bandwidth(g.hbm_bandwidth.value, 0.5),
          "NVLS's copy warps into and out of NCCL's NVLS buffer, across nodes (at most half the HBM's rate)"};
}

}  // namespace

std::vector<FreeParameter> free_parameters(const Preset& p, std::uint32_t nodes) {
  const std::vector<Dimension> dims = dimensions(p, nodes);
  std::vector<FreeParameter> free;
  const bool nvls = *p.gpu->nvswitch_reduces;
  if (nvls) {
    // NCCL plans NVLS and its rings from its own per-link figure rounded to its
    // speed list, so a fitted NVLink rate only moves them in steps (docs/calibrate.md):
    // NVLS's efficiency is the continuous knob. NCCL must still prefer NVLS
    // for large all-reduces on the node (above 0.78 on a dgx-h100).
    free.push_back({"nvls_efficiency", "system", kNvlsEfficiencyKey, "0.8", "1",
                    "NVLS's achieved fraction of NCCL's modelled bandwidth (NCCL's version, channels)"});
  } else {
    free.push_back({"nvlink_bandwidth", "network", "bandwidth.0", scaled_bandwidth(p.gpu->nvlink_total.value, 0.4),
                    p.gpu->nvlink_total.value, "NVLink efficiency: what a GPU moves through the NVSwitch, per direction"});
    free.push_back({"nvlink_latency", "network", "latency.0", "50ns", "20us",
                    "per link of a GPU-NVSwitch-GPU step (NCCL's per-step protocol latency lands here)"});
  }
  if (*p.nccl_proxy.value) {
    // NCCL's structure is simulated (proxy, hops, the tuner's choice): what is
    // physically unknown is fitted, the published link rates stay. On one
    // node there is no proxy, hop or NVLS buffer copy to fit: the node's own
    // knob above stays, beside the per-call overhead.
    if (nodes > 1) free.clear();
    free.push_back({"nccl_overhead", "system", kNcclOverheadKey, "1us", "400us",
                    "a fixed cost per NCCL call (kernel launch, the plugin's and the framework's own work)"});
    if (nodes == 1) return free;
    free.push_back({"nccl_proxy", "system", kNcclProxyKey, "200ns", "5us",
                    "NCCL's proxy thread per network message it posts or completes"});
    free.push_back({"nccl_net_latency", "system", kNcclNetLatencyKey, "2us", "60us",
                    "the fabric's latency per network hop as NCCL sees it (NCCL's table: 14 us on InfiniBand)"});
    if (nvls) free.push_back(copy_parameter(*p.gpu));
    return free;
  }
  free.push_back({"nccl_overhead", "system", kNcclOverheadKey, "100ns", "100us",
                  "a fixed cost per NCCL call (kernel launch, a framework's own work around it)"});
  // Across nodes, what NCCL's model leaves out is fitted, not the NICs' and
  // switches' published rates: the proxy's time per network message. (The
  // hop stays NCCL's table's, measured on InfiniBand.)
  if (nodes > 1 && dims.size() > 1) {
    free.push_back({"nccl_proxy", "system", kNcclProxyKey, "200ns", "5us",
                    "NCCL's proxy thread per network message it posts or completes"});
    if (nvls && *p.gpu->nvls_copy_bandwidth.value) free.push_back(copy_parameter(*p.gpu));
  }
  if (!nvls) {
    free.push_back({"message_overhead", "system", "collective.endpoint_delay", "10ns", "50us",
                    "per message, at the sender before it enters the network (a kernel's per-step cost)"});
  }
  return free;
}

PresetFiles generate_preset(const Preset& p, std::uint32_t nodes) {
  if (nodes < 1) throw InputError("--nodes must be >= 1");
  const std::vector<Dimension> dims = dimensions(p, nodes);
  PresetFiles files;
  files.npus = 1;
  for (const Dimension& d : dims) {
    files.npus *= d.size;
    files.dims.push_back(d.size);
  }
  files.network_yaml = network_yaml(p, nodes, dims, files.npus);
  files.system_yaml = system_yaml(p, nodes, files.npus);
  files.calibration_yaml = calibration_yaml(p, nodes, free_parameters(p, nodes), files.npus);
  return files;
}

namespace {

// The names of the presets `has` holds for, comma-separated.
template <typename Has>
std::string presets_with(Has has) {
  std::string names;
  for (const Preset& q : all_presets()) {
    if (has(q)) names += (names.empty() ? "" : ", ") + q.name;
  }
  return names;
}

}  // namespace

PresetFiles generate_preset(const Preset& p, std::uint32_t nodes, const PresetChoices& choices) {
  if (choices.leaf_nodes != 0 && p.levels.empty()) {
    throw InputError("--leaf-nodes: " + p.name + " has no network level above its nodes");
  }
  if (choices.sharp && !*p.fabric_sharp.value) {
    throw InputError("--sharp: " + p.name + "'s fabric does not reduce in its switches" +
                     (*p.transport.value ? " (" + std::string(p.transport.source) + ")" : std::string()) +
                     "; the presets whose fabric can: " +
                     presets_with([](const Preset& q) { return *q.fabric_sharp.value != 0; }));
  }
  if (choices.sharp && nodes < 2) {
    throw InputError("--sharp: one node has no fabric to reduce in (give --nodes 2 or more)");
  }
  if (!choices.attention.empty()) {
    if (choices.attention != kFlashAttention2) {
      throw InputError("--attention must be " + std::string(kFlashAttention2) + ", not '" + choices.attention + "'");
    }
    if (!*p.gpu->flash_attention_2_kernels) {
      throw InputError("--attention " + choices.attention + ": no table of its speeds on " + p.name + "'s GPU (" +
                       p.gpu->name + "); the presets with one: " +
                       presets_with([](const Preset& q) { return *q.gpu->flash_attention_2_kernels != 0; }));
    }
    if (*p.compute_efficiency.value && !*p.compute_efficiency_flash_attention_2.value) {
      throw InputError("--attention " + choices.attention + ": " + p.name +
                       "'s compute.efficiency was fitted with its GPU's measured attention, and none with " +
                       choices.attention);
    }
  }
  Preset placed = p;
  placed.chosen = choices;
  return generate_preset(placed, nodes);
}

void write_preset_folder(const PresetFiles& files, const std::string& dir) {
  namespace fs = std::filesystem;
  // As `sim calibrate -o`: the folder's name, not ": cannot create the folder (Invalid argument)".
  if (dir.empty()) throw InputError("-o: an empty folder name");
  // Checked before anything is written: a preset that does not load is a bug.
  parse_topology(files.network_yaml, dir + "/network.yml");
  parse_system_text(files.system_yaml, dir + "/system.yml");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw InputError(dir + ": cannot create the folder (" + ec.message() + ")");
  OutputFile network(dir + "/network.yml"), system(dir + "/system.yml"), calibration(dir + "/calibration.yml");
  network.write(files.network_yaml);
  system.write(files.system_yaml);
  calibration.write(files.calibration_yaml);
  network.commit();
  system.commit();
  calibration.commit();
}

std::string describe_presets() {
  std::ostringstream o;
  for (const Preset& p : all_presets()) {
    char name[32];
    std::snprintf(name, sizeof name, "%-22s", p.name.c_str());
    o << name << p.summary << "\n";
  }
  return o.str();
}

}  // namespace sim::presets
