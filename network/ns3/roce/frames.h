// RoCEv2 (and InfiniBand) frame sizes on the wire and the packet the model carries.
#pragma once

#include <cstdint>

#include "network/topology.h"

namespace sim {

// Headers of every RoCEv2 frame: Ethernet 14 + IPv4 20 + UDP 8 + InfiniBand
// BTH 12 + ICRC 4 + Ethernet FCS 4 (preamble and inter-frame gap are not
// counted, as for TCP's PPP frames).
inline constexpr std::uint32_t kRoceHeaderBytes = 62;
// What `mtu` (an IP packet) leaves for payload: IPv4 + UDP + BTH + ICRC.
inline constexpr std::uint32_t kRoceIpOverhead = 44;
// InfiniBand (transport: ib): LRH 8 + BTH 12 + ICRC 4 + VCRC 2.
inline constexpr std::uint32_t kIbHeaderBytes = 26;
inline constexpr std::uint32_t kCnpFrameBytes = kRoceHeaderBytes + 16;  // + 16 reserved bytes
inline constexpr std::uint32_t kPauseFrameBytes = 64;                   // a minimum Ethernet frame

// RoCE's path MTU is an InfiniBand MTU (256..4096 B): the largest that fits.
inline std::uint32_t roce_payload_mtu(std::uint32_t ip_mtu) {
  std::uint32_t m = 4096;
  while (m > 256 && m + kRoceIpOverhead > ip_mtu) m /= 2;
  return m;
}

struct RocePacket {
  enum Kind : std::uint8_t { kData, kAck, kNack, kCnp };
  Kind kind = kData;
  bool ecn = false;           // congestion experienced (marked at a switch egress)
  std::uint32_t qp = 0;       // its queue pair
  std::uint8_t lane = 0;      // its traffic class (PFC priority, InfiniBand data virtual lane)
  std::uint32_t hop = 0;      // index of the link it is on, in its direction's route
  std::uint32_t payload = 0;  // message bytes it carries (data)
  std::uint32_t wire = 0;     // frame bytes
  std::uint32_t epoch = 0;    // the sender's go-back count when sent (data), or that NACKed (NACK)
  std::uint64_t seq = 0;      // data: stream offset of its first byte; ACK/NACK: the next byte expected
  LinkId ingress = 0;         // the link it arrived on at the node buffering it
};

}  // namespace sim
