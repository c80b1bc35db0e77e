#include "network/ns3/clock_bridge.h"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

namespace sim {
namespace {

std::mutex g_turn;
std::atomic<std::thread::id> g_owner{};

void stop_ns3() { ns3::Simulator::Stop(); }

}  // namespace

SimulatorTurn::SimulatorTurn() {
  if (g_owner.load() == std::this_thread::get_id()) {
    throw std::logic_error("only one ns3 network may exist at a time per thread (ns-3's simulator is global)");
  }
  g_turn.lock();
  g_owner.store(std::this_thread::get_id());
  // Our clock counts picoseconds; so does ns-3's from here on (settable once per process).
  static const bool resolution_set = [] {
    if (ns3::Time::GetResolution() != ns3::Time::PS) ns3::Time::SetResolution(ns3::Time::PS);
    return true;
  }();
  (void)resolution_set;
  // A binary heap in one array instead of ns-3's default red-black tree
  // (MapScheduler: an allocation and a rebalance per event, a third of a
  // packet-level run's time). Every ns-3 scheduler orders events by (time,
  // insertion number), so the order of events, and every result, is the same.
  ns3::Simulator::SetScheduler(ns3::ObjectFactory("ns3::PriorityQueueScheduler"));
}

void SimulatorTurn::destroy_simulator() {
  if (!destroyed_) ns3::Simulator::Destroy();
  destroyed_ = true;
}

std::uint64_t ns3_event_count() { return ns3::Simulator::GetEventCount(); }

SimulatorTurn::~SimulatorTurn() {
  destroy_simulator();
  g_owner.store(std::thread::id{});
  g_turn.unlock();
}

void ClockBridge::start() {
  offset_ = ns3::Simulator::Now().GetPicoSeconds();
  queue_.set_peer(this);
}

void ClockBridge::delivered(const Delivery& to) {
  // Hand the clock back: our kernel must see this delivery before ns-3 goes on.
  ns3::Simulator::Stop();
  try {
    const Time at =
        add_time(ns3::Simulator::Now().GetPicoSeconds() - offset_, message_latency_, "a message's delivery");
    queue_.schedule(at, to.handler, to.kind, to.payload);
  } catch (const TimeLimitError& e) {
    if (!late_) late_ = e;
  }
}

void ClockBridge::run_until(Time limit) {
  const bool bounded = limit != kNoLimit;
  if (stopper_at_ >= 0 && (!bounded || stopper_at_ != limit)) {
    ns3::Simulator::Remove(stopper_);
    stopper_at_ = -1;
  }
  if (bounded && stopper_at_ < 0) {
    // Scheduled now, it runs after the ns-3 events already due at `limit`.
    stopper_ = ns3::Simulator::Schedule(ns3::PicoSeconds(limit + offset_) - ns3::Simulator::Now(), &stop_ns3);
    stopper_at_ = limit;
  }
  ns3::Simulator::Run();
  if (stopper_at_ >= 0 && stopper_.IsExpired()) stopper_at_ = -1;
  if (late_) throw *late_;
}

}  // namespace sim
