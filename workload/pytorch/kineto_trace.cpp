#include "workload/pytorch/kineto_trace.h"

#include "core/error.h"
#include "workload/pytorch/json_element_stream.h"
#include "workload/pytorch/trace_durations.h"

namespace sim::pytorch {

namespace {

using json = nlohmann::json;

class EventReader {
 public:
  EventReader(const std::string& path, int rank) : path_(path), rank_(rank) {}

  void read(json& e, KinetoTrace& trace) {
    ++index_;
    if (!e.is_object()) return;  // Chrome traces tolerate odd entries; nothing here is used
    auto ph = e.find("ph");
    auto cat = e.find("cat");
    if (ph == e.end() || !ph->is_string() || ph->get_ref<const std::string&>() != "X" || cat == e.end() || !cat->is_string()) return;
    const std::string& c = cat->get_ref<const std::string&>();
    const bool host_op = c == "cpu_op" || c == "user_annotation";
    const bool runtime = c == "cuda_runtime" || c == "cuda_driver";
    const bool gpu = c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset";
    if (!host_op && !runtime && !gpu) return;
    const double ts = number(e, "ts", c);
    const double dur = number(e, "dur", c);
    if (dur < 0) fail(c, "dur", "is negative");
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : std::string();
    checked_micros(dur, path_ + ": rank " + std::to_string(rank_) + ": traceEvents[" + std::to_string(index_ - 1) +
                            "] (" + c + " '" + name + "')");
    static const json kEmpty = json::object();
    auto args_it = e.find("args");
    const json& args = args_it != e.end() && args_it->is_object() ? *args_it : kEmpty;
    if (host_op) {
      KinetoOp op;
      op.ts = ts;
      op.dur = dur;
      op.tid = integer_or(e, "tid", 0);
      op.external_id = integer_or(args, "External id", -1);
      if (auto rf = args.find("Record function id"); rf != args.end() && rf->is_number_integer()) {
        op.rf_id = rf->get<std::uint64_t>();
        op.has_rf_id = true;
      }
      op.name = name;
      if (trace.pid < 0) trace.pid = integer_or(e, "pid", -1);
      if (name.rfind("ProfilerStep#", 0) == 0) trace.profiler_steps.emplace_back(ts, dur);
      trace.ops.push_back(std::move(op));
    } else if (runtime) {
      KinetoRuntime r;
      r.ts = ts;
      r.dur = dur;
      r.tid = integer_or(e, "tid", 0);
      r.external_id = integer_or(args, "External id", -1);
      r.correlation = integer_or(args, "correlation", -1);
      r.name = name;
      trace.runtime.push_back(std::move(r));
    } else {
      KinetoGpuOp g;
      g.ts = ts;
      g.dur = dur;
      auto stream = args.find("stream");
      if (stream == args.end() || !stream->is_number_integer()) fail(c, "args.stream", "is missing");
      g.stream = stream->get<std::int64_t>();
      g.device = integer_or(args, "device", 0);
      g.correlation = integer_or(args, "correlation", -1);
      g.external_id = integer_or(args, "External id", -1);
      g.name = name;
      g.category = c;
      trace.gpu.push_back(std::move(g));
    }
  }

 private:
  double number(const json& e, const char* key, const std::string& cat) const {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number()) fail(cat, key, it == e.end() ? "is missing" : "is not a number");
    return it->get<double>();
  }
  static std::int64_t integer_or(const json& j, const char* key, std::int64_t fallback) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return fallback;
    return it->get<std::int64_t>();
  }
  [[noreturn]] void fail(const std::string& cat, const std::string& field, const std::string& problem) const {
    throw InputError(path_ + ": rank " + std::to_string(rank_) + ": traceEvents[" + std::to_string(index_ - 1) +
                     "] (" + cat + "): field '" + field + "' " + problem);
  }

  const std::string& path_;
  int rank_;
  std::size_t index_ = 0;
};

}  // namespace

bool KinetoRuntime::is_sync() const {
  return name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" || name == "cudaEventSynchronize" ||
         name == "cudaMemcpy" || name == "cuCtxSynchronize" || name == "cuStreamSynchronize";
}

KinetoTrace read_kineto_trace(const std::string& path, int rank) {
  KinetoTrace trace;
  trace.path = path;
  EventReader reader(path, rank);
  json top = stream_json_array(path, "traceEvents", [&](json& e) { reader.read(e, trace); });
  if (auto id = top.find("trace_id"); id != top.end() && id->is_string()) trace.trace_id = id->get<std::string>();
  if (auto di = top.find("distributedInfo"); di != top.end()) {
    const std::string where = path + ": rank " + std::to_string(rank) + ": field 'distributedInfo";
    if (!di->is_object()) throw InputError(where + "' is not an object");
    if (auto r = di->find("rank"); r != di->end()) {
      if (!r->is_number_integer()) throw InputError(where + ".rank' is not an integer");
      trace.rank = r->get<int>();
    }
    if (auto w = di->find("world_size"); w != di->end() && w->is_number_integer()) trace.world_size = w->get<std::int64_t>();
    if (auto b = di->find("backend"); b != di->end() && b->is_string()) trace.backend = b->get<std::string>();
    if (auto pg = di->find("pg_config"); pg != di->end()) {
      if (!pg->is_array()) throw InputError(where + ".pg_config' is not a list");
      for (const json& g : *pg) {
        if (!g.is_object() || !g.contains("pg_name")) throw InputError(where + ".pg_config' holds an entry without pg_name");
        if (g.contains("ranks") && !g["ranks"].is_array()) throw InputError(where + ".pg_config[].ranks' is not a list");
      }
      trace.pg_config = std::move(*pg);
    }
  }
  return trace;
}

}  // namespace sim::pytorch
