#include "network/ns3/roce/roce_transport.h"

#include "core/error.h"

namespace sim {

std::unique_ptr<Transport> make_roce_transport(const Topology&, const Ns3Options&, MessageSink&) {
  throw InputError("network backend 'ns3': transport: roce is not available in this build");
}

}  // namespace sim
