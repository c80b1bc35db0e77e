// Test helpers for the ns3 backend: a network of a given transport, and the
// bytes a message puts on the wire.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "network/backend_registry.h"

namespace sim::testing_support {

// The ns3 backend on `t` with network.transport `transport` and `extra` options.
inline std::unique_ptr<Network> ns3(const Topology& t, EventQueue& q, const std::string& transport,
                                    std::map<std::string, OptionValue> extra = {}) {
  NetworkConfig c;
  c.backend = "ns3";
  c.options = std::move(extra);
  c.options["transport"] = {transport, "test"};
  return make_network(c, t, q);
}

// Frames on the wire for `bytes` of one message: 4096 B of payload per packet, 62 B of headers each.
inline double wire_bytes(std::uint64_t bytes) { return static_cast<double>(bytes + (bytes + 4095) / 4096 * 62); }

}  // namespace sim::testing_support
