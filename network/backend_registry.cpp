#include "network/backend_registry.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/error.h"
#include "core/units.h"
#include "core/plugin.h"

namespace sim {

namespace {

const std::vector<BackendOption> kLinkModelOptions = {
    {"link_efficiency", "usable fraction of every link's bandwidth, 0 < e <= 1 (default 1)"},
    {"message_latency", "added to every message's delivery, e.g. 2us: endpoint/NIC overhead (default 0)"},
};

// Every backend takes them, so a system config (or a preset) that names its
// fabric's routing runs on any backend; only flow routes by them
// (BackendOptions::routing_model; analytical and ns3 over tcp route each pair on one path).
const std::vector<BackendOption> kRoutingOptions = {
    {"routing", "multi-path fabrics (FatTree): ecmp-hash (default): each queue pair on the path its (src, dst, qp) "
                "hashes to; spray: every message split evenly over all equal-cost paths (EFA's SRD); adaptive: each "
                "queue pair's part on the least loaded path when it starts; ns3 takes them with transport roce or ib"},
    {"qps_per_connection", "queue pairs per connection, a message split evenly over them, as "
                           "NCCL_IB_QPS_PER_CONNECTION (default 1; flow, and ns3 with transport roce or ib)"},
    {"ecmp_seed", "seed of the ECMP hash, 0 .. 2^32-1 (default 0; flow, and ns3 with transport roce or ib)"},
};

}  // namespace

std::vector<BackendOption> with_link_model(std::vector<BackendOption> own) {
  own.insert(own.begin(), kLinkModelOptions.begin(), kLinkModelOptions.end());
  own.insert(own.end(), kRoutingOptions.begin(), kRoutingOptions.end());
  return own;
}

BytesPerSecond LinkModel::effective(BytesPerSecond bandwidth) const {
  if (link_efficiency >= 1.0) return bandwidth;
  const auto bw = static_cast<BytesPerSecond>(std::floor(static_cast<double>(bandwidth) * link_efficiency));
  if (bw == 0) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", link_efficiency);
    throw InputError((efficiency_where.empty() ? std::string("link_efficiency") : efficiency_where) + ": " + value +
                     " of a " + format_bandwidth(bandwidth) + " link is less than 1 B/s, the smallest rate a link " +
                     "can have (rates are whole bytes per second)");
  }
  return bw;
}

void LinkModel::check_links(const Topology& topology) const {
  for (const Link& link : topology.links()) effective(link.bandwidth);
}

BytesPerSecond BackendOptions::bandwidth(const std::string& key) const {
  const OptionValue& v = values_.at(key);
  try {
    const BytesPerSecond bw = parse_bandwidth(v.text);
    if (bw == 0) throw std::invalid_argument("bandwidth must be > 0");
    return bw;
  } catch (const std::invalid_argument& e) {
    throw InputError(v.where + ": " + e.what());
  }
}

Time BackendOptions::time(const std::string& key) const {
  const OptionValue& v = values_.at(key);
  try {
    const Time t = parse_time(v.text);
    if (t < 0) throw std::invalid_argument("must be >= 0");
    return t;
  } catch (const std::invalid_argument& e) {
    throw InputError(v.where + ": " + e.what());
  }
}

double BackendOptions::fraction(const std::string& key) const {
  const OptionValue& v = values_.at(key);
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v.text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.text.size() || !(x > 0 && x <= 1)) {
    throw InputError(v.where + ": expected a number in (0, 1], got '" + v.text + "'");
  }
  return x;
}

std::string BackendOptions::choice(const std::string& key, std::initializer_list<std::string> allowed) const {
  const OptionValue& v = values_.at(key);
  std::string list;
  for (const std::string& a : allowed) {
    if (v.text == a) return a;
    list += (list.empty() ? "" : ", ") + a;
  }
  throw InputError(v.where + ": expected one of " + list + ", got '" + v.text + "'");
}

std::uint64_t BackendOptions::integer(const std::string& key, std::uint64_t min, std::uint64_t max) const {
  const OptionValue& v = values_.at(key);
  std::uint64_t x = 0;
  try {
    x = parse_size(v.text);
  } catch (const std::invalid_argument& e) {
    throw InputError(v.where + ": " + e.what());
  }
  if (x < min || x > max) {
    throw InputError(v.where + ": expected " + std::to_string(min) + ".." + std::to_string(max) + ", got '" + v.text + "'");
  }
  return x;
}

