#include "system/collectives/nccl/model/nccl_tuner.h"

#include <algorithm>

namespace sim::nccl {

namespace {

// NCCL's tables are in nccl_constants.h.

// NCCL's log2i: floor(log2(n)), 0 for n <= 1.
int log2i(std::uint64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

bool is(Algo a, Algo b) { return a == b; }

}  // namespace

const char* algo_name(Algo a) {
  static const char* const kNames[] = {"tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree"};
  return kNames[static_cast<int>(a)];
}

const char* proto_name(Proto p) {
  static const char* const kNames[] = {"ll", "ll128", "simple"};
  return kNames[static_cast<int>(p)];
}

double base_latency(Algo a, Proto p, int version) {
  return tuning_constants(version).base_lat[static_cast<int>(a)][static_cast<int>(p)];
}

double hop_latency(Hw hw, Algo a, Proto p, int version) {
  return tuning_constants(version).hw_lat[static_cast<int>(hw)][static_cast<int>(a)][static_cast<int>(p)];
}

double bus_to_alg_ratio(Algo a, CollectiveType type, int ranks) {
  if (a == Algo::kRing) {
    const int nsteps = type == CollectiveType::kAllReduce ? 2 * (ranks - 1)
                       : type == CollectiveType::kAllGather || type == CollectiveType::kReduceScatter ||
                               type == CollectiveType::kReduceScatterBlock
                           ? ranks - 1
                           : ranks;
    return static_cast<double>(ranks) / nsteps;
  }
  if (a == Algo::kNvls || a == Algo::kNvlsTree) return 5.0 / 6.0;
  return .5;
}

TuneTable tune(const TuneInput& in) {
  TuneTable t;
  const int ranks = in.ranks, nodes = std::max(in.nodes, 1);
  if (ranks <= 1) return t;
  using T = CollectiveType;
  const T coll = in.type == T::kReduceScatterBlock ? T::kReduceScatter : in.type;
  if (coll != T::kAllReduce && coll != T::kAllGather && coll != T::kReduceScatter && coll != T::kBroadcast &&
      coll != T::kReduce) {
    return t;  // NCCL has no such collective
  }
  const TuningConstants& k = tuning_constants(in.version);
  const int cc = static_cast<int>(in.arch);
  const int index2 = nodes <= 2 ? nodes - 1 : 2;
  const int index1 = nodes == 1 ? cc : (in.amd_cpu ? 1 : 0);  // LL: GPU type in a node, CPU vendor across
  const double ll_max_bw = k.ll_max_bw[index1][index2];
  const double tree_max = k.per_ch_max_tree[cc][index2];
  const double ring_ll128_max = k.per_ch_max_ring_ll128[cc][index2];
  const double tree_ll128_max = k.per_ch_max_tree_ll128[cc][index2];
  const double ppn = static_cast<double>(ranks) / nodes;

  const int nsteps = coll == T::kAllReduce ? 2 * (ranks - 1)
                     : coll == T::kReduceScatter || coll == T::kAllGather ? ranks - 1
                                                                          : ranks;
  // A ring's steps across the network: 2.23 counted them as 2 (nodes - 1)
  // for all-reduce, where 2.20 had 2 x nodes.
  const int inter_steps = coll == T::kAllReduce ? (nodes > 1 ? 2 * (in.version >= 223 ? nodes - 1 : nodes) : 0)
                          : coll == T::kReduceScatter || coll == T::kAllGather ? nodes - 1
                                                                               : nodes;

  for (int ai = 0; ai < kAlgos; ++ai) {
    const Algo a = static_cast<Algo>(ai);
    if ((coll == T::kBroadcast || coll == T::kReduce) && a != Algo::kRing) continue;
    if ((coll == T::kReduceScatter || coll == T::kAllGather) && a != Algo::kRing && a != Algo::kNvls &&
        a != Algo::kCollNetDirect) {
      continue;
    }
    const Graph& g = in.graphs[ai];
    const Hw intra_hw = g.nvlink_intra ? Hw::kNvlink : Hw::kPci;
    const Hw hw = nodes == 1 ? intra_hw : Hw::kNet;
    for (int pi = 0; pi < kProtos; ++pi) {
      const Proto p = static_cast<Proto>(pi);
      if ((a == Algo::kNvls || a == Algo::kNvlsTree) && p != Proto::kSimple) continue;
      const bool collnet = a == Algo::kCollNetDirect || a == Algo::kCollNetChain;
      double bw = nodes <= 2 || collnet ? g.bw_intra : g.bw_inter;
      if (a == Algo::kNvls) bw = std::min(g.bw_intra, g.bw_inter);
      if (a == Algo::kNvlsTree) bw = std::min(g.bw_intra, nodes <= 2 ? g.bw_inter : g.bw_inter / 2);
      double bus = g.channels * bw;

      // NCCL's refinements per algorithm and protocol.
      // Ring LL: half the wire is flags, from 2.21 on; 2.20 took a quarter (a third on one node but for all-reduce and reduce).
      if (is(a, Algo::kRing) && p == Proto::kLL) {
        const double share = in.version >= 221                                                     ? 1.0 / 2.0
                             : (nodes > 1 || coll == T::kAllReduce || coll == T::kReduce) ? 1.0 / 4.0
                                                                                            : 1.0 / 3.0;
        bus = std::min(ll_max_bw, bus * share);
      }
      // Ring LL128: 120/128 of the wire (0.92); 2.20 took 0.7 with one GPU per node.
      if (is(a, Algo::kRing) && p == Proto::kLL128) {
        bus = std::min(bus * (ppn < 2 && in.version < 223 ? 0.7 : 0.92), g.channels * ring_ll128_max);
      }
      if (is(a, Algo::kTree)) bus = std::min(bus * .92, g.channels * tree_max);
      if (is(a, Algo::kTree) && p == Proto::kLL) bus = std::min(bus * 1.0 / 3.8, ll_max_bw);
      if (is(a, Algo::kTree) && p == Proto::kLL128) {
        bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g.channels * tree_ll128_max);
      }
      if (collnet && p != Proto::kSimple) bus = 0;
      if (is(a, Algo::kCollNetDirect) && p == Proto::kSimple) {
        if (coll == T::kAllGather || coll == T::kReduceScatter) {
          bus = ppn * bw;
          if (nodes > 1) bus = 0;  // needs a CollNet plugin with all-gather / reduce-scatter: not modelled
          const double w = (ppn - 1) / (8 - 1);
          bus *= w * 0.85 + (1 - w) * 0.95;
        } else {
          double factor = ppn / std::max(g.channels, 1);  // GPU per NIC
          factor -= (factor - 1) / 2;
          bus /= factor;
          if (in.arch == Arch::kHopper) bus *= .85;
        }
      }
      // Bus bandwidth to algorithm bandwidth.
      if (!(is(a, Algo::kCollNetDirect) && (coll == T::kAllGather || coll == T::kReduceScatter))) {
        double ratio = 1.0;
        if (is(a, Algo::kRing)) {
          ratio = static_cast<double>(ranks) / nsteps;
        } else if (a == Algo::kNvls || a == Algo::kNvlsTree) {
          ratio = 5.0 / 6.0;
        } else {
          ratio = .5;
        }
        bus *= ratio;
      }
      t.bandwidth[ai][pi] = bus;

      double lat = k.base_lat[ai][pi];
      double intra_lat = k.hw_lat[static_cast<int>(intra_hw)][ai][pi];
      // One GPU per node exposes the network's latency whole: from 2.23 on
      // every algorithm takes the tree's network hop there.
      const int net_algo = ppn == 1 && in.version >= 223 ? static_cast<int>(Algo::kTree) : ai;
      double inter_lat = k.hw_lat[static_cast<int>(Hw::kNet)][net_algo][pi] + g.latency_inter;
      if (p == Proto::kSimple) inter_lat += g.latency_inter;  // the flush
      const int local = ranks / nodes;
      if (is(a, Algo::kRing)) {
        if (coll == T::kReduce || coll == T::kBroadcast) {
          lat += k.hw_lat[static_cast<int>(hw)][ai][pi];  // sameChannels: one pipelined chain
        } else {
          double net_overhead = 0;
          if (nodes > 1) {
            net_overhead = in.amd_cpu ? 2.0 : 1.0;
            if (p == Proto::kSimple) net_overhead *= 3;
          }
          intra_lat = std::max(intra_lat, net_overhead);
          lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
        }
      } else if (is(a, Algo::kTree)) {
        lat += 2 * ((local - 1) * intra_lat + log2i(static_cast<std::uint64_t>(nodes)) * inter_lat);
      } else if (is(a, Algo::kCollNetDirect)) {
        lat += 2 * (std::min(1, local - 1) * intra_lat + (local - 1) * kCollNetDirectPeerLatencyUs) + inter_lat;
      } else if (is(a, Algo::kCollNetChain)) {
        lat += 2 * (local - 1) * intra_lat + inter_lat;
      } else if (is(a, Algo::kNvls)) {
        lat = intra_lat;
        if (nodes > 1) lat += inter_lat;
      } else {
        lat += intra_lat + 2 * log2i(static_cast<std::uint64_t>(nodes)) * inter_lat;
      }
      t.latency[ai][pi] = lat;
    }
  }

