#include "workflows/sweep/sweep_runner.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

#include "core/error.h"
#include "workflows/sweep/interrupt.h"
#include "workflows/sweep/point_inputs.h"
#include "workflows/sweep/point_runner.h"
#include "workflows/sweep/progress.h"
#include "workflows/sweep/result_cache.h"
#include "workflows/sweep/results_writer.h"
#include "workflows/sweep/sweep_spec.h"
#include "workload/source/workload_source.h"

namespace sim::workflows {

// I/K, decimal digits on both sides (std::stoul took " 1/2", "+1/2" and, as
// 2^64 - 1, "-1/2").
void parse_shard(const std::string& text, unsigned& index, unsigned& count) {
  const auto whole = [](std::string_view digits, unsigned long& v) {
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    return !digits.empty() && ec == std::errc() && ptr == digits.data() + digits.size();
  };
  const auto slash = text.find('/');
  unsigned long i = 0, k = 0;
  if (slash == std::string::npos || !whole(std::string_view(text).substr(0, slash), i) ||
      !whole(std::string_view(text).substr(slash + 1), k) || k == 0 || i >= k || k > (1u << 20)) {
    throw InputError("--shard '" + text + "': expected I/K with 0 <= I < K (e.g. 0/4)");
  }
  index = static_cast<unsigned>(i);
  count = static_cast<unsigned>(k);
}

namespace {

// The indices of the points this process runs.
std::vector<std::size_t> my_share(std::size_t total, const SweepOptions& o) {
  std::vector<std::size_t> shard;
  for (std::size_t i = o.shard_index; i < total; i += o.shard_count) shard.push_back(i);
  if (!o.communicator) return shard;
  std::vector<std::size_t> mine;
  const auto size = static_cast<std::size_t>(o.communicator->size());
  for (std::size_t k = static_cast<std::size_t>(o.communicator->rank()); k < shard.size(); k += size) {
    mine.push_back(shard[k]);
  }
  return mine;
}

struct Work {
  std::size_t index;
  const PointInputs* inputs;
};

// Runs `work` on `jobs` threads; results land in `done` by point index.
void run_points(const std::vector<Work>& work, unsigned jobs, const ResultCache& cache, SweepProgress& progress,
                const std::string& out_dir, std::map<std::size_t, PointResult>& done) {
  SharedInputs shared;
  shared.generated_folder = out_dir + "/generated";
  std::vector<PointResult> results(work.size());
  std::vector<char> finished(work.size(), 0);
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::string store_error;
  auto worker = [&] {
    for (std::size_t k; !InterruptGuard::requested() && (k = next.fetch_add(1)) < work.size();) {
      results[k] = run_point(work[k].index, *work[k].inputs, shared);
      try {
        cache.store(results[k]);  // saved the moment it finishes
      } catch (const std::exception& e) {
        std::lock_guard lock(error_mutex);
        store_error = e.what();
      }
      finished[k] = 1;
      progress.point_done(!results[k].ok());
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(work.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (!store_error.empty()) throw InputError("cannot save a finished point: " + store_error);
  for (std::size_t k = 0; k < work.size(); ++k) {
    if (finished[k]) done.emplace(work[k].index, std::move(results[k]));
  }
}

std::vector<SweepRow> gather_rows(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                                  std::map<std::size_t, PointResult>& done, Communicator* comm, const ResultCache& cache) {
  if (comm && comm->size() > 1) {
    nlohmann::json mine = nlohmann::json::array();
    for (const auto& [index, r] : done) {
      nlohmann::json j = to_json(r);
      j["from_cache"] = r.from_cache;
      mine.push_back(std::move(j));
    }
    const std::vector<std::string> all = comm->gather(mine.dump());
    for (std::size_t rank = 1; rank < all.size(); ++rank) {
      for (const auto& j : nlohmann::json::parse(all[rank])) {
        PointResult r = point_result_from_json(j);
        r.from_cache = j.at("from_cache").get<bool>();
        if (!r.from_cache) cache.store(r);  // another machine's cache may not be this one's
        done.emplace(r.index, std::move(r));
      }
    }
  }
  std::vector<SweepRow> rows;
  for (auto& [index, r] : done) {
    std::vector<std::string> labels;
    for (std::size_t k = 0; k < spec.axes.size(); ++k) labels.push_back(spec.axes[k].labels[points[index].choice[k]]);
    rows.push_back(SweepRow{std::move(labels), std::move(r)});
  }
  return rows;
}

}  // namespace

int run_sweep(const SweepOptions& o, std::ostream& out) {
  if (o.out_dir.empty()) throw InputError("sim sweep: -o OUTDIR is required");
  const SweepSpec spec = load_sweep_spec(o.spec);
  const std::vector<SweepPoint> points = expand_points(spec);
  const std::vector<std::size_t> share = my_share(points.size(), o);
  const bool root = !o.communicator || o.communicator->rank() == 0;

  // Inputs are read (and keys computed) before anything runs, on this thread.
  InputReader reader(spec);
  std::vector<PointInputs> inputs;
  inputs.reserve(share.size());
  for (std::size_t i : share) inputs.push_back(reader.read(points[i].settings));

  const ResultCache cache(o.out_dir);
  if (root) check_results_writable(o.out_dir);
  std::map<std::size_t, PointResult> done;
  std::map<std::string, std::size_t> first_with_key;  // equal keys run once
  std::vector<Work> work;
  std::vector<std::pair<std::size_t, std::size_t>> copies;  // (point, point with its key)
  for (std::size_t k = 0; k < share.size(); ++k) {
    const std::size_t index = share[k];
    if (o.reuse) {
      if (std::optional<PointResult> hit = cache.find(inputs[k].key)) {
        hit->index = index;
        done.emplace(index, std::move(*hit));
        continue;
      }
    }
    const auto [it, fresh] = first_with_key.emplace(inputs[k].key, index);
    if (fresh) work.push_back(Work{index, &inputs[k]});
    else copies.emplace_back(index, it->second);
  }

  const unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::ostringstream sink;
  SweepProgress progress(o.quiet || !root ? static_cast<std::ostream&>(sink) : std::cerr, stderr_is_terminal(),
                         work.size(), done.size(), o.progress_interval);
  {
    const InterruptGuard guard;
    run_points(work, jobs, cache, progress, o.out_dir, done);
    progress.finish();
  }
  for (const auto& [index, same] : copies) {
    if (auto it = done.find(same); it != done.end()) {
      PointResult r = it->second;
      r.index = index;
      done.emplace(index, std::move(r));
    }
  }

  SweepOutput output;
  output.spec_path = o.spec;
  output.spec_digest = spec.digest;
  for (const Axis& a : spec.axes) output.axes.push_back(a.name);
  output.total_points = points.size();
  output.share = o.shard_count == 1 ? "all" : std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count);
  output.interrupted = InterruptGuard::requested();
  for (const SweepPoint& p : points) output.training = output.training || is_generated_training(p.settings.workload);
  output.points = gather_rows(spec, points, done, o.communicator, cache);
  if (!root) return kSweepOk;

  write_results(o.out_dir, output);
  std::size_t failed = 0, computed = 0;
  for (const SweepRow& r : output.points) {
    if (!r.result.ok()) ++failed;
    if (!r.result.from_cache) ++computed;
  }
  const std::size_t expected = o.shard_count == 1 ? points.size() : (points.size() + o.shard_count - 1 - o.shard_index) / o.shard_count;
  if (!o.quiet) {
    out << "sweep: " << output.points.size() << " of " << expected << " points (" << computed << " simulated, "
        << output.points.size() - computed << " from cache, " << failed << " failed); wrote " << o.out_dir
        << "/results.csv and results.json\n";
    std::size_t shown = 0;
    for (const SweepRow& r : output.points) {
      if (!r.result.ok() && ++shown <= 10) out << "  point " << r.result.index << " failed (exit " << r.result.exit_code << "): " << r.result.message << "\n";
    }
  }
  if (output.interrupted || output.points.size() < expected) {
    std::cerr << "sim: sweep interrupted: " << output.points.size() << " of " << expected
              << " points saved; run the same command again to finish\n";
    return kSweepInterrupted;
  }
  return failed ? kSweepPointsFailed : kSweepOk;
}

}  // namespace sim::workflows
