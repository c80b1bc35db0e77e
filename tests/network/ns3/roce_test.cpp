// The ns3 backend's RoCEv2 transport (network.transport: roce): lossless
// incast under PFC, drops and go-back-N without it, DCQCN's fairness and
// queue, head-of-line blocking, and its options. Scaled down from
// docs/network.md's cases so each runs in about a second under ASan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../../common/sizes.h"
#include "core/error.h"
#include "network/backend_registry.h"
#include "network/ns3/ns3_options.h"
#include "tests/network/delivery_recorder.h"
#include "tests/network/ns3/ns3_test_util.h"
#include "tests/network/ns3/skip_without_ns3.h"
#include "tests/network/ns3/victim_topology.h"

namespace sim {
namespace {

using testing::kMiB;
using testing_support::Recorder;
using testing_support::wire_bytes;
using Options = std::map<std::string, OptionValue>;

std::unique_ptr<Network> roce(const Topology& t, EventQueue& q, Options extra = {}) {
  NetworkConfig c;
  c.backend = "ns3";
  c.options = std::move(extra);
  c.options["transport"] = {"roce", "test"};
  return make_network(c, t, q);
}

Topology one_switch(std::uint32_t npus, const std::string& bandwidth = "50GB/s") {
  return parse_topology("shape: Switch\nnpus: " + std::to_string(npus) + "\nbandwidth: " + bandwidth +
                            "\nlatency: 500ns\n",
                        "switch.yml");
}

struct Totals {
  std::uint64_t drops = 0, pauses = 0, marks = 0, cnps = 0, peak_queue = 0;
  Time paused = 0;
};
Totals totals(const Network& net) {
  Totals s;
  for (const LinkUsage& u : net.link_usage()) {
    s.drops += u.drops;
    s.pauses += u.pauses_received;
    s.marks += u.ecn_marks;
    s.cnps += u.cnps;
    s.paused += u.paused;
    s.peak_queue = std::max(s.peak_queue, u.peak_queue_bytes);
  }
  return s;
}
std::uint64_t counter(const Network& net, const std::string& name) {
  for (const auto& [k, v] : net.counters()) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no counter '" << name << "'";
  return 0;
}

// Scaled down from 63-to-1 of 8 MiB on a 64-NPU leaf-spine: 7-to-1 of 2 MiB
// behind one switch with a 1 MB buffer, so PFC has to act. PFC alone keeps
// the port into NPU 0 busy from first byte to last; DCQCN's cuts leave it
// idle now and then.
TEST(Ns3Roce, IncastIsLosslessUnderPfcAndAtTheBottleneckBound) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_switch(8);
  const std::uint64_t bytes = 2 * kMiB;
  // Bound: every frame through the one 50 GB/s port into NPU 0, plus two hops of latency.
  const double bound_ps = 7 * wire_bytes(bytes) / 50e9 * 1e12 + 1e6;
  for (const bool dcqcn : {false, true}) {
    EventQueue q;
    Recorder r(q);
    auto net = roce(t, q, {{"buffer_size", {"1MB", "test"}}, {"dcqcn", {dcqcn ? "true" : "false", "test"}}});
    for (NodeId s = 1; s < 8; ++s) net->send(s, 0, bytes, r.to(s));
    q.run();
    ASSERT_EQ(r.seen.size(), 7u);
    const Totals s = totals(*net);
    EXPECT_EQ(s.drops, 0u);
    EXPECT_GT(s.pauses, 0u);
    EXPECT_EQ(counter(*net, "retransmitted packets"), 0u);
    const Time last = r.seen.back().at;
    EXPECT_LE(static_cast<double>(last), (dcqcn ? 1.10 : 1.05) * bound_ps) << "dcqcn " << dcqcn;
    EXPECT_GE(static_cast<double>(last), bound_ps);
    std::printf("[roce] 7-to-1 incast of 2 MiB, 1 MB buffer, %s: last done %.1f ns, bound %.1f ns (+%.2f%%), %llu "
                "pauses (paused %.1f ns in all), %llu ECN marks, %llu CNPs, peak queue %llu B, 0 drops\n",
                dcqcn ? "PFC and DCQCN" : "PFC alone", to_ns(last), bound_ps / 1e3,
                100 * (static_cast<double>(last) / bound_ps - 1), static_cast<unsigned long long>(s.pauses),
                to_ns(s.paused), static_cast<unsigned long long>(s.marks), static_cast<unsigned long long>(s.cnps),
                static_cast<unsigned long long>(s.peak_queue));
  }
}

TEST(Ns3Roce, WithoutPfcAShallowBufferDropsAndGoBackNStillDelivers) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_switch(8);
  const std::uint64_t bytes = 2 * kMiB;
  Time lossless = 0, lossy = 0;
  for (const bool pfc : {true, false}) {
    EventQueue q;
    Recorder r(q);
    auto net = roce(t, q, {{"buffer_size", {"1MB", "test"}}, {"pfc", {pfc ? "true" : "false", "test"}},
                           {"dcqcn", {"false", "test"}}});
    for (NodeId s = 1; s < 8; ++s) net->send(s, 0, bytes, r.to(s));
    q.run();
    ASSERT_EQ(r.seen.size(), 7u) << "pfc " << pfc;
    const Totals s = totals(*net);
    (pfc ? lossless : lossy) = r.seen.back().at;
    if (pfc) {
      EXPECT_EQ(s.drops, 0u);
      EXPECT_GT(s.pauses, 0u);
      continue;
    }
    EXPECT_GT(s.drops, 0u);
    EXPECT_EQ(s.pauses, 0u);
    EXPECT_GT(counter(*net, "retransmitted packets"), 0u);
    EXPECT_GT(counter(*net, "NACKs"), 0u);
    std::printf("[roce] 7-to-1 incast of 2 MiB without PFC or DCQCN, 1 MB buffer: last done %.1f ns (with PFC %.1f "
                "ns), %llu drops, %llu NACKs, %llu packets resent, %llu timeouts\n",
                to_ns(lossy), to_ns(lossless), static_cast<unsigned long long>(s.drops),
                static_cast<unsigned long long>(counter(*net, "NACKs")),
                static_cast<unsigned long long>(counter(*net, "retransmitted packets")),
                static_cast<unsigned long long>(counter(*net, "retransmission timeouts")));
  }
  EXPECT_GT(lossy, lossless);
}

