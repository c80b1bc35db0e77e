#include "report/physical_bounds.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "core/units.h"
#include "report/report.h"

namespace sim {

std::vector<std::string> physical_bound_warnings(const SimulationResult& result, const Topology& topology) {
  std::vector<double> out(topology.npu_count(), 0), in(topology.npu_count(), 0);
  std::vector<char> reducing(topology.npu_count(), 0);  // hangs off a switch that reduces
  for (const Link& l : topology.links()) {
    if (l.from < topology.npu_count()) out[l.from] += static_cast<double>(l.bandwidth);
    if (l.to < topology.npu_count()) in[l.to] += static_cast<double>(l.bandwidth);
    if (l.from < topology.npu_count() && topology.reduces(l.to)) reducing[l.from] = 1;
  }
  // Worst excess per kind of collective.
  using Kind = std::tuple<int, std::uint64_t, std::uint32_t, std::string>;
  std::map<Kind, std::pair<double, const CollectiveRecord*>> worst;
  for (const CollectiveRecord& c : result.collectives) {
    // A barrier moves no buffer: it has no bandwidth to bound (report.h, algbw_bytes).
    if (c.npu >= topology.npu_count() || c.group_size <= 1 || c.type == CollectiveType::kBarrier) continue;
    // A collective that moves bytes between ranks in no time at all (an
    // injected algorithm that sends nothing) is past any port: infinitely.
    if (c.duration <= 0 && c.bytes == 0) continue;
    // A switch that reduces sends the sum once: an all-reduce then moves S up
    // and S down per rank, half the 2(n-1)/n x S of busbw's definition.
    const double allowance = reducing[c.npu] && c.type == CollectiveType::kAllReduce ? 2.0 : 1.0;
    const double port_gbps = allowance * std::min(out[c.npu], in[c.npu]) / 1e9;
    const double ratio = c.duration <= 0 ? std::numeric_limits<double>::infinity() : busbw_gbps(c) / port_gbps;
    if (ratio <= 1 + 1e-9) continue;
    auto& w = worst[{static_cast<int>(c.type), c.bytes, c.group_size, c.algorithm}];
    if (ratio > w.first) w = {ratio, &c};
  }
  std::vector<std::string> warnings;
  // A link carries at most its bandwidth over the run: more means messages
  // that shared it each had it whole (the analytical backend's model, which
  // leaves contention inside the network out). The worst link, and how many.
  // (The contention-aware backends share links; the packet-level one counts
  // retransmissions, which may trail the last delivery: only bytes-only
  // accounting, the analytical backend's, is warned about.)
  if (result.makespan > 0 && !result.link_time_known) {
    std::size_t over = 0;
    const LinkRecord* hottest = nullptr;
    double most = 1 + 1e-6;
    for (const LinkRecord& l : result.links) {
      const double u = link_utilization(l, result.makespan);
      if (u <= 1 + 1e-6) continue;
      ++over;
      if (u > most) most = u, hottest = &l;
    }
    if (hottest) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.1f%%", 100 * most);
      warnings.push_back("link " + node_label(hottest->from, result.npu_count) + " -> " +
                         node_label(hottest->to, result.npu_count) + " (" + format_bandwidth(hottest->bandwidth) +
                         ") carried " + format_bytes(hottest->usage.bytes) + " in " + format_time(result.makespan) +
                         ", " + buf + " of what it can" +
                         (over > 1 ? " (" + std::to_string(over) + " links above 100%)" : std::string()) +
                         ": messages that shared it each had its whole bandwidth (the analytical backend models no "
                         "contention inside the network); --backend flow shares links");
    }
  }
  for (const auto& [kind, w] : worst) {
    const CollectiveRecord& c = *w.second;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f GB/s", busbw_gbps(c));
    const std::string on = " on rank " + std::to_string(c.rank);
    const std::string what = c.duration <= 0 ? "it ends in 0 ps" + on + ", faster than"
                                             : "busbw " + std::string(buf) + on + " exceeds what";
    warnings.push_back(std::string(collective_name(c.type)) + " of " + format_bytes(c.bytes) + " on " +
                       std::to_string(c.group_size) + " ranks [" + c.algorithm + "]: " + what +
                       " its NPU can send or receive (" +
                       format_bandwidth(static_cast<BytesPerSecond>(std::min(out[c.npu], in[c.npu]))) +
                       " over all its links): the result is not physical; check the algorithm and its sizes");
  }
  return warnings;
}

std::vector<std::string> training_bound_warnings(const TrainingSummary& s) {
  // A relative tolerance for the double arithmetic of MFU (an exact 100 % stays quiet).
  if (s.peak_tflops_per_gpu <= 0 || !(s.model_tflops_per_gpu > s.peak_tflops_per_gpu * (1 + 1e-9))) return {};
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "training iteration: MFU %.2f %% (%.3f model TFLOP/s per GPU over %u GPUs) exceeds what a GPU can do "
                "(its peak, %.3f TFLOP/s)",
                100 * s.mfu, s.model_tflops_per_gpu, s.world, s.peak_tflops_per_gpu);
  return {std::string(buf) + ": the result is not physical; check the workload's model FLOPs and the system's "
                             "compute peak"};
}

std::vector<std::string> untimed_compute_warnings(const TrainingSummary& s) {
  if (!(s.model_flops > 0) || s.compute_timed) return {};
  const std::string why = s.peak_tflops_per_gpu > 0
                              ? "neither the system config's compute model nor the nodes' duration_micros gave them time"
                              : "the system config has no compute section, and the nodes carry no duration_micros";
  return {"training iteration: every COMP node took 0 ps (" + why +
          "): the iteration time is its communication alone, and its model TFLOP/s per GPU is no GPU's; give --system "
          "a compute section (peak_tflops, memory_bandwidth; docs/compute.md)"};
}

}  // namespace sim
