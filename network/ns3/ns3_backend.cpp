// The ns3 backend's entry in the registry: its options, its factory (which
// loads the module build/libsim_ns3.so on first use, core/plugin.h) and its
// capabilities (none: packets share every link, nothing is priced in closed
// form). Plain C++20 without ns-3 headers, compiled into sim_network.
#include <memory>
#include <string>

#include "core/error.h"
#include "core/plugin.h"
#include "network/backend_registry.h"
#include "network/ns3/ns3_network.h"

namespace sim {

namespace {

// What to do when build/libsim_ns3.so or its ns-3 libraries are missing.
const char* const kNs3Install = "install libns3-dev libgsl-dev libsqlite3-dev (scripts/setup.sh) and rebuild";

std::unique_ptr<Network> make_ns3(const Topology& t, EventQueue& q, const BackendOptions& o) {
  const Ns3Options n = parse_ns3_options(t, o);
  // roce and ib carry the one-hop messages of in-network reduction
  // (Network::send_on_link); TCP would need a socket at every switch.
  if (t.any_reduces() && n.transport == Ns3Transport::kTcp) {
    throw InputError("network backend 'ns3' with transport tcp does not model reduction or multicast in switches, "
                     "and this topology marks switches 'in_network_reduction: true'; set network.transport to roce "
                     "or ib, use the analytical or flow backend, or drop the key");
  }
  Ns3MakeNetwork* make = nullptr;
  try {
    make = module_function<Ns3MakeNetwork>(kNs3ModuleFile, kNs3EntryPoint);
  } catch (const ModuleError& e) {
    throw ModuleError("network backend 'ns3': " + std::string(e.what()) + "; " + kNs3Install);
  }
  return std::unique_ptr<Network>(make(t, q, n));
}

}  // namespace

BackendInfo ns3_backend() {
  BackendInfo b;
  b.name = "ns3";
  b.summary = kNs3Summary;
  b.options = with_link_model(ns3_backend_options());
  b.make = make_ns3;
  b.module = kNs3ModuleFile;
  return b;
}

}  // namespace sim