// Hop by hop: an incast behind a second switch pauses the link between the
// switches, and that switch in turn pauses the senders' NICs.
TEST(Ns3Roce, PausePropagatesHopByHop) {
  SKIP_WITHOUT_NS3();
  const Topology t = parse_topology(
      "npus: 6\nswitches: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n"
      "  - {src: npu0, dst: sw0}\n  - {src: npu1, dst: sw0}\n  - {src: npu2, dst: sw0}\n"
      "  - {src: npu3, dst: sw1}\n  - {src: npu4, dst: sw1}\n  - {src: npu5, dst: sw1}\n"
      "  - {src: sw0, dst: sw1, bandwidth: 100GB/s}\n",
      "two_switches.yml");
  EventQueue q;
  Recorder r(q);
  auto net = roce(t, q, {{"buffer_size", {"1MB", "test"}}, {"dcqcn", {"false", "test"}}});
  for (NodeId s = 0; s < 3; ++s) net->send(s, 3, kMiB, r.to(s));
  q.run();
  ASSERT_EQ(r.seen.size(), 3u);
  const std::vector<LinkUsage> u = net->link_usage();
  std::uint64_t nic_pauses = 0, trunk_pauses = 0;
  for (LinkId l = 0; l < u.size(); ++l) {
    const Link& k = t.links()[l];
    if (k.from < 3 && k.to == 6) nic_pauses += u[l].pauses_received;
    if (k.from == 6 && k.to == 7) trunk_pauses += u[l].pauses_received;
    EXPECT_EQ(u[l].drops, 0u);
  }
  EXPECT_GT(trunk_pauses, 0u);
  EXPECT_GT(nic_pauses, 0u);
}

// Sends a message when its event fires: for flows that start later than
// time 0 and for periodic probes.
class Starter : public EventHandler {
 public:
  struct Send {
    NodeId src, dst;
    std::uint64_t bytes, token;
  };
  Starter(EventQueue& q, Network& net, Recorder& r) : queue_(q), net_(net), r_(r) {}
  void at(Time t, const Send& s) {
    sends_.push_back(s);
    queue_.schedule(t, this, 0, sends_.size() - 1);
  }
  void on_event(const Event& e) override {
    const Send& s = sends_[e.payload];
    sent_at[s.token] = queue_.now();
    net_.send(s.src, s.dst, s.bytes, r_.to(s.token));
  }
  std::map<std::uint64_t, Time> sent_at;

