#include "system/producers/ten_matcher.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <queue>
#include <random>
#include <string>

#include "core/error.h"

namespace sim {

namespace {

using Word = std::uint64_t;
constexpr std::uint32_t kNone = 0xffffffffu;
// Candidates a channel looks at for the rarest chunk. Looking at all of them
// costs O(chunks) per offer (quadratic overall, 1,024 NPUs would take
// minutes); a sample from a random word keeps the choice rarest-first in
// spirit at a bounded cost.
constexpr std::uint32_t kRarestSample = 256;

class Matcher {
 public:
  Matcher(std::uint32_t npus, std::uint32_t k, const std::vector<TenChannel>& channels, std::uint32_t links,
          std::uint64_t seed)
      : n_(npus), k_(k), t_(npus * k), w_((t_ + 63) / 64), channels_(channels), held_(std::size_t{n_} * w_),
        claimed_(std::size_t{n_} * w_), claimers_(t_, 1), missing_(n_, t_ - k), busy_(links, 0), rng_(seed) {
    for (std::uint32_t j = 0; j < n_; ++j) {
      for (std::uint32_t c = j * k_; c < (j + 1) * k_; ++c) set(held_, j, c), set(claimed_, j, c);
    }
    remaining_ = static_cast<std::uint64_t>(n_) * (t_ - k_);
    // Channels grouped by destination (CSR), so an offer round walks each
    // destination's channels from a random one instead of shuffling them all.
    in_begin_.assign(n_ + 1, 0);
    for (const TenChannel& c : channels_) ++in_begin_[c.dst + 1];
    for (std::uint32_t v = 0; v < n_; ++v) in_begin_[v + 1] += in_begin_[v];
    in_.resize(channels_.size());
    std::vector<std::uint32_t> next(in_begin_.begin(), in_begin_.end() - 1);
    for (std::uint32_t i = 0; i < channels_.size(); ++i) in_[next[channels_[i].dst]++] = i;
    carrying_.assign(channels_.size(), 0);
    order_.resize(n_);
    for (std::uint32_t v = 0; v < n_; ++v) order_[v] = v;
  }

  TenSchedule run() {
    offer(0);
    while (!events_.empty()) {
      const Time now = events_.top().first;
      while (!events_.empty() && events_.top().first == now) {
        land(events_.top().second);
        events_.pop();
      }
      schedule_.finish = now;
      offer(now);
    }
    if (remaining_ > 0) unreachable();
    return std::move(schedule_);
  }

 private:
  void set(std::vector<Word>& bits, std::uint32_t npu, std::uint32_t c) {
    bits[std::size_t{npu} * w_ + c / 64] |= Word{1} << (c % 64);
  }

  // Offers every idle channel whose links are free a chunk: destinations in a
  // random order, each destination's channels from a random one on.
  void offer(Time now) {
    std::shuffle(order_.begin(), order_.end(), rng_);
    for (const std::uint32_t v : order_) {
      const std::uint32_t begin = in_begin_[v], count = in_begin_[v + 1] - begin;
      if (missing_[v] == 0 || count == 0) continue;  // v will never need another chunk
      const std::uint32_t first = static_cast<std::uint32_t>(rng_() % count);
      for (std::uint32_t i = 0; i < count && missing_[v] > 0; ++i) {
        const std::uint32_t ch = in_[begin + (first + i < count ? first + i : first + i - count)];
        if (!carrying_[ch] && free(channels_[ch])) start(ch, now);
      }
    }
  }

  bool free(const TenChannel& c) const {
    for (LinkId l : c.links) {
      if (busy_[l]) return false;
    }
    return true;
  }

