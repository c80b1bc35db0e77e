#include "workload/workload_loader.h"

#include <atomic>
#include <exception>
#include <optional>
#include <thread>

namespace sim {

std::vector<RankGraph> load_rank_graphs(const std::vector<std::string>& files, const GraphOptions& options,
                                        unsigned threads) {
  const std::size_t n = files.size();
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  std::vector<std::optional<RankGraph>> graphs(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t r; (r = next.fetch_add(1)) < n;) {
      try {
        graphs[r].emplace(files[r], static_cast<int>(r), options);
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
  return out;
}

}  // namespace sim
