#include "report/physical_bounds.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/units.h"
#include "report/report.h"

namespace sim {

std::vector<std::string> physical_bound_warnings(const SimulationResult& result, const Topology& topology) {
  std::vector<double> out(topology.npu_count(), 0), in(topology.npu_count(), 0);
  for (const Link& l : topology.links()) {
    if (l.from < topology.npu_count()) out[l.from] += static_cast<double>(l.bandwidth);
    if (l.to < topology.npu_count()) in[l.to] += static_cast<double>(l.bandwidth);
  }
  // Worst excess per kind of collective.
  using Kind = std::tuple<int, std::uint64_t, std::uint32_t, std::string>;
  std::map<Kind, std::pair<double, const CollectiveRecord*>> worst;
  for (const CollectiveRecord& c : result.collectives) {
    if (c.npu >= topology.npu_count() || c.duration <= 0 || c.group_size <= 1) continue;
    const double port_gbps = std::min(out[c.npu], in[c.npu]) / 1e9;
    const double ratio = busbw_gbps(c) / port_gbps;
    if (ratio <= 1 + 1e-9) continue;
    auto& w = worst[{static_cast<int>(c.type), c.bytes, c.group_size, c.algorithm}];
    if (ratio > w.first) w = {ratio, &c};
  }
  std::vector<std::string> warnings;
  for (const auto& [kind, w] : worst) {
    const CollectiveRecord& c = *w.second;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f GB/s", busbw_gbps(c));
    warnings.push_back(std::string(collective_name(c.type)) + " of " + format_bytes(c.bytes) + " on " +
                       std::to_string(c.group_size) + " ranks [" + c.algorithm + "]: busbw " + buf + " on rank " +
                       std::to_string(c.rank) + " exceeds what its NPU can send or receive (" +
                       format_bandwidth(static_cast<BytesPerSecond>(std::min(out[c.npu], in[c.npu]))) +
                       " over all its links): the result is not physical; check the algorithm and its sizes");
  }
  return warnings;
}

}  // namespace sim
