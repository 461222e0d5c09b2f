// A TX burst buffer for one port, in the style of rte_eth_tx_buffer: frames
// collect in a fixed array and leave in one burst when it is full or at the
// end of a loop iteration. A worker with its own TX queue on the port bursts
// into it (rte_eth_tx_burst); a worker without one (the PMD has fewer TX
// queues than workers) hands the frames to the port's TX lcore through an
// rte_ring (layout.hpp). What the PMD refuses is freed and counted
// (tx_full), what the ring refuses too (ring_full); what leaves is counted as
// sent, or as handed off.
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdint>

#include "pipeline/port_link.hpp"
#include "pipeline/stats.hpp"

namespace ufab::pipeline {

class TxBuffer {
 public:
  static constexpr uint16_t kCap = 64;

  // link: the port's link state (nullptr: none known, refusals are tx_full).
  TxBuffer(uint16_t port, uint16_t queue, EdgeStats* stats, const PortLink* link = nullptr)
      : port_(port), queue_(queue), stats_(stats), link_(link) {}
  // Frames go to `ring` (the TX lcore's) instead of a TX queue.
  void use_ring(rte_ring* ring) { ring_ = ring; }
  // The port is gone (ports.hpp, /ufab/port_remove): what is pushed from
  // here on is dropped as link_down, and the PMD is not called (a closed
  // port's burst functions log and dump a stack).
  void close() {
    closed_ = true;
    ring_ = nullptr;
  }

  // Counts the frame's bytes now, while its header line is in the cache
  // (a loop over the burst in flush() cost ~6 instructions a frame).
  void push(rte_mbuf* m) {
    bytes_ += rte_pktmbuf_pkt_len(m);
    pkts_[n_++] = m;
    if (n_ == kCap) flush();
  }
  void flush() {
    if (n_ == 0) return;
    PortStats& ps = stats_->ports[port_];
    if (closed_) return drop_from(0, ps, Drop::link_down);
    if (ring_ != nullptr) {
      const unsigned sent = rte_ring_mp_enqueue_burst(ring_, reinterpret_cast<void* const*>(pkts_), n_, nullptr);
      stats_->handed_off += sent;
      drop_from(static_cast<uint16_t>(sent), ps, Drop::ring_full);
      return;
    }
    // The bytes push() counted, less the frames the PMD refused (still ours;
    // those it sent it may have freed).
    uint64_t bytes = bytes_;
    const uint16_t sent = rte_eth_tx_burst(port_, queue_, pkts_, n_);
    for (uint16_t i = sent; i < n_; ++i) bytes -= rte_pktmbuf_pkt_len(pkts_[i]);
    ps.tx += sent;
    ps.tx_bytes += bytes;
    if (sent != n_) drop_from(sent, ps, link_ != nullptr && link_->known_down() ? Drop::link_down : Drop::tx_full);
    n_ = 0;
    bytes_ = 0;
  }
  uint16_t pending() const { return n_; }

 private:
  void drop_from(uint16_t sent, PortStats& ps, Drop why) {
    for (uint16_t i = sent; i < n_; ++i) {
      ++ps.drops[static_cast<size_t>(why)];
      rte_pktmbuf_free(pkts_[i]);
    }
    n_ = 0;
    bytes_ = 0;
  }

  uint16_t port_, queue_;
  EdgeStats* stats_;
  const PortLink* link_;
  rte_ring* ring_ = nullptr;
  bool closed_ = false;
  uint16_t n_ = 0;
  uint64_t bytes_ = 0;  // of pkts_[0, n_)
  rte_mbuf* pkts_[kCap];
};

}  // namespace ufab::pipeline
