// The analytical backend's entry in the registry: its options and capabilities.
#include <memory>

#include "network/analytical/analytical_network.h"
#include "network/backend_registry.h"

namespace sim {

BackendInfo analytical_backend() {
  BackendInfo b;
  b.name = "analytical";
  b.summary =
      "alpha-beta per message (latency sum + bytes / bottleneck bandwidth), serialized at the sender's "
      "first link; no contention inside the network";
  b.options = with_link_model({{"egress", "serialize (default): an NPU's messages leave each port one after another; "
                                          "overlap: each message as if alone (ASTRA-sim's congestion-unaware model, "
                                          "which can exceed a port's bandwidth)"}});
  b.make = [](const Topology& t, EventQueue& q, const BackendOptions& o) -> std::unique_ptr<Network> {
    const bool serialize = !o.has("egress") || o.choice("egress", {"serialize", "overlap"}) == "serialize";
    o.routing_model();  // checked, not used: every equal-cost path of a fat tree costs the same alone
    return std::make_unique<AnalyticalNetwork>(t, q, o.link_model(), serialize);
  };
  // Every route priced alone, queues only at the sender: replicas fold and
  // symmetric collectives are priced for all ranks at once.
  b.capabilities.closed_form_routes = true;
  return b;
}

}  // namespace sim
