// A TX burst buffer for one port, in the style of rte_eth_tx_buffer: frames
// collect in a fixed array and leave in one rte_eth_tx_burst when it is full
// or at the end of a loop iteration. What the PMD refuses is freed and
// counted (tx_full); what it takes is counted as sent.
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdint>

#include "pipeline/stats.hpp"

namespace ufab::pipeline {

class TxBuffer {
 public:
  static constexpr uint16_t kCap = 64;

  explicit TxBuffer(uint16_t port = 0) : port_(port) {}

  void push(rte_mbuf* m, PortStats& ps) {
    pkts_[n_++] = m;
    if (n_ == kCap) flush(ps);
  }
  void flush(PortStats& ps) {
    if (n_ == 0) return;
    // Lengths are read before the burst: the PMD may free what it sends.
    uint64_t bytes = 0;
    for (uint16_t i = 0; i < n_; ++i) bytes += rte_pktmbuf_pkt_len(pkts_[i]);
    const uint16_t sent = rte_eth_tx_burst(port_, 0, pkts_, n_);
    for (uint16_t i = sent; i < n_; ++i) bytes -= rte_pktmbuf_pkt_len(pkts_[i]);
    ps.tx += sent;
    ps.tx_bytes += bytes;
    for (uint16_t i = sent; i < n_; ++i) {
      ++ps.drops[static_cast<size_t>(Drop::tx_full)];
      rte_pktmbuf_free(pkts_[i]);
    }
    n_ = 0;
  }
  uint16_t pending() const { return n_; }

 private:
  uint16_t port_;
  uint16_t n_ = 0;
  rte_mbuf* pkts_[kCap];
};

}  // namespace ufab::pipeline
