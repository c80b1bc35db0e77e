#include "system/collectives/nccl/nccl_algorithm.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "core/error.h"
#include "core/units.h"
#include "system/collectives/nccl/program_shapes.h"
#include "system/collectives/nccl/programs/nccl_p2p.h"
#include "system/collectives/nccl/model/nccl_protocol.h"
#include "system/collectives/nccl/model/tuner_regions.h"
#include "system/collectives/one_member.h"

namespace sim::nccl {

namespace {

Time us(double v) { return static_cast<Time>(std::llround(v * 1e6)); }

// nvls_efficiency is kept in millionths.
constexpr double kMillionths = 1e6;

// The largest time a parameter may give (overhead, latencies, costs): 1 s.
constexpr Time kMaxParamTime = 1000 * kMillisecond;

// `algo=collnet`: whichever CollNet NCCL's model prefers.
constexpr std::uint64_t kCollNetEither = 99;

bool is_collnet(Algo a) { return a == Algo::kCollNetDirect || a == Algo::kCollNetChain; }

bool forced_is(std::uint64_t forced, Algo a) {
  return forced == static_cast<std::uint64_t>(a) || (forced == kCollNetEither && is_collnet(a));
}

bool modelled(Algo a, CollectiveType type, int nodes) {
  switch (a) {
    case Algo::kRing: return true;  // every collective NCCL has: all-reduce, all-gather, reduce-scatter, broadcast, reduce
    case Algo::kTree: return type == CollectiveType::kAllReduce;
    case Algo::kNvls:
      // All-reduce on one node, and across nodes with SHARP (NCCL's NVLS with
      // CollNet); all-gather and reduce-scatter on one node (NCCL 2.19's
      // enqueue.cc: "we only support single-node NVLS allgather and reducescatter").
      return type == CollectiveType::kAllReduce ||
             ((type == CollectiveType::kAllGather || type == CollectiveType::kReduceScatter) && nodes == 1);
    case Algo::kNvlsTree: return type == CollectiveType::kAllReduce && nodes > 1;
    case Algo::kCollNetChain:
    case Algo::kCollNetDirect: return type == CollectiveType::kAllReduce && nodes > 1;
  }
  return false;
}

// Why NCCL on `arch` at release `version` has no `a` (empty: it has): NVLS
// needs Hopper (sm90) and NCCL 2.17, NVLS-tree 2.18 (their releases).
std::string why_absent(Algo a, Arch arch, int version) {
  if ((a == Algo::kNvls || a == Algo::kNvlsTree) && arch != Arch::kHopper) {
    return std::string("NCCL runs ") + algo_name(a) + " on sm90 (Hopper) and later only, not on arch=" +
           (arch == Arch::kVolta ? "sm70" : "sm80");
  }
  if (a == Algo::kNvls && version < 217) return "NVLS came with NCCL 2.17; version=2." + std::to_string(version - 200) + " has none";
  if (a == Algo::kNvlsTree && version < 218) {
    return "NVLS-tree came with NCCL 2.18; version=2." + std::to_string(version - 200) + " has none";
  }
  return "";
}

Arch arch_of(const Params& params) {
  const auto it = params.find("arch");
  if (it == params.end()) return Arch::kHopper;
  return it->second == 70 ? Arch::kVolta : it->second == 80 ? Arch::kAmpere : Arch::kHopper;
}

// NCCL's release the parameters name (`version`), or the default's.
int version_of(const Params& params) {
  const auto it = params.find("version");
  return it == params.end() ? kDefaultVersion : static_cast<int>(it->second);
}

}  // namespace

const std::vector<std::string>& param_names() {
  static const std::vector<std::string> kNames = {
      "algo",  "proto",   "channels", "arch",        "overhead",   "nvls_efficiency",   "nvls_latency",
      "proxy", "version", "tuner",    "net_latency", "nvls_chunk", "nvlstree_max_chunk", "plugin_latency",
      "buffsize", "p2p_net_chunk", "net_write_cost", "net_rails", "min_stripe", "copy_bw"};
  return kNames;
}

const std::vector<CollectiveType>& supported_types() {
  static const std::vector<CollectiveType> kTypes = {CollectiveType::kAllReduce, CollectiveType::kAllGather,
                                                     CollectiveType::kReduceScatter, CollectiveType::kBroadcast,
                                                     CollectiveType::kReduce, CollectiveType::kAllToAll};
  return kTypes;
}

std::uint64_t param_value(const std::string& key, const std::string& value) {
  if (key == "algo") {
    for (int a = 0; a < kAlgos; ++a) {
      if (value == algo_name(static_cast<Algo>(a))) return static_cast<std::uint64_t>(a);
    }
    if (value == "collnet") return kCollNetEither;
    throw InputError("nccl: algo must be ring, tree, nvls, nvlstree or collnet (collnetdirect, collnetchain), not '" +
                     value + "'");
  }
  if (key == "proto") {
    for (int p = 0; p < kProtos; ++p) {
      if (value == proto_name(static_cast<Proto>(p))) return static_cast<std::uint64_t>(p);
    }
    throw InputError("nccl: proto must be ll, ll128 or simple, not '" + value + "'");
  }
  if (key == "arch") {
    if (value == "sm70") return 70;
    if (value == "sm80") return 80;
    if (value == "sm90") return 90;
    throw InputError("nccl: arch must be sm70 (Volta), sm80 (Ampere) or sm90 (Hopper), not '" + value + "'");
  }
  if (key == "channels" || key == "net_rails") {  // NCCL's channels; the rails of one GPU's network device
    std::uint64_t v = 0;
    for (const char ch : value) {
      if (ch < '0' || ch > '9' || v > 1000) throw InputError("nccl: " + key + " must be an integer 1..64, not '" + value + "'");
      v = v * 10 + static_cast<std::uint64_t>(ch - '0');
    }
    if (value.empty() || v < 1 || v > 64) throw InputError("nccl: " + key + " must be an integer 1..64, not '" + value + "'");
    return v;
  }
  if (key == "nvls_efficiency") {  // a fraction in (0, 1], kept in millionths
    // Decimal digits only (strtod also reads hex floats, "inf" and "nan").
    const bool decimal = !value.empty() && value.find_first_not_of("0123456789.eE+-") == std::string::npos;
    char* end = nullptr;
    const double v = decimal ? std::strtod(value.c_str(), &end) : 0;
    if (!decimal || end != value.c_str() + value.size() || !(v > 0) || v > 1) {
      throw InputError("nccl: nvls_efficiency must be a number in (0, 1], e.g. 0.85, not '" + value + "'");
    }
    if (std::llround(v * kMillionths) < 1) {
      throw InputError("nccl: nvls_efficiency " + value + " is below the model's resolution, 1e-6 (it is kept in millionths)");
    }
    return static_cast<std::uint64_t>(std::llround(v * kMillionths));
  }
  if (key == "tuner") return static_cast<std::uint64_t>(tuner_plugin(value));
  if (key == "version") {  // 2.N or 2.N.M, kept as 100 x 2 + N (2.19 -> 219)
    std::size_t i = 0;
    std::uint64_t minor = 0;
    const bool two = value.size() >= 3 && value[0] == '2' && value[1] == '.';
    for (i = 2; two && i < value.size() && value[i] >= '0' && value[i] <= '9' && minor < 100; ++i) {
      minor = minor * 10 + static_cast<std::uint64_t>(value[i] - '0');
    }
    bool ok = two && i > 2 && minor < 100 && (value[2] != '0' || i == 3);  // no leading zero: 2.017
    if (ok && i < value.size()) {  // a patch level: .M
      ok = value[i] == '.' && i + 1 < value.size();
      for (std::size_t k = i + 1; ok && k < value.size(); ++k) ok = value[k] >= '0' && value[k] <= '9';
    }
    if (!ok) throw InputError("nccl: version must be NCCL's release as 2.N or 2.N.M, e.g. 2.21 or 2.27.7, not '" + value + "'");
    // A release outside the model's would run the rules of another one without a word.
    if (200 + minor < kOldestVersion || 200 + minor > kNewestVersion) {
      throw InputError("nccl: version " + value + " is not a release the model knows: give 2." +
                       std::to_string(kOldestVersion - 200) + " to 2." + std::to_string(kNewestVersion - 200) +
                       " (2.N or 2.N.M; docs/nccl.md)");
    }
    return 200 + minor;
  }
  if (key == "nvls_chunk" || key == "nvlstree_max_chunk" || key == "buffsize" || key == "p2p_net_chunk" ||
      key == "min_stripe") {  // a size, kept in bytes
    std::uint64_t v = 0;
    try {
      if (!value.empty() && value.back() == 'B') v = parse_size(value);
    } catch (const std::exception&) {
      v = 0;
    }
    if (v == 0 || v > (std::uint64_t{1} << 30)) {
      throw InputError("nccl: " + key + " must be a size with its unit, 1B..1GiB, e.g. 512KiB, not '" + value + "'");
    }
    // NCCL cuts its Simple buffer into NCCL_STEPS slots, a ring step 4 of them.
    if (key == "buffsize" && v % (2 * kNcclSteps) != 0) {
      throw InputError("nccl: buffsize (NCCL_BUFFSIZE) must be a multiple of 16 bytes, e.g. 8MiB, not '" + value + "'");
    }
    return v;
  }
  if (key == "copy_bw") {  // a bandwidth, kept in bytes/s
    BytesPerSecond v = 0;
    try {
      if (!value.empty() && value.back() == 's') v = parse_bandwidth(value);
    } catch (const std::exception&) {
      v = 0;
    }
    if (v <= 0) throw InputError("nccl: " + key + " must be a bandwidth with its unit, above 0, e.g. 600GB/s, not '" + value + "'");
    return static_cast<std::uint64_t>(v);
  }
  if (key == "nvls_latency" || key == "overhead" || key == "proxy" || key == "net_latency" ||
      key == "plugin_latency" || key == "net_write_cost") {  // a time, kept in ps
    Time t = -1;
    try {
      if (!value.empty() && value.back() == 's') t = parse_time(value);
    } catch (const std::exception&) {
      t = -1;
    }
    if (t < 0) {
      throw InputError("nccl: " + key + " must be a time with its unit, at least 0, e.g. 23us, not '" + value + "'");
    }
    // Latencies and costs add up along a call's path and over its messages:
    // beyond a second each, sums could pass the largest time (2^63 ps, 106
    // days) and wrap.
    if (t > kMaxParamTime) throw InputError("nccl: " + key + " must be at most 1 s, not '" + value + "'");
    // (A send's proxy time is held in whole nanoseconds, 32 bits, CollectiveOp::proxy_ns: 1 s fits.)
    static_assert(kMaxParamTime <= Time{0xffffffff} * kNanosecond);
    return static_cast<std::uint64_t>(t);
  }
  throw InputError("nccl: unknown parameter '" + key + "'");
}

void check_keys(CollectiveType type, const Params& params) {
  if (type == CollectiveType::kAllToAll) {
    for (const char* key : {"algo", "proto", "tuner", "nvls_efficiency", "nvls_latency", "nvls_chunk",
                            "nvlstree_max_chunk", "plugin_latency", "buffsize", "copy_bw"}) {
      if (params.count(key)) {
        throw InputError(std::string("nccl: ") + key + " does not apply to ALL_TO_ALL: NCCL runs it as point-to-point "
                         "sends (keys: channels, overhead, proxy, net_latency, p2p_net_chunk, net_write_cost, net_rails, "
                         "min_stripe, arch, version; docs/nccl.md)");
      }
    }
  } else if (params.count("p2p_net_chunk")) {
    throw InputError("nccl: p2p_net_chunk (NCCL_P2P_NET_CHUNKSIZE) applies to ALL_TO_ALL only, NCCL's point-to-point "
                     "sends; " + std::string(collective_name(type)) + " runs NCCL's collective algorithms (docs/nccl.md)");
  }
  // A forced algorithm no group could run (on this GPU, this release, for
  // this collective) is refused when read, not when a group of more than one
  // rank first runs it: a choice that passes a one-GPU run failed at scale.
  if (const auto forced = params.find("algo"); forced != params.end() && type != CollectiveType::kAllToAll) {
    const Algo a = forced->second == kCollNetEither ? Algo::kCollNetChain : static_cast<Algo>(forced->second);
    const std::string named = forced->second == kCollNetEither ? "collnet" : algo_name(a);  // as the user wrote it
    if (const std::string why = why_absent(a, arch_of(params), version_of(params)); !why.empty()) {
      throw InputError("nccl:algo=" + named + ": " + why);
    }
    if (!modelled(a, type, 1) && !modelled(a, type, 2)) {
      throw InputError("nccl:algo=" + named + " for " + collective_name(type) +
                       " is not simulated on any group (docs/nccl.md)");
    }
  }
}

namespace {

// The network device's writes (net_writes.h): none unless net_write_cost is given.
NetWrites net_writes(const Params& params, double nic_gbs) {
  NetWrites w;
  const auto cost = params.find("net_write_cost");
  if (cost == params.end()) return w;  // inactive: the programs' shapes need not tell NICs apart
  w.cost = static_cast<Time>(cost->second);
  if (const auto it = params.find("net_rails"); it != params.end()) w.rails = static_cast<std::uint32_t>(it->second);
  if (const auto it = params.find("min_stripe"); it != params.end()) w.min_stripe = it->second;
  w.device_rate = static_cast<BytesPerSecond>(std::llround(nic_gbs * 1e9));
  return w;
}

// NCCL's ceiling on one channel's bandwidth (GB/s) for the plan's algorithm
// and protocol (tuning.cc: perChMaxRingLL128Bws, perChMaxTreeLL128Bws,
// perChMaxTreeBws, by architecture and node count): what one CTA moves with
// that protocol. 0 where NCCL sets none (ring Simple, LL).
double channel_ceiling(const Plan& pl, int tables) {
  const TuningConstants& k = tuning_constants(tables);
  const int cc = static_cast<int>(pl.input.arch);
  const int index2 = pl.input.nodes <= 2 ? std::max(pl.input.nodes, 1) - 1 : 2;
  if (pl.algo == Algo::kRing && pl.proto == Proto::kLL128) return k.per_ch_max_ring_ll128[cc][index2];
  if (pl.algo == Algo::kTree && pl.proto == Proto::kLL128) return k.per_ch_max_tree_ll128[cc][index2];
  if (pl.algo == Algo::kTree && pl.proto == Proto::kSimple) return k.per_ch_max_tree[cc][index2];
  return 0;
}

// The release whose tuning tables NCCL's choice and latencies take: the one
// named, else 2.20's (nccl_constants.h, kDefaultTablesVersion).
int tables_version_of(const Params& params) {
  return params.count("version") ? version_of(params) : kDefaultTablesVersion;
}

}  // namespace

Plan plan(CollectiveType type, std::uint64_t bytes, const Params& params, const AlgorithmContext& ctx) {
  Plan pl;
  if (type == CollectiveType::kReduceScatterBlock) type = CollectiveType::kReduceScatter;
  check_keys(type, params);
  const Arch arch = arch_of(params);
  pl.system = describe_system(ctx, arch);
  const int version = version_of(params);
  const int tables = tables_version_of(params);
  TuneInput& in = pl.input;
  in.version = tables;
  in.type = type;
  in.ranks = pl.system.ranks;
  in.nodes = pl.system.nodes;
  in.arch = arch;
  in.collnet = pl.system.collnet;
  in.graphs = pl.system.graphs;
  // The network plugin's latency (ncclNetProperties_t.latency): NCCL's search
  // copies it into every graph that crosses the network (graph->latencyInter),
  // and its model adds it to each network hop, twice for Simple (the flush).
  // It moves NCCL's choice only; the simulated hops take net_latency.
  if (const auto it = params.find("plugin_latency"); it != params.end() && in.nodes > 1) {
    for (Graph& g : in.graphs) g.latency_inter = static_cast<double>(it->second) / 1e6;  // ps -> us
  }
  pl.table = tune(in);
  // NVLS's achieved bandwidth and latency where they differ from NCCL's
  // model through 2.27: NCCL 2.28's model scales NVLS bandwidth by a measured
  // efficiency (nvlsEfficiency, Hopper 0.85), and the per-call latency of its
  // kernels is hwLat[NVLINK][NVLS] (23 us, 25 from 2.21 on); both free for
  // calibration (docs/nccl.md).
  // They change NCCL's choice as they would NCCL's own table.
  const int simple = static_cast<int>(Proto::kSimple);
  if (const auto it = params.find("nvls_efficiency"); it != params.end()) {
    for (const Algo a : {Algo::kNvls, Algo::kNvlsTree}) {
      pl.table.bandwidth[static_cast<int>(a)][simple] *= static_cast<double>(it->second) / kMillionths;
    }
  }
  double nvls_hop = hop_latency(Hw::kNvlink, Algo::kNvls, Proto::kSimple, tables);
  if (const auto it = params.find("nvls_latency"); it != params.end()) {
    const double lat = static_cast<double>(it->second) / 1e6;  // ps -> us
    for (const Algo a : {Algo::kNvls, Algo::kNvlsTree}) {
      pl.table.latency[static_cast<int>(a)][simple] += lat - hop_latency(Hw::kNvlink, a, Proto::kSimple, tables);
    }
    nvls_hop = lat;
  }
  // A fixed cost per call that NCCL's model leaves out (the kernel's launch, a
  // framework's own work around it): on every algorithm's latency, so NCCL's
  // choice is the same, and before the first step.
  const auto overhead = params.find("overhead");
  const Time extra = overhead == params.end() ? 0 : static_cast<Time>(overhead->second);
  for (auto& row : pl.table.latency) {
    for (double& l : row) l += static_cast<double>(extra) / 1e6;
  }

  const auto exists = [&](Algo a) { return why_absent(a, arch, version); };
  std::array<bool, kAlgos> allowed{};
  const auto forced_algo = params.find("algo");
  for (int a = 0; a < kAlgos; ++a) {
    allowed[a] = modelled(static_cast<Algo>(a), type, in.nodes) && exists(static_cast<Algo>(a)).empty() &&
                 (forced_algo == params.end() || forced_is(forced_algo->second, static_cast<Algo>(a)));
  }
  if (forced_algo != params.end()) {
    const auto a = forced_algo->second == kCollNetEither ? Algo::kCollNetChain : static_cast<Algo>(forced_algo->second);
    const std::string named = forced_algo->second == kCollNetEither ? "collnet" : algo_name(a);  // as the user wrote it
    if (const std::string why = exists(a); !why.empty()) throw InputError("nccl:algo=" + named + ": " + why);
    if (!modelled(a, type, in.nodes)) {
      throw InputError("nccl:algo=" + named + " for " + collective_name(type) + " on " +
                       std::to_string(in.nodes) + (in.nodes == 1 ? " node" : " nodes") +
                       " is not simulated (modelled: ring for ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE; tree for "
                       "ALL_REDUCE; nvls for ALL_REDUCE (across nodes with SHARP), ALL_GATHER and REDUCE_SCATTER inside one node; "
                       "nvlstree, collnetdirect and collnetchain for ALL_REDUCE across nodes); docs/nccl.md");
    }
    if ((is_collnet(a) && !pl.system.collnet) || ((a == Algo::kNvls || a == Algo::kNvlsTree) && !pl.system.nvls) ||
        (a == Algo::kNvls && in.nodes > 1 && !pl.system.collnet)) {
      if (!ctx.withheld.empty()) {
        throw InputError("nccl:algo=" + named + " cannot run here: " + ctx.withheld);
      }
    }
    if (is_collnet(a) && !pl.system.collnet) {
      throw InputError("nccl:algo=" + named +
                       " needs the switch above each node (every GPU's NIC rail, one GPU of every node under it) "
                       "to reduce: mark that dimension 'in_network_reduction: true' in the topology (docs/network.md)");
    }
    if ((a == Algo::kNvls || a == Algo::kNvlsTree) && !pl.system.nvls) {
      throw InputError("nccl:algo=" + named + " needs the group's switch to reduce and multicast: mark it "
                       "'in_network_reduction: true' in the topology (docs/network.md)");
    }
    // NCCL runs NVLS across nodes only where CollNet runs (tuning.cc disables
    // it otherwise): the node's heads all-reduce through the SHARP switch.
    if (a == Algo::kNvls && in.nodes > 1 && !pl.system.collnet) {
      throw InputError("nccl:algo=nvls on " + std::to_string(in.nodes) +
                       " nodes needs the network to reduce (SHARP, NCCL's CollNet): mark the switch above each node "
                       "(every GPU's NIC rail, one GPU of every node under it) 'in_network_reduction: true' in the "
                       "topology (docs/network.md); without it NCCL runs nvlstree across nodes");
    }
  }
  // NCCL tunes on nBytes, the whole collective's buffer (src/enqueue.cc,
  // ncclInfoSetDerived: count x type size, x nRanks for all-gather and
  // reduce-scatter, whose count is per rank). Our all-gather's `bytes` is each
  // rank's input, our reduce-scatter's the whole input: only all-gather scales.
  const std::uint64_t tuned_bytes =
      type == CollectiveType::kAllGather ? bytes * static_cast<std::uint64_t>(in.ranks) : bytes;
  Choice best;
  const auto forced_proto = params.find("proto");
  // A tuner plugin's pick replaces NCCL's model where it has one and the
  // group can run it (tuner_regions.h); forcing algo or proto overrides both.
  const auto tuner = params.find("tuner");
  bool picked = false;
  if (tuner != params.end() && forced_algo == params.end() && forced_proto == params.end()) {
    const auto runs = [&](Algo a, Proto p) {
      return allowed[static_cast<int>(a)] && algo_time(in, pl.table, a, p, tuned_bytes) >= 0;
    };
    if (const auto pick = tuner_pick(static_cast<TunerPlugin>(tuner->second), type, tuned_bytes, in.ranks, in.nodes, runs)) {
      best = Choice{pick->algo, pick->proto, algo_time(in, pl.table, pick->algo, pick->proto, tuned_bytes)};
      picked = true;
    }
  }
  for (int a = 0; a < kAlgos && !picked; ++a) {
    if (!allowed[a]) continue;
    for (int p = 0; p < kProtos; ++p) {
      if (forced_proto != params.end() && forced_proto->second != static_cast<std::uint64_t>(p)) continue;
      const double t = algo_time(in, pl.table, static_cast<Algo>(a), static_cast<Proto>(p), tuned_bytes);
      if (t >= 0 && (best.time_us < 0 || t < best.time_us)) best = Choice{static_cast<Algo>(a), static_cast<Proto>(p), t};
    }
  }
  if (best.time_us < 0) {
    std::string what = forced_algo == params.end()                ? ""
                       : forced_algo->second == kCollNetEither ? std::string("algo=collnet")
                                                               : std::string("algo=") +
                                                                     algo_name(static_cast<Algo>(forced_algo->second));
    if (forced_proto != params.end()) {
      what += (what.empty() ? "" : ",") + std::string("proto=") + proto_name(static_cast<Proto>(forced_proto->second));
    }
    // No graph at all: the links are below every speed NCCL's search tries.
    if (std::all_of(in.graphs.begin(), in.graphs.end(), [](const Graph& g) { return g.channels == 0; })) {
      const bool one_node = in.nodes == 1;
      const bool hopper = arch == Arch::kHopper;
      const double slowest = one_node ? (hopper ? std::end(kSpeedIntraSm90)[-1] : std::end(kSpeedIntra)[-1])
                                      : (hopper ? std::end(kSpeedInterSm90)[-1] : std::end(kSpeedInter)[-1]);
      char buf[256];
      if (one_node) {
        std::snprintf(buf, sizeof buf, "GPU %.6g GB/s, below NCCL's slowest channel speed, %.6g GB/s", pl.system.gpu_bw,
                      slowest);
      } else {
        std::snprintf(buf, sizeof buf, "GPU %.6g GB/s, network device %.6g GB/s; NCCL's slowest channel speed %.6g GB/s",
                      pl.system.gpu_bw, pl.system.nic_bw, slowest);
      }
      throw InputError("nccl: no channel of NCCL's search fits this group's links (" + std::string(buf) +
                       "): NCCL falls back to one channel in a plain order there, which the model does not simulate; "
                       "give the links their real rate, or choose a native algorithm (--collective <type>=ring)");
    }
    throw InputError("nccl" + (what.empty() ? std::string() : ":" + what) + ": NCCL's model has no bandwidth for " +
                     collective_name(type) + " on this group (NVLS runs the simple protocol only; LL128 needs NVLink)");
  }
  pl.algo = best.algo;
  pl.proto = best.proto;
  const Graph& g = in.graphs[static_cast<int>(pl.algo)];
  pl.channels = static_cast<std::uint32_t>(g.channels);
  const auto forced_channels = params.find("channels");
  if (forced_channels != params.end()) pl.channels = static_cast<std::uint32_t>(forced_channels->second);
  pl.predicted_us = algo_time(in, pl.table, pl.algo, pl.proto, tuned_bytes, static_cast<int>(pl.channels));
  // NCCL's model prices the search's channels; a ring or tree runs on the
  // communicator's (twice the search's, nccl_system.h's run_channels), a small
  // one on fewer.
  const bool ring_or_tree = pl.algo == Algo::kRing || pl.algo == Algo::kTree;
  const int run = ring_or_tree ? pl.system.run_channels : g.channels;
  if (forced_channels == params.end()) {
    pl.channels = runtime_channels(pl.algo, pl.proto, tuned_bytes, in.ranks, static_cast<std::uint32_t>(run));
  }
  // NVLS-tree runs on nvlsChannels CTAs whatever the search found (src/enqueue.cc:
  // "NVLS should not need more than 16 channels", nc = comm->nvlsChannels);
  // NCCL's model prices it on the search's graph (above).
  if (pl.algo == Algo::kNvlsTree && forced_channels == params.end()) pl.channels = kNvlsChannels;

  // The step model: a channel moves NCCL's modelled bandwidth per channel.
  const int ai = static_cast<int>(pl.algo), pi = static_cast<int>(pl.proto);
  // NCCL_BUFFSIZE where the platform sets it: Simple's buffer per connection,
  // NCCL_STEPS slots of it (a slot is a tree's, a chain's and a CollNet
  // chunk; a ring step is 4 slots, ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS).
  const auto buffsize = params.find("buffsize");
  const std::uint64_t simple_buffer = buffsize == params.end() ? kSimpleBuffer : buffsize->second;
  const double alg_bw = pl.table.bandwidth[ai][pi];  // GB/s of buffer, all graph channels
  StepModel& m = pl.model;
  m.proto = pl.proto;
  m.channels = pl.channels;
  if (pl.algo == Algo::kNvls || pl.algo == Algo::kNvlsTree) {
    // Each GPU uploads (n + 1) / n of the buffer (its copy of every shard, and
    // its own shard's sum to multicast), n the GPUs of its node: at algBw that
    // is (n + 1) / n x algBw. NVLS-tree's network sends are not paced (the
    // NICs set their pace); each received one waits the network hop latency,
    // so the deepest path pays NCCL's 2 log2(nodes) x interLat.
    // NVLS all-gather (one node): each GPU multicasts its shard, 1/n of
    // nBytes, while NCCL's model moves nBytes at algBw: 1/n x algBw.
    // Reduce-scatter: each GPU uploads its copy of every shard, nBytes: algBw.
    const double local = pl.system.per_node;
    const double uploaded = type == CollectiveType::kAllGather       ? 1 / local
                            : type == CollectiveType::kReduceScatter ? 1.0
                                                                     : (local + 1) / local;
    // A channel's share is NCCL's modelled bandwidth over the channels NCCL
    // runs (the search's for NVLS, nvlsChannels for NVLS-tree): fewer forced
    // `channels` move less, as a ring's or a tree's do; more do not move more
    // than the model's total, which the switch's reductions bound.
    const double run_channels = pl.algo == Algo::kNvlsTree ? kNvlsChannels : g.channels;
    const double shares = std::max({1.0, run_channels, static_cast<double>(pl.channels)});
    const double per_channel = uploaded * alg_bw / shares;
    m.channel_rate = static_cast<BytesPerSecond>(std::llround(per_channel * 1e9));
    // NCCL's chunk per head and round, by nBytes, per algorithm (src/enqueue.cc,
    // calcCollChunking: NVLS's rule for all-reduce, all-gather and
    // reduce-scatter alike, NVLS-tree's its own): a round's multicasts all land
    // at once when their stores are paced through, so the chunk sets that burst.
    // One exception, ours not NCCL's: NVLS all-reduce on one node keeps
    // kNvlsChunk (128 KiB) at every size. NCCL's rule there (32 KiB at 16 MiB
    // on a dgx-h100) gives 286.16 GB/s of busbw at 16 MiB against 244.66 with
    // 128 KiB, while the measured XLA curve dgx-h100-calibrated is fitted on
    // (docs/calibrate.md) is slower still; fitted with NCCL's rule the gap
    // goes into the per-call overhead, which all-gather and reduce-scatter pay
    // too, and three of their held-out rows miss by 15.7-31.7% (docs/nccl.md,
    // "nvls"). Until the model explains that gap, 128 KiB stays.
    const std::uint64_t ops = std::uint64_t{pl.channels} * static_cast<std::uint64_t>(local);
    const bool one_node_all_reduce = pl.algo == Algo::kNvls && in.nodes == 1 && type == CollectiveType::kAllReduce;
    // A platform's NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE
    // (`nvls_chunk`, `nvlstree_max_chunk`; aws-ofi-nccl sets both on p5) enter
    // NCCL's rules; the one-node exception above keeps its 128 KiB.
    const auto param_or = [&params](const char* key) {
      const auto it = params.find(key);
      return it == params.end() ? std::uint64_t{0} : it->second;
    };
    const std::uint64_t chunk_size = param_or("nvls_chunk"), tree_max = param_or("nvlstree_max_chunk");
    m.step_bytes = one_node_all_reduce ? kNvlsChunk
                   : pl.algo == Algo::kNvls
                       ? nvls_chunk(tuned_bytes, ops, in.nodes, pl.table.bandwidth[ai][pi], chunk_size)
                       : nvls_tree_chunk(tuned_bytes, ops, in.nodes, version, chunk_size, tree_max, simple_buffer);
    // NVLS-tree's network connections have NCCL_STEPS slots of a chunk each.
    if (pl.algo == Algo::kNvlsTree) m.window = static_cast<std::uint32_t>(kNcclSteps);
    // Across nodes, the copy warps' scatter into NCCL's NVLS buffer and gather out of it.
    if (const auto it = params.find("copy_bw"); it != params.end() && in.nodes > 1) {
      // Rounded, and at least 1 B/s: a rate below the channel count truncated to 0, which means no copies.
      m.copy_rate = std::max<BytesPerSecond>(
          1, static_cast<BytesPerSecond>(std::llround(static_cast<double>(it->second) / shares)));
    }
    // One node: NVLS's whole latency up front. Across nodes (NVLS-tree, and
    // NVLS with SHARP) the NVLink hop up front and the network hop after each
    // message from the network, so the deepest path pays NCCL's latency.
    const bool one_node = pl.algo == Algo::kNvls && in.nodes == 1;
    m.base = us(one_node           ? pl.table.latency[ai][pi]
                : g.nvlink_intra   ? nvls_hop
                                   : hop_latency(Hw::kPci, pl.algo, pl.proto, tables));
    m.hop_inter = one_node ? 0 : us(hop_latency(Hw::kNet, pl.algo, pl.proto, tables));
  } else if (pl.algo == Algo::kCollNetDirect) {
    // Each GPU sends, per loop, its copy of every other head's shard (scatter)
    // and its own shard's total to every other GPU (broadcast): 2 (n - 1) / n
    // of the loop through its channel's pacer, n the GPUs of its node, while
    // NCCL's model moves the loop at algBw; the SHARP uploads are not paced
    // (the NICs set their pace) but for the head's read of its addend.
    // NCCL's latency, 2 (min(1, n - 1) x intra + (n - 1) x 0.4) + inter us
    // (tuning.cc: 0.4 us per peer of the fan): the deepest path has the two
    // NVLink hops and the network hop; the fan's 0.4 us per peer, twice, is
    // the start.
    const double local = pl.system.per_node;
    m.channel_rate = static_cast<BytesPerSecond>(std::llround(2 * (local - 1) / local * alg_bw / g.channels * 1e9));
    m.base = us(2 * (local - 1) * kCollNetDirectPeerLatencyUs);
    m.hop_intra = us(hop_latency(g.nvlink_intra ? Hw::kNvlink : Hw::kPci, pl.algo, pl.proto, tables));
    m.hop_inter = us(hop_latency(Hw::kNet, pl.algo, pl.proto, tables));
    m.step_bytes = chain_step_payload(pl.proto, simple_buffer);
    m.window = kChainStepsInFlight;
    if (bytes > ctx.memory.cache_bytes) m.memory_bandwidth = ctx.memory.bandwidth;  // the heads' reads (all-reduce only)
  } else {
    // NCCL's modelled bandwidth over the CTAs that carry it.
    const double bus_per_channel = alg_bw / bus_to_alg_ratio(pl.algo, type, in.ranks) / run;
    m.channel_rate = static_cast<BytesPerSecond>(std::llround(bus_per_channel * 1e9));
    // Across nodes NCCL's model gives every channel its share of the network,
    // but a step between two GPUs of one node goes at the channel's own pace
    // on NVLink: NCCL's ceiling for one channel of the protocol (the NVLink
    // links, in the topology, share themselves among the channels).
    if (in.nodes > 1 && g.nvlink_intra) {
      const double ceiling = channel_ceiling(pl, tables);
      if (ceiling > bus_per_channel) m.intra_rate = static_cast<BytesPerSecond>(std::llround(ceiling * 1e9));
    }
    m.base = us(base_latency(pl.algo, pl.proto, tables));
    m.hop_intra = us(hop_latency(g.nvlink_intra ? Hw::kNvlink : Hw::kPci, pl.algo, pl.proto, tables));
    m.hop_inter = us(hop_latency(Hw::kNet, pl.algo, pl.proto, tables));
    // Reductions on the GPU (the ring's, the tree's and the CollNet chain's)
    // read the local addend from HBM when the rank's buffer does not fit the
    // GPU's L2 (GpuMemory). NCCL's own model leaves them free, so its choice
    // above does not see them. (NVLS and NVLS-tree, above, load no addend of
    // their own: the switch sums the node's buffers.)
    const bool reduces_on_gpu =
        type == CollectiveType::kAllReduce || (pl.algo == Algo::kRing && type == CollectiveType::kReduceScatter);
    if ((pl.algo == Algo::kRing || pl.algo == Algo::kTree || pl.algo == Algo::kCollNetChain) && reduces_on_gpu &&
        bytes > ctx.memory.cache_bytes) {
      m.memory_bandwidth = ctx.memory.bandwidth;
    }
    if (type == CollectiveType::kBroadcast || type == CollectiveType::kReduce || pl.algo == Algo::kCollNetChain) {
      m.step_bytes = chain_step_payload(pl.proto, simple_buffer);
      m.window = kChainStepsInFlight;
    } else if (pl.algo == Algo::kTree) {
      // A tree chunk is one slot of the connection's buffer: NCCL_STEPS of them in flight.
      m.step_bytes = tree_chunk(pl.proto, tuned_bytes, pl.channels, in.ranks, in.nodes, simple_buffer, version);
      m.window = static_cast<std::uint32_t>(kNcclSteps);
    } else if (pl.proto == Proto::kSimple && buffsize != params.end()) {
      m.step_bytes = simple_buffer / kNcclSteps * kRingChunkSteps;  // the ring's step
    }
  }
  if (const auto it = params.find("proxy"); it != params.end()) m.proxy = static_cast<Time>(it->second);
  m.writes = net_writes(params, pl.system.nic_bw);
  // The network's latency per hop where the fabric's differs from NCCL's
  // table (hwLat[NET], measured on InfiniBand): in the simulated steps only,
  // so NCCL's choice stays its model's.
  if (const auto it = params.find("net_latency"); it != params.end() && m.hop_inter > 0) {
    m.hop_inter = static_cast<Time>(it->second);
  }
  // (one-node NVLS's base is the table's latency, which has it)
  if (pl.algo != Algo::kNvls || in.nodes > 1) m.base += extra;
  pl.name = std::string("nccl:") + algo_name(pl.algo) + "/" + proto_name(pl.proto);
  return pl;
}

P2pModel p2p_model(const Params& params) {
  check_keys(CollectiveType::kAllToAll, params);
  P2pModel m;
  if (const auto it = params.find("channels"); it != params.end()) m.channels = static_cast<std::uint32_t>(it->second);
  if (const auto it = params.find("overhead"); it != params.end()) m.base = static_cast<Time>(it->second);
  if (const auto it = params.find("proxy"); it != params.end()) m.proxy = static_cast<Time>(it->second);
  if (const auto it = params.find("p2p_net_chunk"); it != params.end()) m.net_chunk = it->second;
  // A chunk's hop: NCCL's Simple latency per step of a ring (hwLat), the
  // network's replaced by net_latency where the fabric's differs.
  const int tables = tables_version_of(params);
  m.hop_intra = us(hop_latency(Hw::kNvlink, Algo::kRing, Proto::kSimple, tables));
  m.hop_inter = us(hop_latency(Hw::kNet, Algo::kRing, Proto::kSimple, tables));
  if (const auto it = params.find("net_latency"); it != params.end()) m.hop_inter = static_cast<Time>(it->second);
  return m;
}

namespace {

// NCCL's view of the system gives the NIC's rate (the writes' cost) and the
// communicator's channels (the all-to-all's p2p channels); it needs the same
// GPUs on every node, which the all-to-all does not (there it keeps 32 p2p
// channels). Described once, and only when asked: a send/receive model is
// made for every pair of ranks that exchange messages.
P2pModel p2p_model_of(const Params& params, const AlgorithmContext& ctx, bool all_to_all) {
  P2pModel m = p2p_model(params);
  const bool writes = params.count("net_write_cost") > 0;
  const bool channels = all_to_all && !params.count("channels") && ctx.size() > 1 && ctx.ranks_per_domain() > 0;
  if (writes || channels) {
    const NcclSystem sys = describe_system(ctx, arch_of(params));
    if (writes) m.writes = net_writes(params, sys.nic_bw);
    if (channels) m.channels = p2p_channels(sys.run_channels);
  }
  return m;
}

}  // namespace

P2pModel p2p_model(const Params& params, const AlgorithmContext& ctx) { return p2p_model_of(params, ctx, false); }

P2pModel all_to_all_model(const Params& params, const AlgorithmContext& ctx) { return p2p_model_of(params, ctx, true); }

std::shared_ptr<const CollectiveProgram> make_program(CollectiveType type, std::uint64_t bytes, const Params& params,
                                                      const AlgorithmContext& ctx) {
  if (type == CollectiveType::kReduceScatterBlock) type = CollectiveType::kReduceScatter;
  // NCCL returns at once for one rank (system/collectives/one_member.h).
  if (ctx.size() == 1) return std::make_shared<const OneMemberProgram>("nccl", type, bytes, ctx.memory.bandwidth);
  if (type == CollectiveType::kAllToAll) return make_alltoall_program(kAllToAllProgramName, bytes, ctx, all_to_all_model(params, ctx));
  const Plan pl = plan(type, bytes, params, ctx);
  const bool op_by_op = pl.algo == Algo::kTree || pl.algo == Algo::kNvls || pl.algo == Algo::kNvlsTree ||
                        pl.algo == Algo::kCollNetChain || pl.algo == Algo::kCollNetDirect ||
                        type == CollectiveType::kBroadcast || type == CollectiveType::kReduce;
  // The ring computes its ops on demand: nothing to share.
  if (!op_by_op) return make_ring_program(pl.name, type, bytes, ctx, pl.model);
  return shared_program(type, bytes, params, pl, ctx, [&]() -> std::shared_ptr<const CollectiveProgram> {
    switch (pl.algo) {
      case Algo::kTree: return make_tree_program(pl.name, bytes, ctx, pl.model);
      case Algo::kNvls:
        return type == CollectiveType::kAllReduce ? make_nvls_program(pl.name, bytes, ctx, pl.model)
                                                  : make_nvls_scatter_gather_program(pl.name, type, bytes, ctx, pl.model);
      case Algo::kNvlsTree: return make_nvls_tree_program(pl.name, bytes, ctx, pl.model);
      case Algo::kCollNetChain: return make_collnet_chain_program(pl.name, bytes, ctx, pl.model);
      case Algo::kCollNetDirect: return make_collnet_direct_program(pl.name, bytes, ctx, pl.model);
      default: return make_chain_program(pl.name, type, bytes, ctx, pl.model);  // broadcast, reduce
    }
  });
}

}  // namespace sim::nccl
