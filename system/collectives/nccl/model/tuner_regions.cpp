#include "system/collectives/nccl/model/tuner_regions.h"

#include <cmath>
#include <functional>
#include <vector>

#include "core/error.h"

namespace sim::nccl {

namespace {

// A point of the plugin's plane: nBytes and nRanks as they are, not their
// logarithms (region_get_coll_info_internal_v3 sets p.x = nBytes, p.y =
// nRanks), so an edge is straight in bytes and ranks. Between two vertices'
// rank counts a boundary moves linearly in bytes, and an edge drawn to the
// plugin's far corner (`extend`) is nearly flat in ranks over most sizes.
struct Point {
  double x = 0, y = 0;
};
Point at(double bytes, double ranks) { return {bytes, ranks}; }

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

double cross(Point a, Point b) { return a.x * b.y - a.y * b.x; }
Point minus(Point a, Point b) { return {a.x - b.x, a.y - b.y}; }

// The plugin's tolerance, on the parameters along an edge and on a distance.
const double kEps = 1e-10;

// Whether p lies on the edge a-b: its foot on the edge's line falls within
// the edge (ends included, to kEps of the edge's length) and it is nearer
// than kEps to it. A zero-length edge (a region drawn as a line, whose
// polygon returns to its first vertex) holds only its own point.
bool on_edge(Point p, Point a, Point b) {
  const Point d = minus(b, a), w = minus(p, a);
  const double len2 = d.x * d.x + d.y * d.y;
  if (len2 == 0) return w.x == 0 && w.y == 0;
  const double t = (w.x * d.x + w.y * d.y) / len2;
  if (t < -kEps || t > 1 + kEps) return false;
  return std::fabs(cross(d, w)) / std::sqrt(len2) < kEps;
}

// Whether the ray from p to the plugin's far point e crosses the edge a-b
// properly: through the edge's inside, not within kEps (as a fraction of
// the edge) of either end. A ray through a vertex crosses neither edge
// there, as in the plugin, whose assert on that case a release build drops;
// on an edge some 1e11 bytes long that fraction is about 11 bytes, so a
// point that close to a vertex on the far side of one is outside (the
// plugin's own decisions show it: tree/LL128 on 128 GPUs of 128 nodes from
// 119,477,259 B, not from its vertex at 119,477,248). The products are
// taken before their difference, in that order, so that boundaries agree
// with the plugin's to the byte.
bool crosses(Point p, Point e, Point a, Point b) {
  const Point r = minus(e, p), d = minus(b, a);
  const double den = cross(d, r);
  if (std::fabs(den) < kEps) return false;  // parallel
  const long double along_edge = static_cast<long double>(cross(p, r) - cross(a, r)) / den;
  if (along_edge < kEps || along_edge > 1 - kEps) return false;
  const double along_ray = (cross(p, d) - cross(a, d)) / den;
  return along_ray >= 0 && along_ray <= 1;
}

// The plugin's test (is_inside_region): on an edge holds; outside the
// vertices' bounding box does not; otherwise an odd count of proper
// crossings of the ray towards (2 x kMaxBytes, 2 x kMaxRanks).
bool holds(const Region& r, Point p) {
  const std::size_t n = r.vertices.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (on_edge(p, r.vertices[i], r.vertices[(i + 1) % n])) return true;
  }
  double lo_x = r.vertices[0].x, hi_x = lo_x, lo_y = r.vertices[0].y, hi_y = lo_y;
  for (const Point& v : r.vertices) {
    lo_x = std::fmin(lo_x, v.x), hi_x = std::fmax(hi_x, v.x);
    lo_y = std::fmin(lo_y, v.y), hi_y = std::fmax(hi_y, v.y);
  }
  if (p.x < lo_x || p.x > hi_x || p.y < lo_y || p.y > hi_y) return false;
  const Point far{2 * kMaxBytes, 2 * kMaxRanks};
  bool inside = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (crosses(p, far, r.vertices[i], r.vertices[(i + 1) % n])) inside = !inside;
  }
  return inside;
}

// aws-ofi-nccl's p5/p5e regions (region_init_internal_p5_p5e), vertices as
// (nBytes, nRanks) in the plugin's order.
using Regions = std::vector<Region>;

