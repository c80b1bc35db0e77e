// What `--workload X` names, opened once: every place that needs to know what
// a workload is (its graphs, its generated training spec, its rank files, the
// training facts a report prints) asks one object instead of parsing the text
// again. A scheme prefix picks the kind ("gen:", "pytorch:"; schemes.cpp);
// anything else is Chakra ET files.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/generators/spec/training_spec.h"
#include "workload/rank_graph.h"

namespace sim {

// Facts about a training iteration that reports need: per-iteration model
// FLOPs (for MFU), pipeline stages (for the bubble), and the dtype the GEMMs
// run in (for the peak MFU is taken against).
struct TrainingFacts {
  double model_flops = 0;
  std::uint32_t stages = 1;
  std::string dtype = "bf16";
};

class WorkloadSource {
 public:
  explicit WorkloadSource(std::string text) : text_(std::move(text)) {}
  virtual ~WorkloadSource() = default;
  WorkloadSource(const WorkloadSource&) = delete;
  WorkloadSource& operator=(const WorkloadSource&) = delete;

  // As the user gave it.
  const std::string& text() const { return text_; }
  // "files", "gen" or "pytorch".
  virtual std::string_view scheme() const = 0;
  // Every rank's graph (graph r is rank r), on up to `threads` threads (0: one
  // per core) where the scheme loads ranks in parallel. InputError for inputs
  // that cannot be read, naming them.
  virtual std::vector<RankGraph> graphs(const GraphOptions& options, unsigned threads = 0) const = 0;
  // The number of ranks when known without building graphs (generated
  // workloads, ET files), else nullopt.
  virtual std::optional<std::uint32_t> rank_count() const { return std::nullopt; }
  // When every rank runs the same trace on its own rank (a microbenchmark;
  // ET files holding the same bytes): rank 0's graph alone and the rank
  // count, so that rank 0 may stand for every rank where the run allows it
  // (system/scenario/identical_ranks.h); else nullopt. Files read every rank's
  // bytes to know.
  struct IdenticalRanks {
    RankGraph first;
    std::uint32_t ranks = 0;
  };
  virtual std::optional<IdenticalRanks> identical_ranks(const GraphOptions&) const { return std::nullopt; }
  // The generated training iteration's spec (gen: only), else null. Parsed
  // once, at open; lives as long as the source.
  virtual const gen::TrainingSpec* training_spec() const { return nullptr; }
  // The Chakra ET rank files (files only), indexed by rank, resolved once at
  // open; else null.
  virtual const std::vector<std::string>* rank_files() const { return nullptr; }
  // The facts of a training iteration: from the generated spec, or from rank
  // 0's ET metadata when the generator wrote it (`model_flops`, `pp`, `dtype`);
  // nullopt when the workload is no training iteration (or says nothing of
  // one). Files read rank 0's metadata on each call and throw InputError when
  // it cannot be read.
  virtual std::optional<TrainingFacts> training_facts() const { return std::nullopt; }

 private:
  std::string text_;
};

// Opens `text`: the scheme registry picks the source by prefix ("gen:",
// "pytorch:"), else it names ET files (a folder or a prefix). Throws
// InputError naming the text and what was expected: a bad generated query
// (as gen::generated_workload_spec words it), an empty pytorch: folder, ET
// files that do not resolve (with the known schemes when the text looks like
// an unknown one, "xyz:..."). A path holding ':' is still a path: only a
// registered prefix makes a scheme.
std::shared_ptr<const WorkloadSource> open_workload(const std::string& text);
// `text` as a sweep opens a point's workload: a microbenchmark's
// reduce-scatter and all-to-all sizes that do not split over its ranks are
// rounded down as nccl-tests rounds them (UnevenSize::kRoundDown,
// workload/generators/workload_generator.h) instead of refused; any other
// workload as open_workload opens it.
std::shared_ptr<const WorkloadSource> open_swept_workload(const std::string& text);

// Without opening: does `text` name a generated workload ("gen:...": a
// training iteration or a microbenchmark)? For places that only need to know
// (its query is checked at open).
bool is_generated(std::string_view text);
// ... a generated training iteration ("gen:" and no microbenchmark kind)?
bool is_generated_training(std::string_view text);

}  // namespace sim