  // Starts the rarest chunk the source has and the destination lacks; false when there is none.
  bool start(std::uint32_t ch, Time now) {
    const TenChannel& c = channels_[ch];
    const std::uint32_t chunk = rarest(c.src, c.dst);
    if (chunk == kNone) return false;
    set(claimed_, c.dst, chunk);
    ++claimers_[chunk];
    --missing_[c.dst];
    for (LinkId l : c.links) busy_[l] = 1;
    carrying_[ch] = 1;
    const auto index = static_cast<std::uint32_t>(schedule_.transfers.size());
    schedule_.transfers.push_back(TenTransfer{ch, chunk, now, now + c.cost});
    events_.emplace(now + c.cost, index);
    return true;
  }

  std::uint32_t rarest(std::uint32_t src, std::uint32_t dst) {
    const Word* have = &held_[std::size_t{src} * w_];
    const Word* want = &claimed_[std::size_t{dst} * w_];
    const std::uint32_t first = w_ == 1 ? 0 : static_cast<std::uint32_t>(rng_() % w_);
    std::uint32_t best = kNone, best_count = kNone, seen = 0;
    for (std::uint32_t step = 0; step < w_ && seen < kRarestSample; ++step) {
      const std::uint32_t i = first + step < w_ ? first + step : first + step - w_;
      for (Word bits = have[i] & ~want[i]; bits != 0 && seen < kRarestSample; bits &= bits - 1, ++seen) {
        const std::uint32_t chunk = i * 64 + static_cast<std::uint32_t>(std::countr_zero(bits));
        if (claimers_[chunk] < best_count) best = chunk, best_count = claimers_[chunk];
      }
    }
    return best;
  }

  void land(std::uint32_t index) {
    const TenTransfer& t = schedule_.transfers[index];
    const TenChannel& c = channels_[t.channel];
    set(held_, c.dst, t.chunk);
    --remaining_;
    for (LinkId l : c.links) busy_[l] = 0;
    carrying_[t.channel] = 0;
  }

  [[noreturn]] void unreachable() const {
    for (std::uint32_t v = 0; v < n_; ++v) {
      for (std::uint32_t c = 0; c < t_; ++c) {
        if (!(held_[std::size_t{v} * w_ + c / 64] >> (c % 64) & 1)) {
          throw InputError("synthesizer: NPU " + std::to_string(v) + " can never receive chunk " + std::to_string(c) +
                           " of NPU " + std::to_string(c / k_) +
                           ": no chain of channels (direct links, or paths through switches only) joins them");
        }
      }
    }
    throw InputError("synthesizer: the schedule stopped before every NPU held every chunk");
  }

  std::uint32_t n_, k_, t_, w_;
  const std::vector<TenChannel>& channels_;
  std::vector<Word> held_, claimed_;  // per NPU: chunks landed; landed or on the way
  std::vector<std::uint32_t> claimers_;  // per chunk: NPUs that hold or expect it
  std::vector<std::uint32_t> missing_;   // per NPU: chunks neither held nor expected
  std::vector<char> busy_;               // per physical link
  std::vector<std::uint32_t> in_begin_, in_;  // channels by destination: in_[in_begin_[v] ..)
  std::vector<char> carrying_;                 // per channel
  std::vector<std::uint32_t> order_;           // destinations, shuffled each round
  std::uint64_t remaining_ = 0;          // (NPU, chunk) pairs not landed yet
  std::priority_queue<std::pair<Time, std::uint32_t>, std::vector<std::pair<Time, std::uint32_t>>,
                      std::greater<>>
      events_;  // (end, transfer)
  std::mt19937_64 rng_;
  TenSchedule schedule_;
};

}  // namespace

TenSchedule match_all_gather(std::uint32_t npus, std::uint32_t chunks_per_npu, const std::vector<TenChannel>& channels,
                             std::uint32_t links, std::uint64_t seed) {
  if (npus == 0 || chunks_per_npu == 0) return {};
  for (const TenChannel& c : channels) {
    if (c.cost <= 0) throw InputError("synthesizer: a channel with no cost (zero latency and infinite bandwidth)");
  }
  return Matcher(npus, chunks_per_npu, channels, links, seed).run();
}

}  // namespace sim
