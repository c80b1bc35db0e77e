#include "workload/loader/workload_loader.h"

#include <malloc.h>

#include <atomic>
#include <limits>
#include <exception>
#include <optional>
#include <thread>

#include "core/input_file.h"
#include "workload/loader/memory_budget.h"

namespace sim {

std::vector<RankGraph> load_rank_graphs(const std::vector<std::string>& files, const GraphOptions& options,
                                        unsigned threads, LoadStats* stats) {
  const std::size_t n = files.size();
  // The files' sizes, as the memory budget's stat found them (-1: unknown):
  // each file is then read without a stat of its own.
  std::vector<std::int64_t> sizes;
  if (n > 0) {  // refuse a workload that clearly cannot fit before reading it (workload/loader/memory_budget.h)
    const std::size_t slash = files[0].rfind('/');
    check_memory_for_load(files, n == 1 || slash == std::string::npos ? files[0] : files[0].substr(0, slash),
                          &sizes);
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  std::vector<std::optional<RankGraph>> graphs(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> decoded{0};
  auto work = [&] {
    RankGraph::Scratch scratch;  // one per thread, freed when its graphs are built
    // A trace whose bytes are those of this thread's previous one (ASTRA-sim's
    // per-rank files, a data-parallel step written once per rank) shares that
    // graph instead of being decoded again: the graph is a function of the
    // bytes. Two buffers, swapped: the previous file's bytes stay as read.
    FileBuffer buffers[2];
    int current = 0;  // the buffer the next file is read into; the other holds `previous`
    std::string_view previous;
    std::size_t previous_rank = n;
    std::size_t mine = 0;
    for (std::size_t r; (r = next.fetch_add(1)) < n;) {
      try {
        if (options.protobuf_decoder) {  // reads the file itself
          graphs[r].emplace(files[r], static_cast<int>(r), options, &scratch);
          ++mine;
          continue;
        }
        FileBuffer& buffer = buffers[current];
        constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
        const std::string_view bytes = sizes[r] >= 0
                                           ? buffer.read_sized(files[r], "trace", kNoLimit, static_cast<std::uint64_t>(sizes[r]))
                                           : buffer.read(files[r], "trace", kNoLimit);
        if (previous_rank < n && bytes == previous) {
          graphs[r].emplace(*graphs[previous_rank], static_cast<int>(r), files[r]);
          continue;
        }
        graphs[r].emplace(bytes, files[r], static_cast<int>(r), options, &scratch);
        ++mine;
        if (buffer.capacity() > RankGraph::kKeptFileBytes) {  // one huge trace: not kept
          buffer.release();
          previous = {};
          previous_rank = n;
        } else {
          previous = bytes;
          previous_rank = r;
          current ^= 1;
        }
      } catch (...) {
        errors[r] = std::current_exception();
      }
    }
    decoded += mine;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  if (stats) stats->decoded = decoded;
  std::vector<RankGraph> out;
  out.reserve(n);
  for (auto& g : graphs) out.push_back(std::move(*g));
  // Give back the pages the decoding left free (file buffers, construction
  // state, growth slack): without this they stay resident and count in the
  // run's peak (9 MiB of benchmark (p)'s, docs/benchmarks.md).
  malloc_trim(0);
  return out;
}

}  // namespace sim