// All-reduce, 8 ranks per node.
const Regions& p5_all_reduce_8() {
  static const Regions regions = [] {
    const Point corner = at(kMaxBytes, kMaxRanks);
    const Point tree_top = extend(at(402653184, 2048), at(402653184, 4096), corner);
    const Point steep = extend(at(8053063680, 160), at(9663676416, 192), corner);
    Regions r;
    r.push_back({Algo::kTree, Proto::kLL128,
                 {at(0, 16), at(31457280, 16), at(37748736, 32), at(117440512, 64), at(301989888, 128),
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
                 {at(1073741824, 17), at(steep.x, 17), steep, at(9663676416, 192),
                  at(8053063680, 160), at(2684354560, 64), at(1610612736, 32)}});
    return r;
  }();
  return regions;
}

// All-reduce, 2 ranks per node (a group of every fourth GPU, as a data-parallel
// group beside tensor parallelism of 4). Its two regions on 4 ranks are lines
// the plugin never reaches: it skips two nodes or fewer.
const Regions& p5_all_reduce_2() {
  static const Regions regions = [] {
    const Point corner = at(kMaxBytes, kMaxRanks);
    const Point tree_ll128 = extend(at(88160256, 128), at(178163712, 256), corner);
    const Point tree_simple_1 = extend(at(787480576, 128), at(1073741824, 256), corner);
    const Point tree_simple_2 = extend(at(257114112, 128), at(269484032, 256), corner);
    const Point nvlstree = tree_simple_1;  // the plugin extends the same two points for both
    Regions r;
    r.push_back({Algo::kTree, Proto::kLL128,
                 {at(0, 4), at(1314816, 4), at(1051648, 8), at(1051648, 12), at(2367488, 16), at(5525504, 32),
                  at(9473024, 64), at(88160256, 128), at(178163712, 256), tree_ll128, Point{0, tree_ll128.y}}});
    r.push_back({Algo::kRing, Proto::kLL128,
                 {at(1314816, 4), at(19736576, 4), at(41842688, 8), at(296747008, 64), at(257114112, 128),
                  at(269484032, 256), at(178163712, 256), at(88160256, 128), at(9473024, 64), at(5525504, 32),
                  at(2367488, 16), at(1051648, 12), at(1051648, 8), at(1314816, 4)}});
    r.push_back({Algo::kNvlsTree, Proto::kSimple,
                 {at(19736576, 4), at(81844224, 4), at(275775488, 8), at(275775488, 48), at(296747008, 64),
                  at(41842688, 8)}});
    r.push_back({Algo::kTree, Proto::kLL128, {at(81844224, 4), at(269484032, 4), at(81844224, 4)}});
    r.push_back({Algo::kTree, Proto::kSimple, {at(269484032, 4), at(kMaxBytes, 4), at(269484032, 4)}});
    r.push_back({Algo::kRing, Proto::kSimple,
                 {at(81844224, 5), at(kMaxBytes, 5), at(kMaxBytes, 32), at(1073741824, 40), at(1073741824, 128),
                  at(787480576, 128), at(296747008, 64), at(275775488, 48), at(275775488, 8), at(81844224, 5)}});
    r.push_back({Algo::kTree, Proto::kSimple,
                 {at(296747008, 64), at(787480576, 128), at(1073741824, 256), tree_simple_1, tree_simple_2,
                  at(269484032, 256), at(257114112, 128)}});
    r.push_back({Algo::kNvlsTree, Proto::kSimple,
                 {nvlstree, at(1073741824, 256), at(787480576, 128), at(1073741824, 128), at(1073741824, 40),
                  at(kMaxBytes, 32)}});
    return r;
  }();
  return regions;
}

// All-reduce, 1 rank per node (a group of one GPU a node, as a data-parallel
// group beside tensor parallelism of 8). The plugin closes tree/LL128's five
// vertices from the far point straight back to (0, 16), so on the linear
// plane that region is a sliver along its lower chain: from 24 ranks on, small
// sizes fall in no region and NCCL's model chooses (as the plugin leaves it).
const Regions& p5_all_reduce_1() {
  static const Regions regions = [] {
    const Point corner = at(kMaxBytes, kMaxRanks);
    const Point tree_ll128 = extend(at(9999360, 64), at(119477248, 128), corner);
    const Point ring_ll128 = extend(at(4736000, 2), at(269484032, 128), corner);
    Regions r;
    r.push_back({Algo::kTree, Proto::kLL128,
                 {at(0, 16), at(2367488, 16), at(9999360, 64), at(119477248, 128), tree_ll128}});
    r.push_back({Algo::kRing, Proto::kLL128,
                 {at(0, 2), at(4736000, 2), at(269484032, 128), ring_ll128, tree_ll128, at(119477248, 128),
                  at(9999360, 64), at(2367488, 16), at(0, 16)}});
    r.push_back({Algo::kRing, Proto::kSimple, {at(4736000, 2), at(kMaxBytes, 2), ring_ll128, at(269484032, 128)}});
    return r;
  }();
  return regions;
}

// All-gather and reduce-scatter, 1 rank per node: the ring with Simple from a
// few MiB on (below, NCCL's model).
const Regions& p5_all_gather_1() {
  static const Regions regions = [] {
    const Point ring = extend(at(4194304, 2), at(8589934592, 2048), at(kMaxBytes, kMaxRanks));
    return Regions{{Algo::kRing, Proto::kSimple, {at(4194304, 2), at(kMaxBytes, 2), ring, at(8589934592, 2048)}}};
  }();
  return regions;
}
const Regions& p5_reduce_scatter_1() {
  static const Regions regions = [] {
    const Point ring = extend(at(8388608, 2), at(4294967296, 1024), at(kMaxBytes, kMaxRanks));
    return Regions{{Algo::kRing, Proto::kSimple, {at(8388608, 2), at(kMaxBytes, 2), ring, at(4294967296, 1024)}}};
  }();
  return regions;
}

// The plugin's table for a group of `ranks` over `nodes` (region_init_internal_p5_p5e
// keys it on nRanks = 8, 2 or 1 x nNodes), or none.
const Regions* p5_regions(CollectiveType type, int ranks, int nodes) {
  if (ranks == 8 * nodes) return type == CollectiveType::kAllReduce ? &p5_all_reduce_8() : nullptr;
  if (ranks == 2 * nodes) return type == CollectiveType::kAllReduce ? &p5_all_reduce_2() : nullptr;
  if (ranks == nodes) {
    switch (type) {
      case CollectiveType::kAllReduce: return &p5_all_reduce_1();
      case CollectiveType::kAllGather: return &p5_all_gather_1();
      case CollectiveType::kReduceScatter: return &p5_reduce_scatter_1();
      default: return nullptr;
    }
  }
  return nullptr;
}

}  // namespace

