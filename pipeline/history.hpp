// A VM-pair's recent past for /ufab/pair,INDEX: the last 64 samples of its
// window (Eqn 3 / two-stage admission), delivered rate and active path, one
// sample per base RTT (the time scale the window changes on, §3.4), taken by
// the owning worker in its tick. Fixed ring, no allocation. When the next
// sample is due is kept apart, in EdgeState::sample_at (8 bytes per pair, so
// a poll that takes no sample touches neither this 2 KB ring nor the pair's
// cold lines).
#pragma once

#include <array>
#include <cstdint>

#include "control/clock.hpp"

namespace ufab::pipeline {

struct PairSample {
  Nanos t_ns = 0;
  double window_bytes = 0;
  double rate_bps = 0;
  int path = -1;
};

class PairHistory {
 public:
  static constexpr uint32_t kSamples = 64;

  void record(Nanos now, double window, double rate_bps, int path) {
    ring_[n_ % kSamples] = PairSample{now, window, rate_bps, path};
    ++n_;
  }
  // Hints for a caller that records into many pairs' histories in turn
  // (poll_pairs): the count's line first, then, once it has arrived, the
  // slot the next record() writes.
  void prefetch_count() const { __builtin_prefetch(&n_); }
  void prefetch_slot() const { __builtin_prefetch(&ring_[n_ % kSamples], 1); }
  uint32_t size() const { return n_ < kSamples ? n_ : kSamples; }
  // k = 0 is the oldest kept sample.
  const PairSample& at(uint32_t k) const { return ring_[(n_ - size() + k) % kSamples]; }

 private:
  std::array<PairSample, kSamples> ring_{};
  uint64_t n_ = 0;
};

}  // namespace ufab::pipeline