  // What NCCL enables by default.
  const double ring_backup[kProtos] = {t.bandwidth[1][0], t.bandwidth[1][1], t.bandwidth[1][2]};
  for (int ai = 0; ai < kAlgos; ++ai) {
    const Algo a = static_cast<Algo>(ai);
    bool on = in.graphs[ai].channels > 0;
    if (a == Algo::kNvlsTree && nodes == 1) on = false;
    if (!in.collnet) {
      if (a == Algo::kCollNetDirect || a == Algo::kCollNetChain) on = false;
      if (a == Algo::kNvls && nodes > 1) on = false;
    }
    for (int pi = 0; pi < kProtos; ++pi) {
      if (!on || (pi == static_cast<int>(Proto::kLL128) && !in.ll128)) t.bandwidth[ai][pi] = 0;
    }
  }
  bool any = false;
  for (int ai = 0; ai < kAlgos; ++ai) {
    for (int pi = 0; pi < kProtos; ++pi) any = any || t.bandwidth[ai][pi] != 0;
  }
  if (!any) {
    for (int pi = 0; pi < kProtos; ++pi) t.bandwidth[1][pi] = ring_backup[pi];
  }
  return t;
}

double algo_time(const TuneInput& in, const TuneTable& table, Algo a, Proto p, std::uint64_t bytes, int channels) {
  const int ai = static_cast<int>(a), pi = static_cast<int>(p);
  double bw = table.bandwidth[ai][pi];
  double lat = table.latency[ai][pi];
  if (bw == 0) return -1;
  const int log_size = log2i(bytes >> 6);
  if (a == Algo::kTree && log_size < 23) bw *= kTreeCorrection[pi][log_size];
  const int graph_channels = in.graphs[ai].channels;
  if (channels > 0 && graph_channels > 0) bw = bw / graph_channels * channels;
  const CollectiveType coll = in.type == CollectiveType::kReduceScatterBlock ? CollectiveType::kReduceScatter : in.type;
  if (a == Algo::kRing && p == Proto::kSimple && in.nodes > 1 && coll == CollectiveType::kAllReduce &&
      graph_channels > 0 && bytes / (static_cast<std::uint64_t>(graph_channels) * in.ranks) >= 64) {
    lat *= in.arch == Arch::kVolta ? 1.9 : 1.4;  // the ring's plateau
  }
  return lat + static_cast<double>(bytes) / (1000 * bw);
}

Choice choose(const TuneInput& in, const TuneTable& table, std::uint64_t bytes, const std::array<bool, kAlgos>& allowed) {
  Choice best;
  for (int ai = 0; ai < kAlgos; ++ai) {
    if (!allowed[ai]) continue;
    for (int pi = 0; pi < kProtos; ++pi) {
      const double t = algo_time(in, table, static_cast<Algo>(ai), static_cast<Proto>(pi), bytes);
      if (t >= 0 && (best.time_us < 0 || t < best.time_us)) best = Choice{static_cast<Algo>(ai), static_cast<Proto>(pi), t};
    }
  }
  return best;
}

}  // namespace sim::nccl
