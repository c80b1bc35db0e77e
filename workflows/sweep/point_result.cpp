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
  nlohmann::json j = {{"index", r.index},         {"key", r.key},       {"exit_code", r.exit_code},
                      {"message", r.message},     {"sim_time_ps", r.sim_time}, {"events", r.events},
                      {"npus", r.npus},           {"collectives", rows}, {"warnings", r.warnings},
                      {"wall_seconds", r.wall_seconds}};
  if (r.training) {
    const TrainingSummary& t = *r.training;
    nlohmann::json exposed = nlohmann::json::object();
    for (std::size_t d = 0; d < kTrainingDims; ++d) exposed[training_dim_name(static_cast<TrainingDim>(d))] = t.exposed_ns[d];
    j["training"] = {{"iteration_time_ps", t.iteration_time}, {"gpus", t.world},
                     {"model_flops", t.model_flops},          {"model_tflops_per_gpu", t.model_tflops_per_gpu},
                     {"peak_tflops_per_gpu", t.peak_tflops_per_gpu}, {"mfu", t.mfu},
                     {"exposed_ns", exposed},                 {"exposed_total_ns", t.exposed_total_ns},
                     {"pipeline_bubble", t.pipeline_bubble},  {"pipeline_bubble_rank", t.pipeline_bubble_rank},
                     {"ranks_sampled", t.ranks_sampled}};
  }
  if (!r.notes.empty()) j["notes"] = r.notes;
  return j;
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
  if (const auto t = j.find("training"); t != j.end()) {
    TrainingSummary s;
    s.iteration_time = t->at("iteration_time_ps").get<Time>();
    s.world = t->at("gpus").get<std::uint32_t>();
    s.model_flops = t->at("model_flops").get<double>();
    s.model_tflops_per_gpu = t->at("model_tflops_per_gpu").get<double>();
    s.peak_tflops_per_gpu = t->at("peak_tflops_per_gpu").get<double>();
    s.mfu = t->at("mfu").get<double>();
    for (std::size_t d = 0; d < kTrainingDims; ++d) {
      s.exposed_ns[d] = t->at("exposed_ns").at(training_dim_name(static_cast<TrainingDim>(d))).get<double>();
    }
    s.exposed_total_ns = t->at("exposed_total_ns").get<double>();
    s.pipeline_bubble = t->at("pipeline_bubble").get<double>();
    s.pipeline_bubble_rank = t->at("pipeline_bubble_rank").get<std::uint32_t>();
    s.ranks_sampled = t->at("ranks_sampled").get<std::uint32_t>();
    r.training = s;
  }
  if (const auto n = j.find("notes"); n != j.end()) r.notes = n->get<std::vector<std::string>>();
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
