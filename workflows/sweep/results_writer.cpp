#include "workflows/sweep/results_writer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/output_file.h"
#include "report/report.h"
#include "workflows/sweep/point_inputs.h"

namespace sim::workflows {

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// An axis's column: named after the option or the spec's key where the
// axis's name is also a result column (`collective`, the collective type;
// `npus`, the NPUs the point ran on), since a header naming a column twice
// is refused by `sim compare` and read as one column by `sim plot`.
std::string axis_column(const std::string& axis) {
  if (axis == "collective") return "--collective";
  if (axis == "npus") return "microbenchmark.npus";
  return axis;
}

// The training columns of a point: empty for a point that failed or ran no
// training iteration.
std::string training_fields(const PointResult& r) {
  std::string f;
  if (!r.ok() || !r.training) return std::string(4 + kTrainingDims + 2, ',');
  const TrainingSummary& t = *r.training;
  f.append(",").append(std::to_string(t.world)).append(",").append(fixed(t.model_tflops_per_gpu, 3));
  f.append(",").append(t.peak_tflops_per_gpu > 0 ? fixed(100 * t.mfu, 2) : "");
  for (std::size_t d = 0; d < kTrainingDims; ++d) f.append(",").append(fixed(t.exposed_ns[d], 3));
  f.append(",").append(fixed(t.exposed_total_ns, 3)).append(",").append(fixed(100 * t.pipeline_bubble, 2));
  return f;
}

std::string training_csv(const SweepOutput& out) {
  std::string csv = "point";
  for (const std::string& a : out.axes) csv.append(",").append(csv_field(axis_column(a)));
  csv += ",status,exit_code,npus,sim_time_ns,gpus,model_tflops_per_gpu,mfu_percent";
  for (std::size_t d = 0; d < kTrainingDims; ++d) {
    csv.append(",exposed_").append(training_dim_name(static_cast<TrainingDim>(d))).append("_ns");
  }
  csv += ",exposed_comm_ns,pipeline_bubble_percent,message\n";
  for (const SweepRow& p : out.points) {
    const PointResult& r = p.result;
    csv.append(std::to_string(r.index));
    for (const std::string& l : p.labels) csv.append(",").append(csv_field(l));
    csv.append(r.ok() ? ",ok," : ",failed,").append(std::to_string(r.exit_code)).append(",");
    csv.append(std::to_string(r.npus)).append(",").append(r.ok() ? format_ns(r.sim_time) : "");
    csv.append(training_fields(r)).append(",").append(csv_field(r.message)).append("\n");
  }
  return csv;
}

}  // namespace

std::string results_csv(const SweepOutput& out) {
  if (out.training) return training_csv(out);
  std::string csv = "point";
  for (const std::string& a : out.axes) csv.append(",").append(csv_field(axis_column(a)));
  csv += ",status,exit_code,npus,sim_time_ns,collective,bytes,group_size,algorithm,ranks,time_ns,algbw_gbps,busbw_gbps,message\n";
  for (const SweepRow& p : out.points) {
    const PointResult& r = p.result;
    std::string head = std::to_string(r.index);
    for (const std::string& l : p.labels) head.append(",").append(csv_field(l));
    head.append(r.ok() ? ",ok," : ",failed,").append(std::to_string(r.exit_code)).append(",");
    head.append(std::to_string(r.npus)).append(",").append(r.ok() ? format_ns(r.sim_time) : "");
    if (r.collectives.empty()) {
      csv.append(head).append(",,,,,,,,,").append(csv_field(r.message)).append("\n");
      continue;
    }
    for (const CollectiveRow& c : r.collectives) {
      csv.append(head).append(",").append(c.collective).append(",").append(std::to_string(c.bytes));
      csv.append(",").append(std::to_string(c.group_size)).append(",").append(csv_field(c.algorithm));
      csv.append(",").append(std::to_string(c.ranks)).append(",").append(format_ns(c.duration));
      csv.append(",").append(fixed(c.algbw_gbps, 6)).append(",").append(fixed(c.busbw_gbps, 6));
      csv.append(",").append(csv_field(r.message)).append("\n");
    }
  }
  return csv;
}

nlohmann::json results_json(const SweepOutput& out) {
  nlohmann::json points = nlohmann::json::array();
  std::size_t computed = 0, cached = 0, failed = 0;
  for (const SweepRow& p : out.points) {
    nlohmann::json j = to_json(p.result);
    nlohmann::json axes = nlohmann::json::object();
    for (std::size_t k = 0; k < out.axes.size(); ++k) axes[out.axes[k]] = p.labels[k];
    j["axes"] = axes;
    j["labels"] = p.labels;
    j["from_cache"] = p.result.from_cache;
    points.push_back(std::move(j));
    (p.result.from_cache ? cached : computed)++;
    if (!p.result.ok()) ++failed;
  }
  nlohmann::json j = {{"units", {{"time", "ps in *_ps fields, ns in the CSV"}, {"bandwidth", "GB/s (1e9 B/s)"}, {"bytes", "B"},
                     {"wall_seconds", "s"}}},
          {"sim_version", sim_version()},
          {"spec", out.spec_path},
          {"spec_digest", out.spec_digest},
          {"axes", out.axes},
          {"total_points", out.total_points},
          {"share", out.share},
          {"interrupted", out.interrupted},
          {"summary", {{"points", out.points.size()}, {"simulated", computed}, {"from_cache", cached}, {"failed", failed}}},
          {"points", points}};
  if (out.training) j["training"] = true;  // generated training iterations (the CSV's training columns)
  return j;
}

void write_results(const std::string& out_dir, const SweepOutput& out) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir + ": cannot create the output folder: " + ec.message());
  // Both opened before either is put in place: a results.json that cannot be
  // written must not leave a new results.csv beside the old results.json.
  OutputFile csv(out_dir + "/results.csv"), json(out_dir + "/results.json");
  csv.write(results_csv(out));
  json.write(results_json(out).dump(1) + "\n");
  csv.commit();
  json.commit();
}

void check_results_writable(const std::string& out_dir) {
  // Opening makes (and the destructors remove) the temporary files: a folder
  // or a device in the way is refused now, not after every point has run.
  const OutputFile csv(out_dir + "/results.csv"), json(out_dir + "/results.json");
}

SweepOutput read_results(const std::string& out_dir) {
  const std::string path = out_dir + "/results.json";
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open (not a sweep output folder?)");
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    SweepOutput out;
    out.spec_path = j.at("spec").get<std::string>();
    out.spec_digest = j.at("spec_digest").get<std::string>();
    out.axes = j.at("axes").get<std::vector<std::string>>();
    out.total_points = j.at("total_points").get<std::size_t>();
    out.share = j.at("share").get<std::string>();
    out.interrupted = j.at("interrupted").get<bool>();
    out.training = j.value("training", false);
    for (const auto& p : j.at("points")) {
      SweepRow row{p.at("labels").get<std::vector<std::string>>(), point_result_from_json(p)};
      row.result.from_cache = p.at("from_cache").get<bool>();
      if (row.labels.size() != out.axes.size()) throw std::runtime_error("a point's labels do not match the axes");
      out.points.push_back(std::move(row));
    }
    return out;
  } catch (const std::exception& e) {
    throw InputError(path + ": not a sweep results file: " + e.what());
  }
}

}  // namespace sim::workflows
