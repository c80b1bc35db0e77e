// The network backends by name, each with the options it accepts.
//
// Options come from the system config's `network:` section (docs/network.md).
// Every backend declares its keys here, so an unknown key is an error naming
// the backend's real options, and `sim --help` lists them all.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "network/network.h"

namespace sim {

struct OptionValue {
  std::string text;   // as written, e.g. "400Gbps"
  std::string where;  // for messages, e.g. "sys.yml:7: network.nic_bandwidth"
};

// Which backend to build and its options as written.
struct NetworkConfig {
  std::string backend = "analytical";
  std::map<std::string, OptionValue> options;
};

// The parsed options shared by every backend: what calibration against
// measured curves needs (a per-message overhead, a usable fraction of each
// link), kept in the network so every backend applies them the same way.
struct LinkModel {
  double link_efficiency = 1.0;  // usable fraction of every link's bandwidth, (0, 1]
  Time message_latency = 0;      // added to every message's delivery (endpoint / NIC overhead)
  std::string efficiency_where;  // "file:line: network.link_efficiency" when read from a config
  // Bandwidth a backend uses for `link`: floor(bandwidth * link_efficiency).
  // InputError when that is below 1 B/s: rates are whole bytes per second, and
  // such a link used to run at 1 B/s, faster than its efficiency says.
  BytesPerSecond effective(BytesPerSecond bandwidth) const;
  // effective() of every link of `topology`: a backend's constructor calls it,
  // so an efficiency no link can carry fails before the run, not mid-way.
  void check_links(const Topology& topology) const;
};

// How a multi-path fabric (a FatTree's spines and cores) spreads a pair's
// traffic over its equal-cost paths (docs/network.md, "Multi-path routing").
enum class Routing {
  kEcmpHash,  // each queue pair on the path its (src, dst, qp) hashes to
  kSpray,     // every message split evenly over all equal-cost paths (EFA's SRD)
  kAdaptive,  // each queue pair's part of a message on the least loaded path when it starts
};
struct RoutingModel {
  Routing routing = Routing::kEcmpHash;
  std::uint32_t qps_per_connection = 1;  // NCCL_IB_QPS_PER_CONNECTION
  std::uint64_t ecmp_seed = 0;           // the ECMP hash's seed
};

struct BackendOption {
  std::string key;
  std::string help;
};

// Reads typed option values; throws InputError naming the key's place.
class BackendOptions {
 public:
  explicit BackendOptions(const std::map<std::string, OptionValue>& values) : values_(values) {}
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  BytesPerSecond bandwidth(const std::string& key) const;  // > 0
  Time time(const std::string& key) const;                 // >= 0
  double fraction(const std::string& key) const;           // in (0, 1]
  // A size ("9000", "4MiB"), in [min, max].
  std::uint64_t integer(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  // A plain whole number (a count, a seed): decimal digits only, in [min, max].
  std::uint64_t count(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  // One of `allowed`, as written.
  std::string choice(const std::string& key, std::initializer_list<std::string> allowed) const;
  LinkModel link_model() const;
  // Where `key` was written, for messages ("sys.yml:7: network.mtu").
  const std::string& where(const std::string& key) const { return values_.at(key).where; }
  RoutingModel routing_model() const;

 private:
  const std::map<std::string, OptionValue>& values_;
};

// What a backend can do beyond send() (network/capabilities.h), known before
// one is built: scenario building decides folding from it.
struct BackendCapabilities {
  bool closed_form_routes = false;  // Network::closed_form_routes() is offered
  bool solo_flows = false;          // Network::solo_flows() is offered
  // Without closed-form routes, whether a generated job's replicas may still
  // fold one at a time with stand-ins (system/runner/aggregation/stand_in.h):
  // links inside the fabric are shared, so such a fold is approximate.
  bool stand_in_folds = false;
};

struct BackendInfo {
  std::string name;
  std::string summary;
  std::vector<BackendOption> options;
  std::function<std::unique_ptr<Network>(const Topology&, EventQueue&, const BackendOptions&)> make;
  // The shared module holding its code ("libsim_ns3.so", core/plugin.h), or
  // "" when it is built into the executable.
  std::string module;
  BackendCapabilities capabilities;
};

// Each backend's entry, defined in its folder (network/analytical/,
// network/flow/, network/ns3/): a new backend adds a folder and one line in
// network_backends().
BackendInfo analytical_backend();
BackendInfo flow_backend();
BackendInfo ns3_backend();
// The options every backend takes (LinkModel) ahead of its own.
std::vector<BackendOption> with_link_model(std::vector<BackendOption> own);

// Every backend, in the order --help lists them.
const std::vector<BackendInfo>& network_backends();
const BackendInfo* find_backend(const std::string& name);
// Names, one-line summaries and options of every backend, for --help; a
// backend whose module is not found says "module not found".
std::string describe_backends();

// The file holding `backend`'s code when it lives in a module: its path, or
// "" when the module is not found; "" for built-in backends and unknown names.
std::string backend_module_path(const std::string& backend);

// Builds the configured backend. Throws InputError for an unknown backend
// (listing the known ones), an option the backend does not take (listing
// its options), or a bad value.
std::unique_ptr<Network> make_network(const NetworkConfig& config, const Topology& topology, EventQueue& queue);

}  // namespace sim
