// One egress port of the software switch: the traffic manager's FIFO queue
// (bounded in bytes), the shaper that drains it at C'_l, and the delay line
// a frame sits in after it left the queue (the link's propagation delay).
// Telemetry is stamped between the two, when the frame leaves the queue:
// that is where a switch's egress pipeline sees the queue depth (App. G).
#pragma once

#include <cstdint>

#include "control/clock.hpp"
#include "p4/softswitch/pkt_ring.hpp"
#include "p4/softswitch/shaper.hpp"

struct rte_mbuf;

namespace ufab::core {

struct QueuedPkt {
  rte_mbuf* m = nullptr;
  uint32_t len = 0;
  uint16_t in_port = 0;  // bridged to the egress pipeline
};

struct DelayedPkt {
  rte_mbuf* m = nullptr;
  Nanos release = 0;  // leaves when now >= release
};

struct EgressPort {
  EgressPort(uint64_t bps, Nanos delay_ns, uint64_t limit_bytes, size_t max_pkts, Nanos burst_ns = 20 * kUs)
      : shaper(bps, 0, burst_ns), delay(delay_ns), limit(limit_bytes), queue(max_pkts), line(max_pkts) {}

  // False (nothing queued) when the frame would take the queue past its limit.
  bool enqueue(rte_mbuf* m, uint32_t len, uint16_t in_port) {
    if (queue_bytes + len > limit || queue.full()) return false;
    queue.push({m, len, in_port});
    queue_bytes += len;
    return true;
  }
  size_t queued() const { return queue.size() + line.size(); }

  Shaper shaper;
  Nanos delay;
  uint64_t limit;
  uint64_t queue_bytes = 0;
  PktRing<QueuedPkt> queue;
  PktRing<DelayedPkt> line;
};

}  // namespace ufab::core
