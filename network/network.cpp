#include "network/network.h"

#include <stdexcept>
#include <string>

#include "core/error.h"

namespace sim {

bool Network::admit(NodeId src, NodeId dst, const Delivery& to, EventQueue& queue) {
  const std::uint32_t npus = topology().npu_count();
  if (src >= npus || dst >= npus) {
    throw InputError("message " + std::to_string(src) + " -> " + std::to_string(dst) + ": the topology has " +
                     std::to_string(npus) + " NPUs (0.." + std::to_string(npus - 1) + ")");
  }
  ++messages_sent_;
  if (src != dst) return true;
  queue.schedule(queue.now(), to.handler, to.kind, to.payload);
  return false;
}

void Network::send_on_link(LinkId /*link*/, std::uint64_t /*bytes*/, const Delivery& /*to*/) {
  throw std::logic_error(std::string("the ") + std::string(name()) + " backend carries no switch operations");
}

}  // namespace sim