 private:
  EventQueue& queue_;
  Network& net_;
  Recorder& r_;
  std::vector<Send> sends_;
};

// Bytes a flow (tokens [first, first + n) of `size` each) delivered in [from, to).
double rate_in(const Recorder& r, std::uint64_t first, std::uint64_t n, std::uint64_t size, Time from, Time to) {
  std::uint64_t bytes = 0;
  for (std::uint64_t k = first; k < first + n; ++k) {
    auto it = r.at.find(k);
    if (it != r.at.end() && it->second >= from && it->second < to) bytes += size;
  }
  return static_cast<double>(bytes) / (static_cast<double>(to - from) / 1e12);
}

// The DCQCN paper's setting: 40 Gb/s (5 GB/s) links. Flow A (NPU 1 -> 0)
// runs alone, flow B (NPU 2 -> 0) joins at 1 ms; both must settle at half
// the link each (within 10%, over 500 us windows) and stay there.
TEST(Ns3Roce, DcqcnSharesABottleneckFairly) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_switch(3, "5GB/s");
  const std::uint64_t size = 16 << 10, a_count = 7680, b_count = 5760;  // 120 MiB and 90 MiB
  const Time join = kMillisecond, window = 500 * kMicrosecond;
  EventQueue q;
  Recorder r(q);
  auto net = roce(t, q);
  Starter starter(q, *net, r);
  for (std::uint64_t k = 0; k < a_count; ++k) net->send(1, 0, size, r.to(k));
  for (std::uint64_t k = 0; k < b_count; ++k) starter.at(join, {2, 0, size, 100'000 + k});
  q.run();
  ASSERT_EQ(r.seen.size(), a_count + b_count);
  const Time b_done = r.at[100'000 + b_count - 1];
  const double half = 5e9 / 2 * 4096 / 4158;  // payload rate: frames carry 62 B of headers per 4096 B
  Time converged = -1;
  std::string trace;
  for (Time w = join; w + window <= b_done; w += window) {
    const double a = rate_in(r, 0, a_count, size, w, w + window), b = rate_in(r, 100'000, b_count, size, w, w + window);
    trace += " [" + std::to_string(to_us(w - join)) .substr(0, 6) + " us: " + std::to_string(a / 1e9).substr(0, 5) +
             " / " + std::to_string(b / 1e9).substr(0, 5) + "]";
    const bool fair = std::abs(a - half) <= 0.1 * half && std::abs(b - half) <= 0.1 * half;
    if (fair && converged < 0) converged = w;
    if (!fair) converged = -1;
  }
  ASSERT_GE(converged, 0) << "GB/s of A / B per window after B joined:" << trace;
  std::printf("[roce] DCQCN, two flows on a 5 GB/s link: within 10%% of half each from %.0f us after the second "
              "joined (500 us windows); GB/s A / B per window:%s\n",
              to_us(converged - join), trace.c_str());
  EXPECT_GT(totals(*net).cnps, 0u);
}

// A queue pair's rate is cut to the floor (every packet above 2 KB of queue
// is marked, a CNP may follow every microsecond, and alpha stays 1 so every
// cut halves) and then raised by the increase timer: the raise applies to the
// gap the rate limiter is waiting out. Were the gap set at the floor rate
// kept, a 4158 B frame at 1 Mb/s would hold its queue pair 33.3 ms and the
// 7-to-1 incast of 1 MiB would end after 45 ms; it ends in 8.6 ms.
TEST(Ns3Roce, ARaisedRateShortensTheGapTheRateLimiterIsWaitingOut) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_switch(8);
  EventQueue q;
  Recorder r(q);
  auto net = roce(t, q,
                  {{"ecn_kmin", {"1KB", "test"}}, {"ecn_kmax", {"2KB", "test"}}, {"ecn_pmax", {"1", "test"}},
                   {"cnp_interval", {"1us", "test"}}, {"dcqcn_g", {"1", "test"}}});
  for (NodeId s = 1; s < 8; ++s) net->send(s, 0, kMiB, r.to(s));
  q.run();
  ASSERT_EQ(r.seen.size(), 7u);
  const Time floor_gap = static_cast<Time>(4158 / 125e3 * 1e12);  // one full frame at 1 Mb/s
  EXPECT_LT(r.seen.back().at, floor_gap / 2);
  EXPECT_GT(totals(*net).cnps, 0u);
  std::printf("[roce] 7-to-1 incast of 1 MiB with every packet marked above 2 KB and a CNP every 1 us: last done "
              "%.1f us (one frame at the 1 Mb/s floor takes %.1f us)\n",
              to_us(r.seen.back().at), to_us(floor_gap));
}

// 4-to-1 on 5 GB/s links, 8 MiB each, PFC on. A probe (one 64 B message from
// NPU 5 to NPU 0 every 200 us) crosses the same egress queue; its one-way
// time less its time on an idle fabric is the queue it waited behind. Once
// DCQCN has cut the senders (after the first millisecond) the queue stays
// near ecn_kmin..ecn_kmax (5 KB..200 KB); PFC alone holds it at the pause
// thresholds of the four ingress ports (about 2 MB each).
struct ProbedIncast {
  std::vector<double> queue_kb;  // seen by each probe sent after 1 ms
  Time done = 0;
};
ProbedIncast probed_incast(const Options& options) {
  const Topology t = one_switch(6, "5GB/s");
  EventQueue q;
  Recorder r(q);
  auto net = roce(t, q, options);
  Starter starter(q, *net, r);
  for (NodeId s = 1; s <= 4; ++s) net->send(s, 0, 8 * kMiB, r.to(s));
  const Time probe_every = 200 * kMicrosecond;
  for (std::uint64_t k = 0; k < 32; ++k) starter.at(static_cast<Time>(k) * probe_every, {5, 0, 64, 1000 + k});
  q.run();
  ProbedIncast out;
  for (NodeId s = 1; s <= 4; ++s) out.done = std::max(out.done, r.at[s]);
  // A probe alone: two hops of 500 ns plus the 126 B frame's serialization at each (25.2 ns).
  const double idle_ps = 1e6 + 2 * 126 / 5e9 * 1e12;
  for (std::uint64_t k = 0; k < 32; ++k) {
    const Time sent = starter.sent_at[1000 + k];
    if (sent < kMillisecond || sent >= out.done || !r.at.count(1000 + k)) continue;
    out.queue_kb.push_back((static_cast<double>(r.at[1000 + k] - sent) - idle_ps) / 1e12 * 5e9 / 1e3);
  }
  return out;
}

TEST(Ns3Roce, DcqcnKeepsTheIncastQueueNearTheMarkingThresholds) {
  SKIP_WITHOUT_NS3();
  const ProbedIncast dcqcn = probed_incast({});
  const ProbedIncast pfc = probed_incast({{"dcqcn", {"false", "test"}}});
  ASSERT_GE(dcqcn.queue_kb.size(), 10u);
  ASSERT_GE(pfc.queue_kb.size(), 10u);
  auto text = [](const ProbedIncast& p) {
    std::string s;
    for (double x : p.queue_kb) s += " " + std::to_string(static_cast<int>(x + 0.5));
    return s + " (done " + std::to_string(static_cast<int>(to_us(p.done))) + " us)";
  };
  std::vector<double> sorted = dcqcn.queue_kb;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LE(sorted.back(), 200.0) << text(dcqcn);
  EXPECT_GE(sorted[sorted.size() / 2], 5.0) << text(dcqcn);
  EXPECT_GT(*std::min_element(pfc.queue_kb.begin(), pfc.queue_kb.end()), 1000.0) << text(pfc);
  // And the port is mostly busy: within 15% of 32 MiB of frames at 5 GB/s
  // (DCQCN's cuts leave it idle at times; PFC alone keeps it busy throughout).
  EXPECT_LE(static_cast<double>(dcqcn.done), 1.15 * 4 * wire_bytes(8 * kMiB) / 5e9 * 1e12);
  EXPECT_LE(static_cast<double>(pfc.done), 1.01 * 4 * wire_bytes(8 * kMiB) / 5e9 * 1e12);
  std::printf("[roce] 4-to-1 of 8 MiB on 5 GB/s (frames alone take %.0f us), queue seen by probes after 1 ms, KB:\n"
              "  DCQCN:%s\n  PFC alone:%s\n",
              4 * wire_bytes(8 * kMiB) / 5e9 * 1e6, text(dcqcn).c_str(), text(pfc).c_str());
}

// Head-of-line blocking: NPUs 0-2 on switch 0 send to NPU 4 on switch 1 (an
// incast at its port) while victim NPU 3 sends to idle NPU 5 over the same
// 200 GB/s trunk, which has room for all four. Under PFC alone the incast
// backs up into the trunk and the pauses stop the victim too; DCQCN cuts the
// incast senders and the victim keeps its line rate.
Time victim_finish(Options options, bool with_incast, Totals* seen = nullptr) {
  const Topology t = testing_support::victim_topology();
  EventQueue q;
  Recorder r(q);
  options["buffer_size"] = {"2MB", "test"};
  auto net = roce(t, q, std::move(options));
  if (with_incast) {
    for (NodeId s = 0; s < 3; ++s) net->send(s, 4, 16 * kMiB, r.to(s));
  }
  net->send(3, 5, 16 * kMiB, r.to(3));
  q.run();
  EXPECT_EQ(r.seen.size(), with_incast ? 4u : 1u);
  if (seen) *seen = totals(*net);
  return r.at[3];
}

TEST(Ns3Roce, HeadOfLineBlockedVictimRecoversWithDcqcn) {
  SKIP_WITHOUT_NS3();
  const Options pfc_alone = {{"dcqcn", {"false", "test"}}};
  const Time alone = victim_finish(pfc_alone, false);
  Totals blocked_seen, recovered_seen;
  const Time blocked = victim_finish(pfc_alone, true, &blocked_seen);
  const Time recovered = victim_finish({}, true, &recovered_seen);
  EXPECT_GT(blocked_seen.pauses, 0u);
  EXPECT_GT(blocked, alone * 2);
  EXPECT_LT(recovered, alone * 8 / 5);
  EXPECT_LT(recovered_seen.pauses, blocked_seen.pauses / 10);
  auto line = [alone](const char* what, Time t, const Totals& s) {
    std::printf("  %s: %.1f us (x%.2f), %llu pauses (paused %.1f us in all), %llu CNPs\n", what, to_us(t),
                static_cast<double>(t) / static_cast<double>(alone), static_cast<unsigned long long>(s.pauses),
                to_us(s.paused), static_cast<unsigned long long>(s.cnps));
  };
  std::printf("[roce] victim flow of 16 MiB beside a 3-to-1 incast of 16 MiB each; alone %.1f us\n", to_us(alone));
  line("PFC alone", blocked, blocked_seen);
  line("PFC and DCQCN", recovered, recovered_seen);
}

TEST(Ns3Roce, BadOptionsAreErrors) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_switch(4);
  EventQueue q;
  auto expect_error = [&](Options o, const std::string& part) {
    try {
      roce(t, q, std::move(o));
      ADD_FAILURE() << "expected InputError containing: " << part;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error({{"ecn_pmax", {"2", "sys.yml:4: network.ecn_pmax"}}}, "sys.yml:4: network.ecn_pmax: expected a number in (0, 1]");
  expect_error({{"pfc", {"maybe", "sys.yml:4: network.pfc"}}}, "expected one of true, false, got 'maybe'");
  expect_error({{"ecn_kmin", {"300KB", "sys.yml:5: network.ecn_kmin"}}}, "expected ecn_kmin < ecn_kmax");
  expect_error({{"cnp_intervall", {"4us", "sys.yml:6: network.cnp_intervall"}}},
               "sys.yml:6: network.cnp_intervall: backend 'ns3' has no option 'cnp_intervall'");
  expect_error({{"tcp_buffer", {"1MiB", "sys.yml:7: network.tcp_buffer"}}},
               "sys.yml:7: network.tcp_buffer: option 'tcp_buffer' is for transport: tcp only");
  expect_error({{"dcqcn_rate_timer", {"0us", "sys.yml:8: network.dcqcn_rate_timer"}}}, "expected a time > 0");
  expect_error({{"buffer_size", {"100KB", "sys.yml:9: network.buffer_size"}}},
               "sys.yml:9: network.buffer_size: 100000 B leaves switch 0 (4 ports in) no room above its PFC headroom "
               "of 233520 B");
  expect_error({{"pfc_xoff", {"100KB", "t"}}, {"pfc_xon", {"200KB", "sys.yml:3: network.pfc_xon"}}},
               "sys.yml:3: network.pfc_xon: expected less than pfc_xoff");
  expect_error({{"pfc_xon", {"3MB", "sys.yml:3: network.pfc_xon"}}},
               "sys.yml:3: network.pfc_xon: 3000000 B must be below the derived pfc_xoff of 2941620 B");
  // A RoCE key on the TCP transport, and a transport that does not exist.
  auto expect_ns3_error = [&](Options o, const std::string& part) {
    NetworkConfig c;
    c.backend = "ns3";
    c.options = std::move(o);
    try {
      make_network(c, t, q);
      ADD_FAILURE() << "expected InputError containing: " << part;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_ns3_error({{"dcqcn", {"true", "sys.yml:2: network.dcqcn"}}},
                   "sys.yml:2: network.dcqcn: option 'dcqcn' is for transport: roce only (this network's transport "
                   "is tcp)");
  expect_ns3_error({{"transport", {"infiniband", "sys.yml:2: network.transport"}}},
                   "sys.yml:2: network.transport: expected one of tcp, roce, ib, got 'infiniband'");
}

// What reading `o` under transport: roce says: the error, or "accepted".
std::string roce_options_message(const Topology& t, Options o) {
  o["transport"] = {"roce", "sys.yml:2: network.transport"};
  try {
    parse_ns3_options(t, BackendOptions(o));
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

// A port that would pause its sender only once it holds the whole switch
// buffer never pauses before the switch drops. The options are read before
// the ns-3 module loads, so this runs without ns-3 too.
TEST(Ns3Roce, APfcXoffNotBelowTheBufferIsAnError) {
  const auto message = [t = one_switch(4)](const Options& o) { return roce_options_message(t, o); };
  EXPECT_EQ(message({{"pfc_xoff", {"20MB", "sys.yml:3: network.pfc_xoff"}}}),
            "sys.yml:3: network.pfc_xoff: 20000000 B is not below the switch's buffer of 12000000 B (buffer_size's "
            "default): a port would fill the whole buffer before it pauses its sender, and the switch would drop; "
            "give pfc_xoff below buffer_size (per port, leaving the other ports and the headroom their room)");
  EXPECT_NE(message({{"buffer_size", {"1MB", "sys.yml:4: network.buffer_size"}},
                     {"pfc_xoff", {"1MB", "sys.yml:5: network.pfc_xoff"}}})
                .find("sys.yml:5: network.pfc_xoff: 1000000 B is not below the switch's buffer of 1000000 B "
                      "(sys.yml:4: network.buffer_size)"),
            std::string::npos);
  EXPECT_EQ(message({{"pfc_xoff", {"1MB", "sys.yml:3: network.pfc_xoff"}}}), "accepted");
}

// A DCQCN floor at or above a NIC's line rate (50 GB/s here) leaves nothing
// to cut: DCQCN would be off without a word.
TEST(Ns3Roce, ADcqcnFloorNotBelowTheLineRateIsAnError) {
  const auto message = [t = one_switch(4)](const Options& o) { return roce_options_message(t, o); };
  EXPECT_EQ(message({{"dcqcn_min_rate", {"50GB/s", "sys.yml:6: network.dcqcn_min_rate"}}}),
            "sys.yml:6: network.dcqcn_min_rate: 50000000000 B/s is not below npu0's line rate of 50000000000 B/s: "
            "DCQCN could never slow a queue pair (give a floor below the slowest NIC's rate, or dcqcn: false)");
  EXPECT_EQ(message({{"dcqcn_min_rate", {"1GB/s", "sys.yml:6: network.dcqcn_min_rate"}}}), "accepted");
  EXPECT_EQ(message({{"dcqcn_min_rate", {"50GB/s", "t"}}, {"dcqcn", {"false", "t"}}}), "accepted");
}

// Go-back-N with a timer shorter than one full packet on a link resent every
// packet before its acknowledgement could come: a run that never ended
// (RoCE with retransmit_timeout: 10ns; InfiniBand, whose timer is fixed, on
// a 250 Kbps link). Refused, naming the timer and the link.
TEST(Ns3Roce, AGoBackNTimerShorterThanAPacketIsAnError) {
  SKIP_WITHOUT_NS3();
  const auto message = [](const Topology& t, Options o) {
    EventQueue q;
    try {
      NetworkConfig c;
      c.backend = "ns3";
      c.options = std::move(o);
      make_network(c, t, q);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const Topology fast = one_switch(4);
  EXPECT_EQ(message(fast, {{"transport", {"roce", "t"}},
                           {"retransmit_timeout", {"10ns", "sys.yml:3: network.retransmit_timeout"}}}),
            "sys.yml:3: network.retransmit_timeout: 10 ns is not longer than one full packet (4158 B) on the link "
            "npu0 -> sw0 at 50000000000 B/s (83.16 ns): every packet would be resent before its acknowledgement could "
            "come, and the run would never end; give links of their real rate, or a longer retransmit_timeout");
  EXPECT_EQ(message(fast, {{"transport", {"roce", "t"}}, {"retransmit_timeout", {"100ns", "t"}}}), "accepted");
  EXPECT_EQ(message(one_switch(4, "250Kbps"), {{"transport", {"ib", "t"}}})
                .rfind("the go-back-N timer (InfiniBand's): 67.10886 ms is not longer than one full packet (4122 B)", 0),
            0u);
}

// Every pair's messages in order, each when its last byte is in; a one-hop
// message takes its frames' serialization plus the latency.
TEST(Ns3Roce, MessagesArriveInOrderAtTheirLastByte) {
  SKIP_WITHOUT_NS3();
  const Topology t = parse_topology("npus: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n  - {src: npu0, dst: npu1}\n",
                                    "one_link.yml");
  EventQueue q;
  Recorder r(q);
  auto net = roce(t, q);
  net->send(0, 1, kMiB, r.to(1));
  net->send(0, 1, 0, r.to(2));
  net->send(0, 1, 5000, r.to(3));
  net->send(1, 1, 10, r.to(4));
  q.run();
  ASSERT_EQ(r.seen.size(), 4u);
  EXPECT_EQ(r.seen[0].token, 4u);
  EXPECT_EQ(r.seen[1].token, 1u);
  EXPECT_EQ(r.seen[2].token, 2u);
  EXPECT_EQ(r.seen[3].token, 3u);
  // 256 full packets of 4158 B at 50 GB/s, then the cable.
  EXPECT_EQ(r.at[1], transfer_time(256 * 4158, 50'000'000'000) + 500 * kNanosecond);
  const std::vector<LinkUsage> u = net->link_usage();
  EXPECT_EQ(u[0].bytes, kMiB + 1 + 5000);
  EXPECT_EQ(u[0].packets, 256u + 1 + 2);
  EXPECT_EQ(u[0].drops, 0u);
}

// NCCL opens every communicator's queue pairs apart: one communicator's
// messages to a peer go one after another on its queue pair, two
// communicators' share the NIC packet by packet and end a packet apart.
TEST(Ns3Roce, EachCommunicatorHasQueuePairsOfItsOwn) {
  SKIP_WITHOUT_NS3();
  const Topology t = parse_topology("npus: 2\nbandwidth: 50GB/s\nlatency: 500ns\nlinks:\n  - {src: npu0, dst: npu1}\n",
                                    "one_link.yml");
  const Time wire = transfer_time(256 * 4158, 50'000'000'000);  // 1 MiB in 256 full packets
  const Time packet = transfer_time(4158, 50'000'000'000);
  const Time cable = 500 * kNanosecond;
  for (const std::uint32_t second : {1u, 2u}) {
    SCOPED_TRACE(second);
    EventQueue q;
    Recorder r(q);
    auto net = roce(t, q);
    net->send_on(Connection{0, 0, 1}, 0, 1, kMiB, r.to(1));
    net->send_on(Connection{0, 0, second}, 0, 1, kMiB, r.to(2));
    q.run();
    ASSERT_EQ(r.seen.size(), 2u);
    EXPECT_EQ(r.at[2], 2 * wire + cable);  // the wire busy throughout
    // One queue pair: the first alone on the wire. Two: in turn to the end.
    EXPECT_EQ(r.at[1], second == 1 ? wire + cable : 2 * wire + cable - packet);
  }
}

// transport: ib: credits instead of PFC. The same 7-to-1 incast drops nothing
// and pauses nothing, and keeps the port into NPU 0 busy (26 B of InfiniBand
// headers per 4096 B packet); the victim flow is blocked behind the incast
// as under PFC (credits back up the same way).
std::unique_ptr<Network> ib(const Topology& t, EventQueue& q, Options extra = {}) {
  NetworkConfig c;
  c.backend = "ns3";
  c.options = std::move(extra);
  c.options["transport"] = {"ib", "test"};
  return make_network(c, t, q);
}

TEST(Ns3Ib, CreditFlowControlIsLosslessWithoutPauses) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_switch(8);
  const std::uint64_t bytes = 2 * kMiB;
  EventQueue q;
  Recorder r(q);
  auto net = ib(t, q, {{"buffer_size", {"1MB", "test"}}});
  for (NodeId s = 1; s < 8; ++s) net->send(s, 0, bytes, r.to(s));
  q.run();
  ASSERT_EQ(r.seen.size(), 7u);
  const Totals s = totals(*net);
  EXPECT_EQ(s.drops, 0u);
  EXPECT_EQ(s.pauses, 0u);
  EXPECT_EQ(s.marks, 0u);
  EXPECT_EQ(counter(*net, "retransmitted packets"), 0u);
  const double frames = 7 * static_cast<double>(bytes + bytes / 4096 * 26);
  const double bound_ps = frames / 50e9 * 1e12 + 1e6;
  const Time last = r.seen.back().at;
  EXPECT_GE(static_cast<double>(last), bound_ps);
  EXPECT_LE(static_cast<double>(last), 1.05 * bound_ps);
  std::printf("[ib] 7-to-1 incast of 2 MiB, 1 MB of input buffers per switch: last done %.1f ns, bound %.1f ns "
              "(+%.2f%%), peak queue %llu B, 0 drops, 0 pauses\n",
              to_ns(last), bound_ps / 1e3, 100 * (static_cast<double>(last) / bound_ps - 1),
              static_cast<unsigned long long>(s.peak_queue));
}

TEST(Ns3Ib, VictimFlowIsBlockedBehindTheIncast) {
  SKIP_WITHOUT_NS3();
  const Time alone = victim_finish({{"dcqcn", {"false", "test"}}}, false);
  const Topology t = testing_support::victim_topology();
  EventQueue q;
  Recorder r(q);
  auto net = ib(t, q, {{"buffer_size", {"2MB", "test"}}});
  for (NodeId s = 0; s < 3; ++s) net->send(s, 4, 16 * kMiB, r.to(s));
  net->send(3, 5, 16 * kMiB, r.to(3));
  q.run();
  ASSERT_EQ(r.seen.size(), 4u);
  EXPECT_EQ(totals(*net).drops, 0u);
  EXPECT_GT(r.at[3], alone * 3 / 2);
  std::printf("[ib] victim flow of 16 MiB beside a 3-to-1 incast (2 MB of input buffers per switch): %.1f us, "
              "x%.2f its time alone on roce\n", to_us(r.at[3]), static_cast<double>(r.at[3]) / static_cast<double>(alone));
}

TEST(Ns3Ib, RoceOptionsAreErrors) {
  SKIP_WITHOUT_NS3();
  const Topology t = one_switch(4);
  EventQueue q;
  try {
    ib(t, q, {{"dcqcn", {"true", "sys.yml:2: network.dcqcn"}}});
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sys.yml:2: network.dcqcn: option 'dcqcn' is for transport: roce only (this "
                                         "network's transport is ib)"),
              std::string::npos)
        << e.what();
  }
  try {
    ib(t, q, {{"buffer_size", {"4KB", "sys.yml:3: network.buffer_size"}}});
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sys.yml:3: network.buffer_size: 4000 B shared by the 4 input ports of node 4 "
                                         "leaves each less than one 4122 B packet of credits"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sim
