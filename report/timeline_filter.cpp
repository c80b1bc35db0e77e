#include "report/timeline_filter.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string_view>

#include "core/error.h"
#include "core/units.h"

namespace sim {

namespace {

std::uint32_t parse_rank(std::string_view item, const std::string& whole) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
  if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
    throw InputError(std::string("--timeline-ranks '").append(whole).append("': '").append(item).append(
        "' is not a rank (expected a list like 0-3,7)"));
  }
  return v;
}

}  // namespace

void TimelineFilter::set_ranks(const std::string& text) {
  ranks_.clear();
  ranks_text_ = text;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto dash = item.find('-');
    const std::uint32_t lo = parse_rank(item.substr(0, dash), text);
    const std::uint32_t hi = dash == std::string_view::npos ? lo : parse_rank(item.substr(dash + 1), text);
    if (hi < lo) {
      throw InputError(std::string("--timeline-ranks '").append(text).append("': range '").append(item).append(
          "' runs backwards"));
    }
    ranks_.emplace_back(lo, hi);
  }
}

void TimelineFilter::set_window(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw InputError("--timeline-window '" + text + "': expected <from>:<to>, e.g. 1ms:2ms (either side may be empty)");
  }
  try {
    const std::string from = text.substr(0, colon), to = text.substr(colon + 1);
    if (!from.empty()) from_ = parse_time(from);
    if (!to.empty()) to_ = parse_time(to);
  } catch (const std::invalid_argument& e) {
    throw InputError("--timeline-window '" + text + "': " + e.what());
  }
  if (to_ < from_) throw InputError("--timeline-window '" + text + "': the window ends before it starts");
}

void TimelineFilter::check_ranks(std::uint32_t count) const {
  for (const auto& [lo, hi] : ranks_) {
    if (hi < count) continue;
    const std::uint32_t absent = std::max(lo, count);
    throw InputError("--timeline-ranks '" + ranks_text_ + "': rank " + std::to_string(absent) +
                     " is not in the run, which has " + std::to_string(count) + " ranks (0.." +
                     std::to_string(count == 0 ? 0 : count - 1) + ")");
  }
}

bool TimelineFilter::keeps_rank(std::uint32_t rank) const {
  for (const auto& [lo, hi] : ranks_) {
    if (rank >= lo && rank <= hi) return true;
  }
  return false;
}

}  // namespace sim
