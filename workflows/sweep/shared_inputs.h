// Inputs loaded once and shared read-only by the points of a sweep that run
// on threads: topologies (by the digest of their text) and workloads (by
// their files' digests, or a microbenchmark's parameters) and injected
// collective algorithms (by path and type: files do not change during a sweep).
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "network/topology.h"
#include "system/program/et_algorithm.h"
#include "workload/rank_graph.h"

namespace sim::workflows {

// Loads each key once, however many threads ask; a load that throws throws
// the same error to every asker.
template <class T>
class LoadOnce {
 public:
  std::shared_ptr<const T> get(const std::string& key, const std::function<T()>& load) {
    std::promise<std::shared_ptr<const T>> promise;
    std::shared_future<std::shared_ptr<const T>> future;
    bool mine = false;
    {
      std::lock_guard lock(mutex_);
      auto it = loaded_.find(key);
      if (it == loaded_.end()) {
        future = promise.get_future().share();
        loaded_.emplace(key, future);
        mine = true;
      } else {
        future = it->second;
      }
    }
    if (mine) {
      try {
        promise.set_value(std::make_shared<const T>(load()));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }
    return future.get();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_future<std::shared_ptr<const T>>> loaded_;
};

struct SharedInputs {
  LoadOnce<Topology> topologies;
  LoadOnce<std::vector<RankGraph>> workloads;
  LoadOnce<EtAlgorithm> algorithms;  // injected collective algorithms, by source and type
  // Algorithms points make (gen:, synth; workflows/sweep/generated_algorithm.h):
  // their ET prefix under `generated_folder`, by generated_algorithm_id().
  std::string generated_folder;
  LoadOnce<std::string> generated;
};

}  // namespace sim::workflows
