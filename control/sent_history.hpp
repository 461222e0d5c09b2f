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
  // Reads the header only (the newest sample's time is kept there too) and
  // stores into the ring: per data frame at many pairs the newest slot is
  // a miss, which a store does not wait for.
  void record(Nanos now, uint64_t cum_bytes) {
    if (n_ > 0 && now < last_t_ + gran_) {
      last().bytes = cum_bytes;  // same bucket: keep the newest count
      return;
    }
    if (n_ == kSlots) drop_oldest();
    ring_[(head_ + n_) % kSlots] = Sample{now, cum_bytes};
    ++n_;
    last_t_ = now;
  }

  // The cumulative byte count of the newest sample taken at or before t
  // (bytes sent no later than t, rounded down to the granularity); 0 if none.
  // Samples older than the answer are dropped: t must not decrease. The
  // samples are in time order, so those at or before t are a prefix of the
  // ring: none (the usual call), all (after a quiet stretch), or a binary
  // search's worth; one at a time, a full ring took ~800 instructions.
  uint64_t bytes_sent_by(Nanos t) {
    if (n_ == 0 || at(0).t > t) return floor_;
    uint32_t k = n_;  // samples at or before t: [0, k)
    if (at(n_ - 1).t > t) {
      uint32_t lo = 1, hi = n_ - 1;  // at(lo - 1) <= t < at(hi)
      while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2;
        if (at(mid).t <= t) lo = mid + 1;
        else hi = mid;
      }
      k = lo;
    }
    floor_ = at(k - 1).bytes;
    head_ = (head_ + k) % kSlots;
    n_ -= k;
    return floor_;
  }

  void clear() { n_ = 0; head_ = 0; floor_ = 0; }

  // The time of the oldest sample not yet consumed by bytes_sent_by(): the
  // earliest t for which bytes_sent_by(t) can move (VmPair::next_deadline).
  bool empty() const { return n_ == 0; }
  Nanos oldest_time() const { return ring_[head_].t; }  // valid unless empty()

  // Hints. The line record() stores into next, for a new sample (see
  // VmPair::prefetch_history); a sample in the same bucket is the newest,
  // which the last record() touched.
  void prefetch_tail() const { __builtin_prefetch(&ring_[(head_ + n_) % kSlots], 1); }
  // The oldest sample, which bytes_sent_by() and oldest_time() read first.
  void prefetch_head() const { __builtin_prefetch(&ring_[head_]); }

 private:
  struct Sample {
    Nanos t = 0;
    uint64_t bytes = 0;
  };
  Sample& last() { return ring_[(head_ + n_ - 1) % kSlots]; }
  const Sample& at(uint32_t i) const { return ring_[(head_ + i) % kSlots]; }  // i-th oldest
  void drop_oldest() {
    head_ = (head_ + 1) % kSlots;
    --n_;
  }

  // The header first: an owner keeps it next to its other per-frame fields
  // (VmPair), and the ring after. The header is 32 bytes and the ring 16-byte
  // aligned, so no sample straddles two cache lines (an unaligned ring put
  // one slot in four across two, and was measured slower: docs/perf-log.md).
  Nanos gran_;
  uint32_t head_ = 0, n_ = 0;
  uint64_t floor_ = 0;  // count of the newest sample already consumed
  Nanos last_t_ = 0;    // time of the newest sample (valid while n_ > 0)
  alignas(16) std::array<Sample, kSlots> ring_{};
};

}  // namespace ufab
