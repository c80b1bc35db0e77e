// What one directed link saw, as every transport counts it.
#pragma once

#include <cstdint>

#include "core/time.h"
#include "network/network.h"

namespace sim {

struct LinkStats {
  BytesPerSecond rate = 0;  // the link's data rate, for busy time
  std::uint64_t payload = 0, wire = 0, packets = 0, drops = 0, peak_queue = 0;
  Time busy = 0;
  // Lossless transports (roce): see LinkUsage.
  std::uint64_t pauses_sent = 0, pauses_received = 0, ecn_marks = 0, cnps = 0;
  Time paused = 0;

  // A frame of `wire_bytes` carrying `payload_bytes` of message data began transmission.
  void transmitted(std::uint64_t wire_bytes, std::uint64_t payload_bytes) {
    ++packets;
    wire += wire_bytes;
    busy += transfer_time(wire_bytes, rate);
    payload += payload_bytes;
  }
  void queue_at(std::uint64_t bytes) { peak_queue = bytes > peak_queue ? bytes : peak_queue; }

  LinkUsage usage() const {
    LinkUsage u;
    u.bytes = payload;
    u.busy = busy;
    u.wire_bytes = wire;
    u.packets = packets;
    u.drops = drops;
    u.peak_queue_bytes = peak_queue;
    u.pauses_sent = pauses_sent;
    u.pauses_received = pauses_received;
    u.paused = paused;
    u.ecn_marks = ecn_marks;
    u.cnps = cnps;
    return u;
  }
};

}  // namespace sim
