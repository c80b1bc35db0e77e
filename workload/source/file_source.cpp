// Chakra ET rank files: a folder holding <prefix>.<rank>.et, or the prefix.
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "core/input_file.h"
#include "workload/et/et_io.h"
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

// Whether every file holds the same bytes as the first: sizes first (a cheap
// no for most workloads), then contents, each read with the size its stat
// gave (no second stat per file: on a virtual machine a system call costs
// tens of microseconds, and a microbenchmark has thousands of ranks).
bool traces_identical(const std::vector<std::string>& files) {
  if (files.size() < 2) return false;
  std::vector<std::uint64_t> sizes(files.size());
  std::error_code ec;
  for (std::size_t i = 0; i < files.size(); ++i) {
    sizes[i] = std::filesystem::file_size(files[i], ec);
    if (ec || sizes[i] != sizes[0]) return false;
  }
  constexpr auto kAny = std::numeric_limits<std::uint64_t>::max();
  FileBuffer first_buffer, buffer;
  const std::string_view first = first_buffer.read_sized(files[0], "trace", kAny, sizes[0]);
  for (std::size_t i = 1; i < files.size(); ++i) {
    if (buffer.read_sized(files[i], "trace", kAny, sizes[i]) != first) return false;
  }
  return true;
}

class FileSource final : public WorkloadSource {
 public:
  explicit FileSource(const std::string& text) : WorkloadSource(text), files_(resolve_rank_files(text)) {}

  std::string_view scheme() const override { return "files"; }
  std::vector<RankGraph> graphs(const GraphOptions& options, unsigned threads) const override {
    return load_rank_graphs(files_, options, threads);
  }
  const std::vector<std::string>* rank_files() const override { return &files_; }
  std::optional<std::uint32_t> rank_count() const override { return static_cast<std::uint32_t>(files_.size()); }
  std::optional<IdenticalRanks> identical_ranks(const GraphOptions& options) const override {
    if (!traces_identical(files_)) return std::nullopt;
    return IdenticalRanks{RankGraph(files_[0], 0, options), static_cast<std::uint32_t>(files_.size())};
  }
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
