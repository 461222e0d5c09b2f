// The owner's timers over its VM-pairs (issue 4: per-period control work in
// proportion to the pairs with something due, not to all pairs). Each pair
// has at most one armed deadline (VmPair::next_deadline); collect(now) hands
// out the pairs whose deadline has come, in pair order, and disarms them.
//
// A hashed timer wheel: kSlots slots of `granularity` ns each (the token
// period), a pair lives in the slot of its deadline's tick, linked into the
// slot's intrusive circular doubly linked list (indices, no allocation after
// construction). Arming and disarming are O(1); collect() visits the slots
// of the ticks since the last collect (at most kSlots) and, in each, every
// pair whose deadline falls in that slot's tick modulo the wheel: a deadline
// more than one lap ahead stays in its slot and is looked at once per lap.
// The due pairs are put in pair order by a sort when they are few and by a
// pass over a bitmap of the pairs (one bit per pair) when they are many:
// thousands due at once (8K pairs ticking every base RTT) made the sort
// ~5% of a worker's time.
// A pair's deadline and links are one 16-byte node (four to a cache line),
// and each slot's list head is a sentinel node after the pairs' (index
// n_pairs + slot), so unlinking needs no slot number: arming a cold pair
// touches its node, the sentinel and the node it is linked before. With the
// deadline, both links and the slot in four arrays, re-arming the pairs a
// poll_pairs call had polled stalled on each array in turn (perf, bench
// edge at 8K pairs: 28% of rearm's samples on the deadline's load alone).
// A wake (due at the next collect, as arm_min(pair, 0) but for the data
// path: a frame for a parked pair) only sets the pair's byte in a flag array
// and lists it; relinking on the frame's path stalled it on the pair's cold
// node and on its neighbours' (perf, bench edge per worker core at 8K pairs:
// ~18% of vm_frames' samples). collect() takes the listed pairs out of the
// wheel, their nodes prefetched a few pairs ahead.
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
  static constexpr Nanos kUnarmed = ~Nanos{0};

  PairTimers(uint32_t n_pairs, Nanos granularity)
      : gran_(granularity ? granularity : 1), n_(n_pairs), node_(size_t{n_pairs} + kSlots),
        woken_(n_pairs, kNotListed), due_bits_((n_pairs + 63) / 64, 0) {
    woken_list_.reserve(n_pairs);
    for (uint32_t s = 0; s < kSlots; ++s) node_[n_ + s].next = node_[n_ + s].prev = n_ + s;  // empty lists
  }

  uint32_t size() const { return n_; }
  Nanos deadline(uint32_t pair) const { return woken_[pair] == kWoken ? 0 : node_[pair].deadline; }
  bool armed(uint32_t pair) const { return deadline(pair) != kUnarmed; }
  // Pairs armed or woken (a scan of the wake flags: for tests and inspection).
  uint32_t armed_count() const {
    uint32_t n = linked_;
    for (uint32_t p = 0; p < n_; ++p) n += woken_[p] == kWoken && node_[p].deadline == kUnarmed;
    return n;
  }
  // The pair's node, ahead of an arm() or deadline() (poll_pairs' software
  // pipeline). Always inlined: GCC 12 drops a call whose only effect is a
  // prefetch (sched/hier_scheduler.hpp).
  [[gnu::always_inline]] void prefetch(uint32_t pair) const { __builtin_prefetch(&node_[pair]); }

  // Arms pair at t (replacing its deadline, or a wake); t = kUnarmed disarms it.
  void arm(uint32_t pair, Nanos t) {
    Node& n = node_[pair];
    if (woken_[pair] == kWoken) woken_[pair] = kListed;  // a wake is replaced too
    if (n.deadline != kUnarmed) unlink(pair);
    n.deadline = t;
    if (t == kUnarmed) return;
    // A deadline already behind the wheel goes into the slot collect() visits next.
    const uint32_t head = n_ + static_cast<uint32_t>((std::max(t, Nanos{cursor_} * gran_) / gran_) % kSlots);
    Node& h = node_[head];
    n.prev = head;
    n.next = h.next;
    node_[h.next].prev = pair;
    h.next = pair;
    ++linked_;
  }
  // Arms pair at t unless it is already armed earlier.
  void arm_min(uint32_t pair, Nanos t) {
    if (t < deadline(pair)) arm(pair, t);
  }
  // arm_min(pair, 0) without touching the wheel or the pair's node: the
  // pair is due at the next collect().
  void wake(uint32_t pair) {
    const uint8_t w = woken_[pair];
    if (w == kWoken) return;
    if (w == kNotListed) woken_list_.push_back(pair);  // at most once per pair: no growth past n_pairs
    woken_[pair] = kWoken;
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
      const uint32_t head = n_ + static_cast<uint32_t>(k % kSlots);
      for (uint32_t p = node_[head].next; p != head;) {
        Node& n = node_[p];
        const uint32_t nx = n.next;
        if (n.deadline <= now) {
          unlink(p);
          n.deadline = kUnarmed;
          if (woken_[p] == kWoken) woken_[p] = kListed;  // due now, once
          due.push_back(p);
        }
        p = nx;
      }
    }
    // The woken pairs (not re-armed since, nor due above); their nodes a
    // few pairs ahead (thousands at once at 8K pairs, each cold).
    constexpr size_t kAhead = 8;
    const size_t nw = woken_list_.size();
    for (size_t i = 0; i < nw && i < kAhead; ++i) prefetch(woken_list_[i]);
    for (size_t i = 0; i < nw; ++i) {
      if (i + kAhead < nw) prefetch(woken_list_[i + kAhead]);
      const uint32_t p = woken_list_[i];
      const bool woken = woken_[p] == kWoken;
      woken_[p] = kNotListed;
      if (!woken) continue;
      Node& n = node_[p];
      if (n.deadline != kUnarmed) {
        unlink(p);
        n.deadline = kUnarmed;
      }
      due.push_back(p);
    }
    woken_list_.clear();
    if (tick > cursor_) cursor_ = tick;
    in_pair_order(due, first);
  }

 private:
  // A pair's deadline and its links in its slot's list; a slot's sentinel
  // uses only the links (deadline unused).
  struct Node {
    Nanos deadline = kUnarmed;
    uint32_t next = 0, prev = 0;
  };
  static_assert(sizeof(Node) == 16);
  // woken_[pair]: not in woken_list_; in it and woken; in it, but the wake
  // was replaced by an arm() or the pair came due in the wheel.
  static constexpr uint8_t kNotListed = 0, kWoken = 1, kListed = 2;

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

  // Out of its slot's list (the pair must be in it); its deadline stays.
  void unlink(uint32_t pair) {
    const Node& n = node_[pair];
    node_[n.prev].next = n.next;
    node_[n.next].prev = n.prev;
    --linked_;
  }

  static constexpr size_t kSortMax = 32;  // more due pairs than this: the bitmap pass

  Nanos gran_;
  uint32_t n_;           // pairs; node_[n_ + s] is slot s's sentinel
  uint64_t cursor_ = 0;  // tick of the last collect()
  uint32_t linked_ = 0;  // pairs in the wheel's lists
  std::vector<Node> node_;
  std::vector<uint8_t> woken_;        // kNotListed, kWoken or kListed, per pair
  std::vector<uint32_t> woken_list_;  // the pairs woken since the last collect, each once
  std::vector<uint64_t> due_bits_;  // in_pair_order's bitmap; all zero between calls
};

}  // namespace ufab
