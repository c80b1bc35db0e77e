// Chakra ET rank files: a folder holding <prefix>.<rank>.et, or the prefix.
#include "core/error.h"
#include "workload/et_io.h"
#include "workload/loader/workload_loader.h"
#include "workload/source/scheme_sources.h"

namespace sim::source {
namespace {

struct StopReading {};

// A file's global metadata (frame 0), without reading its nodes.
et::GlobalMetadata first_metadata(const std::string& path) {
  et::GlobalMetadata md;
  try {
    read_et_wire_nodes(path, md, [](const WireNode&) { throw StopReading{}; });
  } catch (const StopReading&) {
  }
  return md;
}

class FileSource final : public WorkloadSource {
 public:
  explicit FileSource(const std::string& text) : WorkloadSource(text), files_(resolve_rank_files(text)) {}

  std::string_view scheme() const override { return "files"; }
  std::vector<RankGraph> graphs(const GraphOptions& options, unsigned threads) const override {
    return load_rank_graphs(files_, options, threads);
  }
  const std::vector<std::string>* rank_files() const override { return &files_; }
  // ETs the generator wrote say so in their metadata; traces without it are
  // no training iteration we can speak for.
  std::optional<TrainingFacts> training_facts() const override {
    if (files_.empty()) return std::nullopt;
    const et::GlobalMetadata md = first_metadata(files_[0]);
    const auto flops = metadata_number(md, "model_flops");
    if (!flops || *flops <= 0) return std::nullopt;
    return TrainingFacts{*flops, static_cast<std::uint32_t>(metadata_int(md, "pp").value_or(1)),
                         metadata_string(md, "dtype").value_or("bf16")};  // ETs written before the key: bf16
  }

 private:
  std::vector<std::string> files_;
};

}  // namespace

std::shared_ptr<const WorkloadSource> open_files(const std::string& text) {
  return std::make_shared<const FileSource>(text);
}

}  // namespace sim::source
