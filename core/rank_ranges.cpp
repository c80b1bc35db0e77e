#include "core/rank_ranges.h"

#include <algorithm>
#include <cstdint>

namespace sim {

std::string rank_ranges(std::vector<std::int64_t> ranks, std::size_t max_chars) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j] < INT64_MAX && ranks[j + 1] == ranks[j] + 1) ++j;
    std::string run = std::to_string(ranks[i]);
    if (j > i) run += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    if (!out.empty() && out.size() + 2 + run.size() > max_chars) {
      return out + ", ... (" + std::to_string(ranks.size()) + " ranks)";
    }
    out += (out.empty() ? "" : ", ") + run;
    i = j + 1;
  }
  return out;
}

std::string rank_sequence(const std::vector<std::int64_t>& ranks) {
  std::string s = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i == 8 && ranks.size() > 10) {
      s += ", ... (" + std::to_string(ranks.size()) + " ranks)";
      break;
    }
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  return s + "]";
}

std::string rank_sequence(const std::vector<std::uint32_t>& ranks) {
  return rank_sequence(std::vector<std::int64_t>(ranks.begin(), ranks.end()));
}

}  // namespace sim
