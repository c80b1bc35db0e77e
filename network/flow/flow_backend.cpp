// The flow backend's entry in the registry: its options and capabilities.
#include <memory>

#include "network/backend_registry.h"
#include "network/flow/flow_network.h"

namespace sim {

BackendInfo flow_backend() {
  BackendInfo b;
  b.name = "flow";
  b.summary = "congestion-aware: every message is a flow on its route, links shared max-min fairly, cut-through";
  b.options = with_link_model(
      {{"nic_bandwidth", "cap on all traffic out of one NPU, and on all into it (default: none)"},
       {"pair_order", "fifo (default): messages between the same two NPUs on one communicator leave one after another; "
                      "shared: they share bandwidth like any flows"}});
  b.make = [](const Topology& t, EventQueue& q, const BackendOptions& o) -> std::unique_ptr<Network> {
    FlowNetwork::Options fo;
    fo.links = o.link_model();
    if (o.has("nic_bandwidth")) fo.nic_bandwidth = o.bandwidth("nic_bandwidth");
    if (o.has("pair_order")) fo.pair_fifo = o.choice("pair_order", {"fifo", "shared"}) == "fifo";
    fo.routing = o.routing_model();
    return std::make_unique<FlowNetwork>(t, q, fo);
  };
  // A collective whose every flow is alone on its links is advanced as one.
  b.capabilities.solo_flows = true;
  // Links are shared inside the fabric, so no fold is exact; one replica with
  // stand-ins is (docs/system.md states its error against every rank).
  b.capabilities.stand_in_folds = true;
  return b;
}

}  // namespace sim
