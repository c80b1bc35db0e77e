// The ns3 backend's options: what the system config's `network:` section may
// set, their defaults, and their parsing.
//
// Plain C++ without ns-3 headers, compiled into sim_network (the registry
// parses here and hands the result to the module), and included by the
// module too, which is compiled as C++17: keep this header C++17.
// docs/network.md gives every option's unit and the source of its default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "network/backend_registry.h"
#include "network/topology.h"

namespace sim {

enum class Ns3Transport : std::uint8_t { kTcp, kRoce, kIb };

// RoCEv2 with PFC, ECN marking and DCQCN (network/ns3/roce/).
struct RoceOptions {
  bool pfc = true;
  // Shared packet buffer of every switch: 12 MB, the Broadcom Trident II of
  // the DCQCN paper's testbed (Zhu et al., SIGCOMM 2015, section 5).
  std::uint64_t buffer_bytes = 12'000'000;
  std::string buffer_where = "network.buffer_size";  // where it was set, for messages
  // PFC thresholds per ingress port; 0: derived from the buffer (docs/network.md).
  std::uint64_t pfc_xoff = 0;
  std::uint64_t pfc_xon = 0;
  std::string pfc_xon_where = "network.pfc_xon";
  // RED-style ECN marking at switch egress: the DCQCN paper's Kmin 5 KB,
  // Kmax 200 KB, Pmax 1% (section 5, for 40 Gb/s links).
  std::uint64_t ecn_kmin = 5'000;
  std::uint64_t ecn_kmax = 200'000;
  double ecn_pmax = 0.01;
  bool dcqcn = true;
  // DCQCN's reaction and notification points as the DCQCN paper sets them
  // (Zhu et al., SIGCOMM 2015, section 5: g = 1/256, K = 55 us, T = 55 us,
  // B = 10 MB, F = 5, R_AI = 40 Mb/s, N = 50 us). The paper gives no R_HAI
  // nor a floor: those are NVIDIA ConnectX's defaults (rpg_hai_rate 50 Mb/s,
  // rpg_min_rate 1 Mb/s).
  double g = 1.0 / 256;
  Time alpha_timer = 55 * kMicrosecond;          // K
  Time rate_timer = 55 * kMicrosecond;           // T
  std::uint64_t byte_counter = 10'000'000;       // B
  std::uint32_t fast_recovery_steps = 5;         // F
  BytesPerSecond rate_ai = 5'000'000;            // R_AI 40 Mb/s
  BytesPerSecond rate_hai = 6'250'000;           // R_HAI 50 Mb/s
  BytesPerSecond min_rate = 125'000;             // 1 Mb/s
  // Notification point: at most one CNP per QP per interval (N).
  Time cnp_interval = 50 * kMicrosecond;
  // Go-back-N's fallback when no NACK comes (a lost tail): InfiniBand's local
  // ACK timeout, 4.096 us x 2^14 (NCCL_IB_TIMEOUT 14, NCCL's default before 2.14).
  Time retransmit_timeout = 4'096 * kNanosecond * (1 << 14);
  std::string retransmit_where;  // where it was set (empty: the default), for messages
};

struct Ns3Options {
  LinkModel links;
  Ns3Transport transport = Ns3Transport::kTcp;
  std::uint32_t mtu = 9000;                 // IP packet size on every link (jumbo frames)
  std::uint64_t queue_bytes = 4ull << 20;   // tcp: drop-tail transmit queue of every link
  std::uint64_t tcp_buffer = 2ull << 20;    // tcp: send and receive buffer of every connection
  Time min_rto = 1'000'000'000;             // tcp: minimum retransmission timeout (1 ms)
  Time delayed_ack = 10'000'000;            // tcp: delayed-ACK timeout (10 us)
  std::uint32_t initial_cwnd = 10;          // tcp: initial window in segments (Linux, RFC 6928)
  std::string congestion = "newreno";       // tcp: newreno or cubic
  bool connect_before_start = true;         // tcp: handshakes of every NPU pair done before time 0
  RoceOptions roce;                         // roce (and ib: buffer_size only)
  // roce and ib: traffic classes, each with its own queues and flow control
  // at every port (RoCE's 802.1p priorities with PFC per priority, or
  // InfiniBand's data virtual lanes with credits per lane), served in turn,
  // one packet each (equal weights). A message's class is its connection's
  // service level mod this (docs/network.md, "Traffic classes").
  std::uint32_t traffic_classes = 1;
  // How a FatTree's equal-cost paths carry a pair's traffic (docs/network.md,
  // "Multi-path routing"): roce and ib route each queue pair on its hashed
  // path (ecmp-hash) or spray every message over all paths; tcp runs one
  // connection per NPU pair on the pair's route.
  RoutingModel routing;
  std::uint32_t seed = 1;                   // ns-3 random streams, ECN marking
};

// The backend's one-line summary and its own options (the link model's are added by the registry).
extern const char* const kNs3Summary;
std::vector<BackendOption> ns3_backend_options();

// Reads the options; InputError for a bad value, an option of the other
// transport, or inconsistent thresholds.
Ns3Options parse_ns3_options(const Topology& topology, const BackendOptions& options);

}  // namespace sim
