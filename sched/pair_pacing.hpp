// Per-VM-pair pacing for the HierScheduler (level 2, next to the window gate).
//
// The paper's μFAB-E admits a pair's packets by its sending window w (§3.4,
// Eqn 3) and emits them at its NIC's rate (§4.1); on the testbed the NIC and
// the fabric links run at the same 10 Gb/s, so a window drains at the link
// rate and the first switch does not queue it. Where the edge's port is
// faster than the fabric's links (the emulated fabric: memif, 100 Mb/s access
// vs 10 Mb/s links) a window would leave as one burst, the first switch would
// queue it and every RTT sample would grow by that queue. Pacing a pair at
//     r = w / T          (window over the pair's base RTT T, Eqn 3's C_l·T
//                         term turned back into the rate it stands for)
// spreads the window over one base RTT, as on the testbed's wire.
//
// A token bucket per pair, kept as the time the pair may send next
// (eligible_at, ns on the caller's clock): after a packet of len bytes at
// time now,
//     eligible_at = max(eligible_at, now - depth) + len * ns_per_byte
// so a pair idle for a while sends at most `depth` ns of its rate at once
// (plus the packet in hand), and a pair served late by a coarse poll loop
// keeps its long-run rate. ns_per_byte is fixed point (2^-24 ns) and set
// only when the rate changes: no division per packet.
//
// Pairs that must wait are parked in a binary min-heap keyed by
// (eligible_at, pair id): release() hands them back in that order (ties to the
// lower pair id), each in O(log n). All memory is allocated by the
// constructor.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace ufab {

class PairPacing {
 public:
  static constexpr uint32_t kNotParked = UINT32_MAX;
  static constexpr int kFracBits = 24;  // ns_per_byte in units of 2^-24 ns
  // len (< 2^16) * ns_per_byte must fit in 64 bits: ns_per_byte < 2^48, i.e.
  // rates down to ~0.06 B/s; slower rates are clamped to that.
  static constexpr uint64_t kMaxNsPerByteFp = (uint64_t{1} << 48) - 1;

  PairPacing() = default;
  PairPacing(uint32_t max_pairs, uint64_t depth_ns)
      : st_(max_pairs), pos_(max_pairs, kNotParked), heap_(max_pairs), depth_(depth_ns) {}

  // bytes_per_s <= 0 (or not finite): the pair is not paced. Called on the
  // control path (a window update), never per packet.
  void set_rate(uint32_t pair, double bytes_per_s) {
    uint64_t fp = 0;
    if (bytes_per_s > 0 && bytes_per_s < std::numeric_limits<double>::infinity()) {
      const double v = 1e9 * static_cast<double>(uint64_t{1} << kFracBits) / bytes_per_s;
      fp = v >= static_cast<double>(kMaxNsPerByteFp) ? kMaxNsPerByteFp : static_cast<uint64_t>(v + 0.5);
      if (fp == 0) fp = 1;  // faster than 2^24 B/ns: as good as unpaced, but still a paced pair
    }
    st_[pair].ns_per_byte_fp = fp;
  }
  bool paced(uint32_t pair) const { return st_[pair].ns_per_byte_fp != 0; }
  uint64_t ns_per_byte_fp(uint32_t pair) const { return st_[pair].ns_per_byte_fp; }
  uint64_t eligible_at(uint32_t pair) const { return st_[pair].eligible_at; }
  uint64_t depth_ns() const { return depth_; }

  // The pair sent len bytes at now: moves its eligible time on. True if it
  // must wait (eligible_at > now). An unpaced pair never waits.
  bool charge(uint32_t pair, uint32_t len, uint64_t now) {
    State& s = st_[pair];
    if (s.ns_per_byte_fp == 0) return false;
    const uint64_t floor = now > depth_ ? now - depth_ : 0;
    const uint64_t from = s.eligible_at > floor ? s.eligible_at : floor;
    s.eligible_at = from + ((uint64_t{len} * s.ns_per_byte_fp) >> kFracBits);
    return s.eligible_at > now;
  }
  // A hint: the pair's state will be charged soon (the scheduler's look-ahead).
  // Always inlined, or GCC drops the call as pure (hier_scheduler.hpp).
  [[gnu::always_inline]] void prefetch(uint32_t pair) const { __builtin_prefetch(&st_[pair], 1); }
  bool waiting(uint32_t pair, uint64_t now) const {
    return st_[pair].ns_per_byte_fp != 0 && st_[pair].eligible_at > now;
  }
  // Forgets a pair's state (a removed pair; it must not be parked).
  void reset(uint32_t pair) { st_[pair] = State{}; }

  // ---- parked pairs ----
  bool is_parked(uint32_t pair) const { return pos_[pair] != kNotParked; }
  void park(uint32_t pair) {
    uint32_t i = n_++;
    place(i, pair);
    sift_up(i);
  }
  // Takes a parked pair out of the heap, wherever it sits (a pair being
  // flushed, HierScheduler::flush_pair); nothing when it is not parked.
  void unpark(uint32_t pair) {
    const uint32_t i = pos_[pair];
    if (i == kNotParked) return;
    pos_[pair] = kNotParked;
    if (--n_ == i) return;  // it was the last
    const uint32_t last = heap_[n_];  // into the hole: up if it is earlier than its parent, else down
    place(i, last);
    sift_up(i);
    if (pos_[last] == i) sift_down(i);
  }
  // Pops the parked pair with the least (eligible_at, id) if it is due at
  // now. False when none is due.
  bool release(uint64_t now, uint32_t& pair) {
    if (n_ == 0 || st_[heap_[0]].eligible_at > now) return false;
    pair = heap_[0];
    pos_[pair] = kNotParked;
    if (--n_ != 0) {
      place(0, heap_[n_]);
      sift_down(0);
    }
    return true;
  }
  size_t parked() const { return n_; }
  // The earliest eligible time of a parked pair; UINT64_MAX when none.
  uint64_t next_release() const { return n_ == 0 ? UINT64_MAX : st_[heap_[0]].eligible_at; }

 private:
  // 16 bytes, four to a cache line: the data path touches only this.
  struct State {
    uint64_t eligible_at = 0;
    uint64_t ns_per_byte_fp = 0;  // 0: not paced
  };
  bool before(uint32_t a, uint32_t b) const {
    const uint64_t ta = st_[a].eligible_at, tb = st_[b].eligible_at;
    return ta < tb || (ta == tb && a < b);
  }
  void place(uint32_t i, uint32_t pair) {
    heap_[i] = pair;
    pos_[pair] = i;
  }
  void sift_up(uint32_t i) {
    const uint32_t p = heap_[i];
    while (i > 0) {
      const uint32_t up = (i - 1) / 2;
      if (!before(p, heap_[up])) break;
      place(i, heap_[up]);
      i = up;
    }
    place(i, p);
  }
  void sift_down(uint32_t i) {
    const uint32_t p = heap_[i];
    for (;;) {
      uint32_t c = 2 * i + 1;
      if (c >= n_) break;
      if (c + 1 < n_ && before(heap_[c + 1], heap_[c])) ++c;
      if (!before(heap_[c], p)) break;
      place(i, heap_[c]);
      i = c;
    }
    place(i, p);
  }

  std::vector<State> st_;
  std::vector<uint32_t> pos_;   // a parked pair's index in heap_, else kNotParked
  std::vector<uint32_t> heap_;
  uint32_t n_ = 0;
  uint64_t depth_ = 0;
};

}  // namespace ufab
