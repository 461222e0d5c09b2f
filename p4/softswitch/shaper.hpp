// Token bucket that holds an egress port to its configured capacity C'_l,
// standing in for the physical link rate of a switch port. Integer only: the
// credit is kept in nanobits, so a refill is one multiply (bit/s x ns =
// nanobits) and there is no division per packet.
#pragma once

#include <algorithm>
#include <cstdint>

#include "control/clock.hpp"

namespace ufab::core {

class Shaper {
 public:
  // depth: the largest burst the port may send back to back after idling,
  // at least one 1518 B frame and otherwise 20 µs at the line rate.
  // depth_ns: the burst allowance in time at the line rate (--burst-us).
  explicit Shaper(uint64_t bps, Nanos start = 0, Nanos depth_ns = 20 * kUs) : bps_(bps), last_(start) {
    const int64_t min_depth = int64_t{1518} * 8 * kNanobitsPerBit;
    depth_ = std::max<int64_t>(min_depth, static_cast<int64_t>(bps_) * static_cast<int64_t>(depth_ns));
    max_idle_ns_ = static_cast<uint64_t>(depth_) / bps_ + 1;
    credit_ = depth_;
  }

  // A frame may leave while the credit is positive; it then pays its whole
  // length, possibly going into debt, so frames of any size pass and the
  // long-run rate is exactly bps.
  bool ready(Nanos now) {
    refill(now);
    return credit_ > 0;
  }
  // ns until ready() turns true (0 when it is); call after ready(now).
  Nanos ready_in() const { return credit_ > 0 ? 0 : static_cast<Nanos>(-credit_) / bps_ + 1; }
  void pay(uint32_t frame_bytes) { credit_ -= int64_t{frame_bytes} * 8 * kNanobitsPerBit; }
  uint64_t bps() const { return bps_; }

 private:
  static constexpr int64_t kNanobitsPerBit = 1'000'000'000;
  void refill(Nanos now) {
    if (now <= last_) return;
    const uint64_t dt = std::min<uint64_t>(now - last_, max_idle_ns_);  // bounds the product
    last_ = now;
    credit_ = std::min(depth_, credit_ + static_cast<int64_t>(dt * bps_));
  }

  uint64_t bps_;
  Nanos last_;
  int64_t depth_ = 0;
  int64_t credit_ = 0;
  uint64_t max_idle_ns_ = 0;
};

}  // namespace ufab::core