TunerPlugin tuner_plugin(const std::string& name) {
  if (name == "none") return TunerPlugin::kNone;
  if (name == "aws-p5") return TunerPlugin::kAwsP5;
  throw InputError("nccl: tuner must be none (NCCL's own model) or aws-p5 (aws-ofi-nccl's p5/p5e regions), not '" +
                   name + "'");
}

const char* tuner_plugin_name(TunerPlugin t) { return t == TunerPlugin::kAwsP5 ? "aws-p5" : "none"; }

std::optional<TunerPick> tuner_pick(TunerPlugin t, CollectiveType type, std::uint64_t n_bytes, int ranks, int nodes,
                                   const std::function<bool(Algo, Proto)>& available) {
  if (t != TunerPlugin::kAwsP5 || nodes < 1) return {};
  // The plugin leaves two nodes or fewer to NCCL's model ("the regions are not
  // well defined" there: region_get_coll_info_internal_v2/_v3 return before
  // the table when num_nodes <= 2), though its tables start at 2 and 4 ranks.
  if (nodes <= 2) return {};
  const Regions* regions = p5_regions(type, ranks, nodes);
  if (!regions || n_bytes == 0 || static_cast<double>(n_bytes) > kMaxBytes) return {};
  const Point p = at(static_cast<double>(n_bytes), ranks);
  for (const Region& r : *regions) {
    // A region whose algorithm and protocol NCCL cannot run for this group is
    // passed over, and the next that holds the point wins (the plugin's v3+
    // skips a cost-table entry NCCL marks ignored).
    if (available && !available(r.algo, r.proto)) continue;
    if (holds(r, p)) return TunerPick{r.algo, r.proto};
  }
  return {};
}

}  // namespace sim::nccl
