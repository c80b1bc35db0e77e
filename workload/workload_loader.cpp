#include "workload/workload_loader.h"

#include <malloc.h>

#include <atomic>
#include <exception>
#include <optional>
#include <thread>

#include "workload/memory_budget.h"

namespace sim {

std::vector<RankGraph> load_rank_graphs(const std::vector<std::string>& files, const GraphOptions& options,
                                        unsigned threads) {
  const std::size_t n = files.size();
  if (n > 0) {  // refuse a workload that clearly cannot fit before reading it (workload/memory_budget.h)
    const std::size_t slash = files[0].rfind('/');
    check_memory_for_load(files, n == 1 || slash == std::string::npos ? files[0] : files[0].substr(0, slash));
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  std::vector<std::optional<RankGraph>> graphs(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    RankGraph::Scratch scratch;  // one per thread, freed when its graphs are built
    for (std::size_t r; (r = next.fetch_add(1)) < n;) {
      try {
        graphs[r].emplace(files[r], static_cast<int>(r), options, &scratch);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
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
