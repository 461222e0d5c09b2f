// The owner's timers over its VM-pairs (issue 4: per-period control work in
// proportion to the pairs with something due, not to all pairs). Each pair
// has at most one armed deadline (VmPair::next_deadline); collect(now) hands
// out the pairs whose deadline has come, in pair order, and disarms them.
//
// A hashed timer wheel: kSlots slots of `granularity` ns each (the token
// period), a pair lives in the slot of its deadline's tick, linked into the
// slot's intrusive doubly linked list (indices, no allocation after
// construction). Arming and disarming are O(1); collect() visits the slots
// of the ticks since the last collect (at most kSlots) and, in each, every
// pair whose deadline falls in that slot's tick modulo the wheel: a deadline
// more than one lap ahead stays in its slot and is looked at once per lap.
// The due pairs are put in pair order by a sort when they are few and by a
// pass over a bitmap of the pairs (one bit per pair) when they are many:
// thousands due at once (8K pairs ticking every base RTT) made the sort
// ~5% of a worker's time.
// Plain C++ (no DPDK), single-threaded: one per worker.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "control/clock.hpp"

namespace ufab {

class PairTimers {
 public:
  static constexpr uint32_t kSlots = 1024;
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr Nanos kUnarmed = ~Nanos{0};

  PairTimers(uint32_t n_pairs, Nanos granularity)
      : gran_(granularity ? granularity : 1), deadline_(n_pairs, kUnarmed), next_(n_pairs, kNone),
        prev_(n_pairs, kNone), slot_(n_pairs, 0), head_(kSlots, kNone), due_bits_((n_pairs + 63) / 64, 0) {}

  uint32_t size() const { return static_cast<uint32_t>(deadline_.size()); }
  Nanos deadline(uint32_t pair) const { return deadline_[pair]; }
  bool armed(uint32_t pair) const { return deadline_[pair] != kUnarmed; }
  uint32_t armed_count() const { return armed_; }

  // Arms pair at t (replacing its deadline); t = kUnarmed disarms it.
  void arm(uint32_t pair, Nanos t) {
    if (armed(pair)) unlink(pair);
    deadline_[pair] = t;
    if (t == kUnarmed) return;
    // A deadline already behind the wheel goes into the slot collect() visits next.
    const uint32_t s = static_cast<uint32_t>((std::max(t, Nanos{cursor_} * gran_) / gran_) % kSlots);
    slot_[pair] = s;
    prev_[pair] = kNone;
    next_[pair] = head_[s];
    if (head_[s] != kNone) prev_[head_[s]] = pair;
    head_[s] = pair;
    ++armed_;
  }
  // Arms pair at t unless it is already armed earlier.
  void arm_min(uint32_t pair, Nanos t) {
    if (t < deadline_[pair]) arm(pair, t);
  }

  // Appends to `due` every pair whose deadline is <= now, disarmed, sorted by
  // pair index (the order in which polling every pair would meet them).
  void collect(Nanos now, std::vector<uint32_t>& due) {
    const size_t first = due.size();
    const uint64_t tick = now / gran_;
    // Ticks cursor_ .. tick, at most one lap; the cursor stays on `tick`,
    // whose slot may still hold later deadlines of the same tick.
    const uint64_t from = tick - cursor_ >= kSlots ? tick - (kSlots - 1) : cursor_;
    for (uint64_t k = from; k <= tick; ++k) {
      const uint32_t s = static_cast<uint32_t>(k % kSlots);
      for (uint32_t p = head_[s]; p != kNone;) {
        const uint32_t nx = next_[p];
        if (deadline_[p] <= now) {
          unlink(p);
          deadline_[p] = kUnarmed;
          due.push_back(p);
        }
        p = nx;
      }
    }
    if (tick > cursor_) cursor_ = tick;
    in_pair_order(due, first);
  }

 private:
  // Sorts due[first..] (distinct pair indices) ascending.
  void in_pair_order(std::vector<uint32_t>& due, size_t first) {
    const size_t n = due.size() - first;
    if (n <= kSortMax) {
      std::sort(due.begin() + static_cast<std::ptrdiff_t>(first), due.end());
      return;
    }
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = first; i < due.size(); ++i) {
      const uint32_t p = due[i];
      due_bits_[p >> 6] |= uint64_t{1} << (p & 63);
      lo = std::min(lo, p >> 6);
      hi = std::max(hi, p >> 6);
    }
    size_t out = first;
    for (uint32_t w = lo; w <= hi; ++w) {
      for (uint64_t b = due_bits_[w]; b != 0; b &= b - 1)
        due[out++] = w << 6 | static_cast<uint32_t>(std::countr_zero(b));
      due_bits_[w] = 0;
    }
  }

  void unlink(uint32_t pair) {
    const uint32_t s = slot_[pair];
    if (prev_[pair] != kNone)
      next_[prev_[pair]] = next_[pair];
    else
      head_[s] = next_[pair];
    if (next_[pair] != kNone) prev_[next_[pair]] = prev_[pair];
    --armed_;
  }

  static constexpr size_t kSortMax = 32;  // more due pairs than this: the bitmap pass

  Nanos gran_;
  uint64_t cursor_ = 0;  // tick of the last collect()
  uint32_t armed_ = 0;
  std::vector<Nanos> deadline_;
  std::vector<uint32_t> next_, prev_, slot_;
  std::vector<uint32_t> head_;
  std::vector<uint64_t> due_bits_;  // in_pair_order's bitmap; all zero between calls
};

}  // namespace ufab