// Sizes take units and exponents ("1KiB", "1e3"); a seed or a count of queue
// pairs written so is a slip, not a number meant (and a negative one was
// "invalid size").
std::uint64_t BackendOptions::count(const std::string& key, std::uint64_t min, std::uint64_t max) const {
  const OptionValue& v = values_.at(key);
  std::uint64_t x = 0;
  const char* end = v.text.data() + v.text.size();
  const auto [ptr, ec] = std::from_chars(v.text.data(), end, x);
  if (v.text.empty() || ec != std::errc() || ptr != end || x < min || x > max) {
    throw InputError(v.where + ": expected a whole number " + std::to_string(min) + ".." + std::to_string(max) +
                     ", got '" + v.text + "'");
  }
  return x;
}

LinkModel BackendOptions::link_model() const {
  LinkModel m;
  if (has("link_efficiency")) {
    m.link_efficiency = fraction("link_efficiency");
    m.efficiency_where = values_.at("link_efficiency").where;
  }
  if (has("message_latency")) m.message_latency = time("message_latency");
  return m;
}

RoutingModel BackendOptions::routing_model() const {
  RoutingModel m;
  if (has("routing")) {
    const std::string r = choice("routing", {"ecmp-hash", "spray", "adaptive"});
    m.routing = r == "spray" ? Routing::kSpray : r == "adaptive" ? Routing::kAdaptive : Routing::kEcmpHash;
  }
  // NCCL takes NCCL_IB_QPS_PER_CONNECTION up to NCCL_IB_MAX_QPS = 128 (src/transport/net_ib.cc).
  if (has("qps_per_connection")) m.qps_per_connection = static_cast<std::uint32_t>(count("qps_per_connection", 1, 128));
  if (has("ecmp_seed")) m.ecmp_seed = count("ecmp_seed", 0, 0xffffffffu);
  return m;
}

const std::vector<BackendInfo>& network_backends() {
  static const std::vector<BackendInfo> backends = {
      analytical_backend(),
      flow_backend(),
      ns3_backend(),
  };
  return backends;
}

const BackendInfo* find_backend(const std::string& name) {
  for (const BackendInfo& b : network_backends()) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::string describe_backends() {
  std::string s;
  for (const BackendInfo& b : network_backends()) {
    s += "  " + b.name + ": " + b.summary;
    // A look for the file, not a load: --help must not pay for ns-3.
    if (!b.module.empty() && find_module(b.module).empty()) s += " (module not found: " + b.module + "; see docs/network.md)";
    s += "\n";
    for (const BackendOption& o : b.options) s += "      " + o.key + ": " + o.help + "\n";
  }
  return s;
}

std::string backend_module_path(const std::string& backend) {
  const BackendInfo* b = find_backend(backend);
  return b && !b->module.empty() ? find_module(b->module) : std::string();
}

std::unique_ptr<Network> make_network(const NetworkConfig& config, const Topology& topology, EventQueue& queue) {
  const BackendInfo* b = find_backend(config.backend);
  if (!b) {
    std::string known;
    for (const BackendInfo& k : network_backends()) known += (known.empty() ? "" : ", ") + k.name;
    throw InputError("unknown network backend '" + config.backend + "' (known: " + known + ")");
  }
  // "<backend>.<key>": an option of that backend's own section, checked
  // against its options whichever backend runs, applied only when it does.
  std::map<std::string, OptionValue> applied;
  for (const auto& [key, value] : config.options) {
    const std::size_t dot = key.find('.');
    const BackendInfo* owner = dot == std::string::npos ? b : find_backend(key.substr(0, dot));
    const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
    bool ok = false;
    if (owner) {
      for (const BackendOption& o : owner->options) ok = ok || o.key == name;
    }
    if (!ok) {
      const BackendInfo& who = owner ? *owner : *b;
      std::string list;
      for (const BackendOption& o : who.options) list += (list.empty() ? "" : ", ") + o.key;
      throw InputError(value.where + ": backend '" + who.name + "' has no option '" + name + "' (its options: " +
                       list + ")");
    }
    if (owner != b) continue;
    if (!applied.emplace(name, value).second) {
      throw InputError(value.where + ": set twice for backend '" + b->name + "' (also " + applied.at(name).where + ")");
    }
  }
  return b->make(topology, queue, BackendOptions(applied));
}

}  // namespace sim
