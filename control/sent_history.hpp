// In-flight accounting for a VM-pair (design decision; the paper leaves it
// open). The edge sits below the VMs' transports and sees no data ACKs. Two
// signals say bytes have left the network:
//  1. a probe response echoes the byte counter at probe time (the probe
//     followed that data FIFO along the path);
//  2. bytes sent more than one measured RTT ago have been delivered (the RTT
//     sample of the last response includes queueing on the path).
// (1) alone lags by the probe spacing and halves a window-limited pair's rate;
// (2) alone trusts the RTT estimate, so VmPair takes the larger of the last
// RTT sample and the base RTT plus the queueing delay the last response
// reported on the path. The pair counts bytes as acked at the larger of the
// two marks. SentHistory keeps (time, cumulative bytes) samples at a
// coarse granularity in a fixed ring, so the per-packet cost is O(1).
#pragma once

#include <array>
#include <cstdint>

#include "control/clock.hpp"

namespace ufab {

class SentHistory {
 public:
  static constexpr size_t kSlots = 64;

  // granularity: at most one sample per this many ns (VmPair: base RTT / 32,
  // so 64 slots span two base RTTs).
  explicit SentHistory(Nanos granularity = 1) : gran_(granularity ? granularity : 1) {}

  // Record the cumulative byte count after a send at time now.
  void record(Nanos now, uint64_t cum_bytes) {
    if (n_ > 0 && now < last().t + gran_) {
      last().bytes = cum_bytes;  // same bucket: keep the newest count
      return;
    }
    if (n_ == kSlots) drop_oldest();
    ring_[(head_ + n_) % kSlots] = Sample{now, cum_bytes};
    ++n_;
  }

  // The cumulative byte count of the newest sample taken at or before t
  // (bytes sent no later than t, rounded down to the granularity); 0 if none.
  // Samples older than the answer are dropped: t must not decrease.
  uint64_t bytes_sent_by(Nanos t) {
    uint64_t best = floor_;
    while (n_ > 0 && ring_[head_].t <= t) {
      best = ring_[head_].bytes;
      floor_ = best;
      drop_oldest();
    }
    return best;
  }

  void clear() { n_ = 0; head_ = 0; floor_ = 0; }

  // The time of the oldest sample not yet consumed by bytes_sent_by(): the
  // earliest t for which bytes_sent_by(t) can move (VmPair::next_deadline).
  bool empty() const { return n_ == 0; }
  Nanos oldest_time() const { return ring_[head_].t; }  // valid unless empty()

  // The lines record() touches next (a hint; see VmPair::prefetch_paths).
  void prefetch_tail() const {
    __builtin_prefetch(&head_);
    if (n_ > 0) __builtin_prefetch(&ring_[(head_ + n_ - 1) % kSlots]);
  }

 private:
  struct Sample {
    Nanos t = 0;
    uint64_t bytes = 0;
  };
  Sample& last() { return ring_[(head_ + n_ - 1) % kSlots]; }
  void drop_oldest() {
    head_ = (head_ + 1) % kSlots;
    --n_;
  }

  // The header first: an owner keeps it next to its other per-frame fields
  // (VmPair), and the ring after.
  Nanos gran_;
  uint32_t head_ = 0, n_ = 0;
  uint64_t floor_ = 0;  // count of the newest sample already consumed
  std::array<Sample, kSlots> ring_{};
};

}  // namespace ufab
