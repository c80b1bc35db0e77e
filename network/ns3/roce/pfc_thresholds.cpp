#include "network/ns3/roce/pfc_thresholds.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace sim {

std::uint64_t pfc_headroom(BytesPerSecond rate, Time latency, std::uint32_t max_frame) {
  const double cable = std::ceil(2.0 * static_cast<double>(rate) * static_cast<double>(latency) / 1e12);
  return static_cast<std::uint64_t>(cable) + 2ull * max_frame + 64;
}

std::vector<PfcThresholds> pfc_thresholds(const Topology& topology, const Ns3Options& options, std::uint32_t max_frame) {
  const RoceOptions& r = options.roce;
  // Every lossless priority of every port needs its own headroom, and each
  // pauses on its own share of what is left (traffic_classes priorities).
  const std::uint64_t classes = options.traffic_classes;
  std::vector<std::uint64_t> headroom(topology.node_count(), 0), ports(topology.node_count(), 0);
  for (const Link& l : topology.links()) {
    headroom[l.to] += classes * pfc_headroom(options.links.effective(l.bandwidth), l.latency, max_frame);
    ++ports[l.to];
  }
  std::vector<PfcThresholds> out(topology.node_count());
  for (NodeId v = 0; v < topology.node_count(); ++v) {
    const bool forwards = v >= topology.npu_count() || ports[v] >= 2;
    PfcThresholds& t = out[v];
    if (r.pfc_xoff != 0) {
      t.xoff = r.pfc_xoff;
    } else if (ports[v] > 0 && r.buffer_bytes > headroom[v]) {
      t.xoff = (r.buffer_bytes - headroom[v]) / (ports[v] * classes);
    }
    if (r.pfc && forwards && r.pfc_xoff == 0 && t.xoff < 2ull * max_frame) {
      const std::string node = v < topology.npu_count() ? "npu" + std::to_string(v)
                                                        : "switch " + std::to_string(v - topology.npu_count());
      throw InputError(r.buffer_where + ": " + std::to_string(r.buffer_bytes) + " B leaves " + node + " (" +
                       std::to_string(ports[v]) + " ports in) no room above its PFC headroom of " +
                       std::to_string(headroom[v]) + " B (2 x rate x latency + 2 max frames + 64 B per port" +
                       (classes > 1 ? " and priority" : "") + "); raise buffer_size or set pfc_xoff");
    }
    if (r.pfc_xon != 0) {
      t.xon = r.pfc_xon;
      if (r.pfc && forwards && t.xon >= t.xoff) {
        throw InputError(r.pfc_xon_where + ": " + std::to_string(t.xon) + " B must be below the derived pfc_xoff of " +
                         std::to_string(t.xoff) + " B");
      }
    } else {
      t.xon = t.xoff > 2ull * max_frame ? t.xoff - 2ull * max_frame : 0;
    }
  }
  return out;
}

}  // namespace sim
