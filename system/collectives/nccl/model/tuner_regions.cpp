#include "system/collectives/nccl/model/tuner_regions.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace sim::nccl {

namespace {

// A point of the plugin's plane: log2 of nBytes, log2 of nRanks.
struct Point {
  double x = 0, y = 0;
};
Point at(double bytes, double ranks) { return {std::log2(bytes), std::log2(ranks)}; }

// The plugin's bounds: it handles up to 100 GiB and 2^20 ranks.
const double kMaxBytes = 100.0 * 1024 * 1024 * 1024;
const double kMaxRanks = 1024.0 * 1024;

// Where the line through a and b leaves the box below z (the plugin's corner,
// kMaxBytes x kMaxRanks): an edge of a region drawn "to infinity".
Point extend(Point a, Point b, Point z) {
  if (a.x == b.x) return {a.x, z.y};
  if (a.y == b.y) return {z.x, a.y};
  const double m = (a.y - b.y) / (a.x - b.x);
  const double c = b.y - m * b.x;
  const double y = m * z.x + c;
  if (y < z.y) return {z.x, y};
  return {(z.y - c) / m, z.y};
}

struct Region {
  Algo algo;
  Proto proto;
  std::vector<Point> vertices;
};

bool on_segment(Point p, Point a, Point b) {
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0;
  t = std::fmin(1.0, std::fmax(0.0, t));
  const double ex = a.x + t * dx - p.x, ey = a.y + t * dy - p.y;
  return ex * ex + ey * ey < 1e-18;
}

// Inside or on an edge (the plugin counts its edges in).
bool holds(const Region& r, Point p) {
  const std::size_t n = r.vertices.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (on_segment(p, r.vertices[i], r.vertices[(i + 1) % n])) return true;
  }
  bool inside = false;
  for (std::size_t i = 0, j = n - 1; i < n; j = i++) {
    const Point a = r.vertices[i], b = r.vertices[j];
    if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}

// aws-ofi-nccl's p5/p5e all-reduce regions, 8 ranks per node (vertices as
// (nBytes, nRanks), in the plugin's order).
const std::vector<Region>& aws_p5_all_reduce() {
  static const std::vector<Region> regions = [] {
    const Point corner = at(kMaxBytes, kMaxRanks);
    const Point tree_top = extend(at(402653184, 2048), at(402653184, 4096), corner);
    const Point steep = extend(at(8053063680, 160), at(9663676416, 192), corner);
    std::vector<Region> r;
    r.push_back({Algo::kTree, Proto::kLL128,
                 {at(1, 16), at(31457280, 16), at(37748736, 32), at(117440512, 64), at(301989888, 128),
                  at(301989888, 256), at(335544320, 512), at(536870912, 1024), at(402653184, 2048),
                  at(402653184, 4096), tree_top, Point{0, tree_top.y}}});
    r.push_back({Algo::kNvlsTree, Proto::kSimple, {at(31457281, 16), at(kMaxBytes, 16), at(31457281, 16)}});
    r.push_back({Algo::kRing, Proto::kLL128,
                 {at(31457280, 17), at(1073741824, 17), at(2147483648, 64), at(2147483648, 128),
                  at(1342177280, 160), at(2147483648, 256), at(1074790400, 256), at(444596224, 160),
                  at(301989888, 128), at(117440512, 64), at(37748736, 32)}});
    r.push_back({Algo::kNvlsTree, Proto::kSimple,
                 {at(2147483648, 128), at(6442450944, 128), at(8053063680, 160), at(9663676416, 192), steep,
                  tree_top, at(402653184, 4096), at(402653184, 2048), at(536870912, 1024), at(335544320, 512),
                  at(301989888, 256), at(310378496, 160), at(444596224, 160), at(1074790400, 256),
                  at(2684354560, 256), at(2147483648, 224), at(1342177280, 160)}});
    r.push_back({Algo::kRing, Proto::kSimple,
                 {at(1073741824, 17), Point{steep.x, std::log2(17.0)}, steep, at(9663676416, 192),
                  at(8053063680, 160), at(2684354560, 64), at(1610612736, 32)}});
    return r;
  }();
  return regions;
}

}  // namespace

TunerPlugin tuner_plugin(const std::string& name) {
  if (name == "none") return TunerPlugin::kNone;
  if (name == "aws-p5") return TunerPlugin::kAwsP5;
  throw InputError("nccl: tuner must be none (NCCL's own model) or aws-p5 (aws-ofi-nccl's p5/p5e regions), not '" +
                   name + "'");
}

const char* tuner_plugin_name(TunerPlugin t) { return t == TunerPlugin::kAwsP5 ? "aws-p5" : "none"; }

std::optional<TunerPick> tuner_pick(TunerPlugin t, CollectiveType type, std::uint64_t n_bytes, int ranks, int nodes) {
  if (t != TunerPlugin::kAwsP5 || type != CollectiveType::kAllReduce || nodes < 1 || ranks != 8 * nodes) return {};
  // The plugin leaves two nodes or fewer to NCCL's model ("the regions are not
  // well defined" there: region_get_coll_info_internal_v2/_v3 return before
  // the table when num_nodes <= 2), though its table starts at 16 ranks.
  if (nodes <= 2) return {};
  if (n_bytes == 0 || static_cast<double>(n_bytes) > kMaxBytes) return {};
  const Point p = at(static_cast<double>(n_bytes), ranks);
  for (const Region& r : aws_p5_all_reduce()) {
    if (holds(r, p)) return TunerPick{r.algo, r.proto};
  }
  return {};
}

}  // namespace sim::nccl
