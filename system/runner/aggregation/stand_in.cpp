#include "system/runner/aggregation/stand_in.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace sim {

namespace {

// Two independent 64-bit streams (splitmix-style finalizers with different
// seeds), so that a collision needs both to collide.
struct Hash2 {
  std::uint64_t a = 0x243f6a8885a308d3ull, b = 0x13198a2e03707344ull;
  static std::uint64_t fin(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
  }
  void add(std::uint64_t v) {
    a = fin(a ^ (v + 0x9e3779b97f4a7c15ull));
    b = fin(b + v * 0xd6e8feb86659fd93ull + 0x632be59bd9b4e019ull);
  }
};

}  // namespace

double StandInShare::rate() const {
  const double sum = load();
  return sum > 1 ? 1 / sum : 1;
}

void StandInShare::advance(Time now) {
  if (now > updated_ && !active_.empty()) {
    const double r = rate();
    const double elapsed = static_cast<double>(now - updated_);
    // At rate 1 the arithmetic is on whole picoseconds: a lone stand-in ends exactly at start + alone-time.
    for (Active& a : active_) a.remaining = r == 1 ? a.remaining - elapsed : std::max(0.0, a.remaining - r * elapsed);
  }
  updated_ = now;
}

double StandInShare::least() const {
  double least = active_.empty() ? 0 : active_.front().remaining;
  for (const Active& a : active_) least = std::min(least, a.remaining);
  return least;
}

double StandInShare::load() const {
  double load = 0;
  for (const Active& a : active_) load += a.load;
  return load;
}

void StandInShare::consume(double work) {
  for (Active& a : active_) a.remaining = std::max(0.0, a.remaining - work);
  ++version;
}

void StandInShare::add(std::uint32_t id, Time work, double load) {
  active_.push_back(Active{id, static_cast<double>(work), load});
  ++version;
}

Time StandInShare::next_end(Time now) const {
  if (active_.empty()) return -1;
  double least = active_.front().remaining;
  for (const Active& a : active_) least = std::min(least, a.remaining);
  const double r = rate();
  return now + static_cast<Time>(std::ceil(std::max(0.0, least) / r));
}

std::vector<std::uint32_t> StandInShare::take_done() {
  std::vector<std::uint32_t> done;
  // Within a picosecond of done: the rate's rounding cannot leave less.
  const auto finished = [](const Active& a) { return a.remaining < 1.0; };
  for (const Active& a : active_) {
    if (finished(a)) done.push_back(a.id);
  }
  active_.erase(std::remove_if(active_.begin(), active_.end(), finished), active_.end());
  if (!done.empty()) ++version;
  return done;
}

std::vector<std::uint32_t> placement_shape(const std::vector<TopologyDimension>& dims,
                                           const std::vector<std::uint32_t>& members) {
  std::vector<std::uint32_t> shape;
  shape.reserve(members.size() * dims.size());
  std::vector<std::unordered_map<std::uint32_t, std::uint32_t>> seen(dims.size());
  for (const std::uint32_t npu : members) {
    std::uint32_t rest = npu;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const std::uint32_t coordinate = rest % dims[d].size;
      rest /= dims[d].size;
      shape.push_back(seen[d].try_emplace(coordinate, static_cast<std::uint32_t>(seen[d].size())).first->second);
    }
  }
  return shape;
}

std::pair<std::uint64_t, std::uint64_t> program_fingerprint(const CollectiveProgram& program) {
  Hash2 h;
  for (const char c : program.name()) h.add(static_cast<unsigned char>(c));
  const std::uint32_t n = program.group_size();
  h.add(n);
  for (std::uint32_t pos = 0; pos < n; ++pos) h.add(program.op_count(pos));
  for (const std::uint32_t pos : {0u, 1u, n / 2, n - 1}) {
    if (pos >= n) continue;
    h.add(0xffffffff00000000ull | pos);
    for_each_op(program, pos, [&](OpRef, const CollectiveOp& op) {
      h.add(static_cast<std::uint64_t>(op.kind) | std::uint64_t{op.channel} << 8 | std::uint64_t{op.peer} << 32);
      h.add(op.bytes);
      h.add(op.tag);
      h.add(static_cast<std::uint64_t>(op.duration));
      h.add(static_cast<std::uint64_t>(op.rate));
      h.add(op.proxy_ns);
      return true;
    });
  }
  return {h.a, h.b};
}

}  // namespace sim
