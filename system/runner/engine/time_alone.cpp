#include "system/runner/engine/time_alone.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/event_queue.h"
#include "network/backend_registry.h"
#include "network/capabilities.h"
#include "system/runner/engine/collective_engine.h"

namespace sim {

namespace {

// Hears each member's end in the private run.
class Ends final : public CollectiveListener {
 public:
  Ends(const EventQueue& queue, std::size_t members) : queue_(queue), end_(members, -1) {}
  void on_collective_done(std::uint32_t /*rank*/, std::uint64_t cookie) override { end_[cookie] = queue_.now(); }
  const std::vector<Time>& ends() const { return end_; }

 private:
  const EventQueue& queue_;
  std::vector<Time> end_;
};

}  // namespace

StandInTiming time_alone(const std::shared_ptr<const CollectiveProgram>& program,
                         const std::shared_ptr<const std::vector<std::uint32_t>>& members, const Topology& topology,
                         const SystemConfig& config) {
  EventQueue queue;
  const std::unique_ptr<Network> network = make_network(config.network, topology, queue);
  Ends ends(queue, members->size());
  CollectiveEngine engine(queue, *network, config, ends);
  for (std::uint32_t pos = 0; pos < members->size(); ++pos) engine.join(InstanceKey{0, 0}, program, members, pos, pos);
  queue.run();
  StandInTiming t;
  t.events = queue.processed();
  t.fastest = std::numeric_limits<Time>::max();
  for (std::size_t pos = 0; pos < ends.ends().size(); ++pos) {
    const Time end = ends.ends()[pos];
    if (end < 0) {
      throw IncompleteError("collective '" + program->name() + "' timed alone for folded replicas did not finish "
                            "on rank " + std::to_string((*members)[pos]) + " (run with --no-aggregation to see why)");
    }
    t.slowest = std::max(t.slowest, end);
    t.fastest = std::min(t.fastest, end);
  }
  if (ends.ends().empty()) t.fastest = 0;
  t.ends = ends.ends();
  // On the analytical backend messages queue at their sender's egress port
  // (or a bottleneck past it); the fabric's other links do not serialize
  // messages of different senders. On a backend that shares links (flow),
  // the busiest link's busy time is the measure.
  if (t.slowest > 0) {
    Time busiest = t.slowest;  // no measure of it: concurrent stand-ins take turns
    if (const ClosedFormRoutes* routes = network->closed_form_routes()) {
      busiest = routes->busiest_queue();
    } else if (network->measures_link_time()) {
      busiest = 0;
      for (const LinkUsage& u : network->link_usage()) busiest = std::max(busiest, u.busy);
    }
    t.load = std::min(1.0, static_cast<double>(busiest) / static_cast<double>(t.slowest));
  }
  return t;
}

}  // namespace sim
