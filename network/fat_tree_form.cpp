// `shape: FatTree`: a leaf-spine (`leaves`, `npus_per_leaf`, `spines`) or a
// k-ary fat tree (`k`), read into a FatTree and built by build_fat_tree.
#include <string>
#include <yaml-cpp/yaml.h>

#include "network/fat_tree.h"
#include "network/topology_forms.h"

namespace sim {

namespace {

constexpr std::uint64_t kMaxSize = 1U << 30;
// k^3/4 NPUs: anything above this is over 2^30 NPUs anyway.
constexpr std::uint64_t kMaxK = 2048;

std::uint32_t read_size(const ConfigReader& config, const YAML::Node& root, const std::string& key, std::uint64_t min,
                        const std::string& why) {
  const YAML::Node node = root[key];
  if (!node) {
    config.fail(root, "missing key '" + key + "' (a FatTree takes 'leaves', 'npus_per_leaf' and 'spines', or 'k')");
  }
  const std::uint64_t n = config.count(node, key);
  if (n < min) {
    config.fail(node, "'" + key + "' must be >= " + std::to_string(min) + why + ", got " + std::to_string(n));
  }
  if (n > kMaxSize) config.fail(node, "'" + key + "' is too large");
  return static_cast<std::uint32_t>(n);
}

// A positive decimal, e.g. 2 or 1.5, as mantissa / 10^scale; at most 9 digits
// each side of the point, so the uplink arithmetic below stays within 128 bits.
struct Decimal {
  std::uint64_t mantissa;
  std::uint64_t scale;  // a power of ten
};

Decimal read_decimal(const ConfigReader& config, const YAML::Node& node, const std::string& key) {
  const std::string s = config.text(node, key);
  Decimal d{0, 1};
  std::size_t whole = 0, fraction = 0;
  bool point = false, ok = !s.empty();
  for (char c : s) {
    if (c == '.' && !point) {
      point = true;
    } else if (c >= '0' && c <= '9') {
      d.mantissa = d.mantissa * 10 + static_cast<std::uint64_t>(c - '0');
      if (point) d.scale *= 10;
      ++(point ? fraction : whole);
    } else {
      ok = false;
    }
  }
  if (!ok || whole == 0 || whole > 9 || fraction > 9) {
    config.fail(node, "'" + key + "' must be a number like 2 or 1.5, got '" + s + "'");
  }
  if (d.mantissa == 0) config.fail(node, "'" + key + "' must be > 0, got '" + s + "'");
  return d;
}

// "2:1", "1.5:1", "3.333:1": down / up capacity of a leaf, to 3 decimals.
std::string ratio(uint128 down, uint128 up) {
  const uint128 milli = (down * 1000 + up / 2) / up;
  std::string s;
  for (uint128 whole = milli / 1000; s.empty() || whole > 0; whole /= 10) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(whole % 10)));
  }
  if (const auto frac = static_cast<unsigned>(milli % 1000); frac != 0) {
    std::string digits = std::to_string(1000 + frac).substr(1);
    while (digits.back() == '0') digits.pop_back();
    s += "." + digits;
  }
  return s + ":1";
}

std::string plural(std::uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

Topology parse_fat_tree_shape(const ConfigReader& config, const YAML::Node& root) {
  config.check_keys(root, "",
                    {"name", "shape", "leaves", "npus_per_leaf", "spines", "k", "bandwidth", "latency",
                     "uplink_bandwidth", "uplink_latency", "oversubscription", "ecmp"});
  FatTree tree{};
  std::string label = "FatTree ";
  if (const YAML::Node k_node = root["k"]) {
    for (const char* key : {"leaves", "npus_per_leaf", "spines"}) {
      if (root[key]) {
        config.fail(root[key], std::string("give either 'k' (a 3-level k-ary fat tree) or 'leaves', ") +
                                   "'npus_per_leaf' and 'spines' (a leaf-spine), not both");
      }
    }
    const std::uint64_t k = config.count(k_node, "k");
    if (k < 2 || k % 2 != 0) config.fail(k_node, "'k' must be an even number >= 2, got " + std::to_string(k));
    if (k > kMaxK) config.fail(k_node, "'k' is too large (more than 2^30 NPUs)");
    const auto half = static_cast<std::uint32_t>(k / 2);
    // k pods; per pod k/2 edge (leaf) switches of k/2 NPUs and k/2 aggregation
    // (spine) switches; (k/2)^2 cores, k/2 per aggregation plane.
    tree.pods = static_cast<std::uint32_t>(k);
    tree.leaves = tree.npus_per_leaf = tree.spines = tree.cores_per_spine = half;
    label += "k=" + std::to_string(k);
  } else {
    tree.pods = 1;
    tree.leaves = read_size(config, root, "leaves", 2, " (one leaf is shape: Switch)");
    tree.npus_per_leaf = read_size(config, root, "npus_per_leaf", 1, "");
    tree.spines = read_size(config, root, "spines", 1, "");
    label += plural(tree.leaves, "leaf", "leaves") + " x " + plural(tree.npus_per_leaf, "NPU", "NPUs") + ", " +
             plural(tree.spines, "spine", "spines");
  }

  tree.bandwidth = config.bandwidth(config.require(root, "bandwidth"), "bandwidth");
  tree.latency = config.latency(config.require(root, "latency"), "latency");
  tree.uplink_latency =
      root["uplink_latency"] ? config.latency(root["uplink_latency"], "uplink_latency") : tree.latency;

  // A leaf's capacity down (to its NPUs) against up (to the spines). In a
  // k-ary tree the aggregation switches are 1:1 by construction.
  const uint128 down = uint128{tree.npus_per_leaf} * tree.bandwidth;
  const YAML::Node uplink = root["uplink_bandwidth"], over = root["oversubscription"];
  if (uplink && over) config.fail(over, "give either 'uplink_bandwidth' or 'oversubscription', not both");
  if (uplink) {
    tree.uplink_bandwidth = config.bandwidth(uplink, "uplink_bandwidth");
  } else {
    // uplink = down / (spines * oversubscription), rounded down to whole B/s:
    // 8 x 50 GB/s over 4 spines at 3:1 is 33 333 333 333 B/s.
    const Decimal o = over ? read_decimal(config, over, "oversubscription") : Decimal{1, 1};
    const uint128 bw = down * o.scale / (uint128{tree.spines} * o.mantissa);
    // Name the key the user wrote, or the whole map when the default of 1 is at fault.
    const YAML::Node at = over ? over : root;
    if (bw == 0) {
      config.fail(at, "the uplink bandwidth (npus_per_leaf x bandwidth / (spines x oversubscription)) "
                      "is below 1 B/s; give 'uplink_bandwidth'");
    }
    if (bw > ~BytesPerSecond{0}) config.fail(at, "'oversubscription' makes the uplinks too fast to represent");
    tree.uplink_bandwidth = static_cast<BytesPerSecond>(bw);
  }
  label += ", " + ratio(down, uint128{tree.spines} * tree.uplink_bandwidth);

  tree.ecmp = EcmpRule::kHash;
  if (const YAML::Node ecmp = root["ecmp"]) {
    const std::string rule = config.text(ecmp, "ecmp");
    if (rule == "dmodk") {
      tree.ecmp = EcmpRule::kDestinationModK;
      label += ", ecmp dmodk";
    } else if (rule != "hash") {
      config.fail(ecmp, "'ecmp' must be hash or dmodk, got '" + rule + "'");
    }
  }

  if (const YAML::Node name = root["name"]) label = config.text(name, "name") + ": " + label;
  return build_fat_tree(config.source(), label, tree);
}

}  // namespace sim
