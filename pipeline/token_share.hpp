// What a worker and the control lcore exchange for Algorithm 1 (App. E)
// without locks: per field one writer, relaxed atomics (each value stands on
// its own; a round that reads one a period old is what the paper's 32 us
// token period already allows).
//  - per sender pair, written by its worker at the end of each tick: whether
//    it is active (queued or in-flight bytes), its delivered rate, and phi_D
//    from the receiver's last response; written by the control lcore: phi_S.
//  - per receiver-side pair, written by the worker when a probe arrives: the
//    phi_S it requests; written by the control lcore: phi_D it is admitted.
// The worker publishes only pairs whose inputs may have changed (its dirty
// list) and applies phi_S only to the pairs the control lcore names in
// AssignedQueue: the per-period work follows the pairs that change.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "control/token_assignment.hpp"

namespace ufab::pipeline {

struct PairShare {
  std::atomic<bool> active{false};
  std::atomic<double> rate_Bps{0};
  std::atomic<double> admitted{kTokenUnbound};
  std::atomic<double> assigned{1.0};  // VmPair's initial phi_S
  // Set by the control lcore when it names the pair in AssignedQueue;
  // cleared by the worker before it reads `assigned`. A pair is in the queue
  // at most once, so a queue of one slot per pair never fills.
  std::atomic<bool> assigned_queued{false};
};

// Pairs whose phi_S the control lcore changed, for their worker: single
// producer (control lcore), single consumer (the worker), lock-free; one
// slot per pair of the worker.
class AssignedQueue {
 public:
  explicit AssignedQueue(uint32_t n_pairs) : cap_(n_pairs + 1), slot_(std::make_unique<uint32_t[]>(cap_)) {}

  // Control lcore, after storing share.assigned.
  void changed(PairShare& sh, uint32_t pair) {
    // Still queued: the worker reads the newest value. Both sides swap the
    // flag (acq_rel): when the worker's swap reads this one's true, it sees
    // the assigned value stored before it; else this swap reads its false
    // and queues the pair again.
    if (sh.assigned_queued.exchange(true, std::memory_order_acq_rel)) return;
    const uint32_t t = tail_.load(std::memory_order_relaxed);
    slot_[t] = pair;
    tail_.store(t + 1 == cap_ ? 0 : t + 1, std::memory_order_release);
  }
  // Worker: every named pair once, f(pair) after its flag is cleared (so a
  // later change is queued again and not lost).
  template <class F>
  void drain(PairShare* share, F&& f) {
    uint32_t h = head_.load(std::memory_order_relaxed);
    const uint32_t t = tail_.load(std::memory_order_acquire);
    while (h != t) {
      const uint32_t p = slot_[h];
      h = h + 1 == cap_ ? 0 : h + 1;
      share[p].assigned_queued.exchange(false, std::memory_order_acq_rel);
      f(p);
    }
    head_.store(h, std::memory_order_release);
  }

 private:
  uint32_t cap_;
  std::unique_ptr<uint32_t[]> slot_;
  alignas(64) std::atomic<uint32_t> head_{0};
  alignas(64) std::atomic<uint32_t> tail_{0};
};

// IncomingShare::admitted before the first admission round that included
// the pair (the worker then answers provisional_admission).
inline constexpr double kTokenNotYetAdmitted = -1.0;

struct IncomingShare {
  std::atomic<double> requested{0};  // 0 after finish
  std::atomic<double> admitted{kTokenNotYetAdmitted};
};

}  // namespace ufab::pipeline
