#include "workload/generators/transformer/expert_load.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/checked_count.h"

namespace sim::gen {
namespace {

// splitmix64 (Steele, Lea, Flood, OOPSLA 2014): a fixed, portable sequence.
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Popularity rank (0-based) of each expert in `layer`: Fisher-Yates with
// splitmix64 seeded by (seed, layer); the modulo's bias is irrelevant here.
std::vector<std::uint32_t> popularity(std::uint32_t experts, std::uint64_t seed, std::uint64_t layer) {
  std::vector<std::uint32_t> order(experts);
  std::iota(order.begin(), order.end(), 0u);
  std::uint64_t state = seed ^ (layer * 0xd1b54a32d192ed03ull);
  for (std::uint32_t i = experts; i > 1; --i) std::swap(order[i - 1], order[splitmix64(state) % i]);
  std::vector<std::uint32_t> rank(experts);
  for (std::uint32_t i = 0; i < experts; ++i) rank[order[i]] = i;
  return rank;
}

}  // namespace

std::vector<std::uint64_t> expert_tokens(const TrainingSpec& t, std::uint64_t layer) {
  const MoeConfig& moe = t.model.moe;
  const std::uint32_t E = moe.experts;
  const std::uint64_t per_rank = t.plan.sp ? t.tokens() / t.plan.tp : t.tokens();
  // make_training_spec's limits keep N well inside 64 bits.
  const std::uint64_t N = per_rank * moe.top_k * t.plan.ep, most = N / moe.top_k;
  std::vector<std::uint64_t> count(E, N / E);
  if (moe.routing.zipf) {
    const std::vector<std::uint32_t> rank = popularity(E, moe.routing.seed, layer);
    // Zipf weights by popularity rank, decreasing: the shares held at the
    // cap 1 / top_k are a prefix of them. With the first c held, the rest
    // share 1 - c / top_k in proportion; c is the fewest for which the next
    // share is within the cap (at most top_k of them; suffix sums: O(E)).
    std::vector<double> weight(E), suffix(std::size_t{E} + 1, 0);
    for (std::uint32_t i = 0; i < E; ++i) weight[i] = std::pow(static_cast<double>(i) + 1, -moe.routing.exponent);
    for (std::uint32_t i = E; i-- > 0;) suffix[i] = suffix[i + 1] + weight[i];
    const double cap = 1.0 / moe.top_k;
    std::uint32_t held = 0;
    while (held < E && held < moe.top_k && weight[held] * (1 - held * cap) > cap * suffix[held]) ++held;
    const double rest = held < E && suffix[held] > 0 ? (1 - held * cap) / suffix[held] : 0;
    std::vector<double> share(E);
    for (std::uint32_t e = 0; e < E; ++e) share[e] = rank[e] < held ? cap : weight[rank[e]] * rest;
    // Largest remainder: floors, then one more token to the largest
    // fractions (lower expert first on ties) until N are placed.
    std::vector<double> frac(E);
    std::uint64_t placed = 0;
    for (std::uint32_t e = 0; e < E; ++e) {
      const double exact = share[e] * static_cast<double>(N);
      count[e] = std::min<std::uint64_t>(most, static_cast<std::uint64_t>(std::floor(exact)));
      frac[e] = exact - static_cast<double>(count[e]);
      placed += count[e];
    }
    std::vector<std::uint32_t> by_frac(E);
    std::iota(by_frac.begin(), by_frac.end(), 0u);
    std::stable_sort(by_frac.begin(), by_frac.end(), [&](std::uint32_t a, std::uint32_t b) { return frac[a] > frac[b]; });
    // Rounding may leave more than E to place; each pass adds one per expert below the cap.
    while (placed < N) {
      const std::uint64_t before = placed;
      for (std::uint32_t i = 0; i < E && placed < N; ++i) {
        if (count[by_frac[i]] < most) ++count[by_frac[i]], ++placed;
      }
      if (placed == before) break;  // every expert at its cap: N = E x most cannot be passed
    }
    while (placed > N) {  // floors of rounded-up doubles: take back from the smallest fractions
      for (std::uint32_t i = E; i-- > 0 && placed > N;) {
        if (count[by_frac[i]] > 0) --count[by_frac[i]], --placed;
      }
    }
  }
  if (moe.capacity_factor > 0) {
    const double slots = std::ceil(moe.capacity_factor * static_cast<double>(N) / E);
    const std::uint64_t capacity = slots >= static_cast<double>(N) ? N : static_cast<std::uint64_t>(slots);
    for (std::uint64_t& c : count) c = std::min(c, capacity);
  }
  return count;
}

RankExpertLoad rank_expert_load(const TrainingSpec& t, std::uint64_t layer, std::uint32_t ep_position) {
  const std::vector<std::uint64_t> count = expert_tokens(t, layer);
  const std::uint32_t local = t.model.moe.experts / t.plan.ep;
  RankExpertLoad r;
  for (std::uint32_t j = 0; j < t.plan.ep; ++j) {
    const std::uint64_t sum =
        std::accumulate(count.begin() + std::size_t{j} * local, count.begin() + std::size_t{j + 1} * local, std::uint64_t{0});
    r.heaviest_rank = std::max(r.heaviest_rank, sum);
    if (j == ep_position) {
      r.local.assign(count.begin() + std::size_t{j} * local, count.begin() + std::size_t{j + 1} * local);
      r.total = sum;
    }
  }
  return r;
}

}  // namespace sim::gen
