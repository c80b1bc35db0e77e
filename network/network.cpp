#include "network/network.h"

#include <string>

#include "core/error.h"
#include "network/analytical_network.h"

namespace sim {

std::unique_ptr<Network> make_network(std::string_view backend, const Topology& topology, EventQueue& queue,
                                      MessageSink& sink) {
  if (backend == "analytical") return std::make_unique<AnalyticalNetwork>(topology, queue, sink);
  throw InputError("unknown network backend '" + std::string(backend) + "' (known: analytical)");
}

}  // namespace sim
