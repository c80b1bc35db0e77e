#include "workflows/sweep/point_result.h"

#include <map>
#include <tuple>

#include "report/report.h"

namespace sim::workflows {

std::vector<CollectiveRow> collective_rows(const SimulationResult& result) {
  using Key = std::tuple<std::uint64_t, int, std::uint64_t, std::uint32_t, std::string>;
  std::map<Key, std::pair<std::uint32_t, const CollectiveRecord*>> slowest;
  for (const CollectiveRecord& c : result.collectives) {
    auto& [count, record] = slowest[Key{c.node_id, static_cast<int>(c.type), c.bytes, c.group_size, c.algorithm}];
    ++count;
    if (!record || c.duration > record->duration) record = &c;
  }
  std::vector<CollectiveRow> rows;
  for (const auto& [key, slot] : slowest) {
    const CollectiveRecord& c = *slot.second;
    rows.push_back(CollectiveRow{collective_name(c.type), c.bytes, c.group_size, c.algorithm, c.node_id, slot.first,
                                 c.duration, algbw_gbps(c), busbw_gbps(c)});
  }
  return rows;
}

nlohmann::json to_json(const PointResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CollectiveRow& c : r.collectives) {
    rows.push_back({{"collective", c.collective}, {"bytes", c.bytes}, {"group_size", c.group_size},
                    {"algorithm", c.algorithm}, {"node_id", c.node_id}, {"ranks", c.ranks},
                    {"duration_ps", c.duration}, {"algbw_gbps", c.algbw_gbps}, {"busbw_gbps", c.busbw_gbps}});
  }
  return {{"index", r.index},         {"key", r.key},       {"exit_code", r.exit_code},
          {"message", r.message},     {"sim_time_ps", r.sim_time}, {"events", r.events},
          {"npus", r.npus},           {"collectives", rows}, {"warnings", r.warnings},
          {"wall_seconds", r.wall_seconds}};
}

PointResult point_result_from_json(const nlohmann::json& j) {
  PointResult r;
  r.index = j.at("index").get<std::size_t>();
  r.key = j.at("key").get<std::string>();
  r.exit_code = j.at("exit_code").get<int>();
  r.message = j.at("message").get<std::string>();
  r.sim_time = j.at("sim_time_ps").get<Time>();
  r.events = j.at("events").get<std::uint64_t>();
  r.npus = j.at("npus").get<std::uint32_t>();
  r.warnings = j.at("warnings").get<std::vector<std::string>>();
  r.wall_seconds = j.at("wall_seconds").get<double>();
  for (const auto& c : j.at("collectives")) {
    r.collectives.push_back(CollectiveRow{c.at("collective").get<std::string>(), c.at("bytes").get<std::uint64_t>(),
                                          c.at("group_size").get<std::uint32_t>(), c.at("algorithm").get<std::string>(),
                                          c.at("node_id").get<std::uint64_t>(), c.at("ranks").get<std::uint32_t>(),
                                          c.at("duration_ps").get<Time>(), c.at("algbw_gbps").get<double>(),
                                          c.at("busbw_gbps").get<double>()});
  }
  return r;
}

}  // namespace sim::workflows
