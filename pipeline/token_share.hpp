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
// list), writes a share only when its value changed and then bumps its VM's
// generation (EdgeState::vm_inputs_gen), and applies phi_S only to the
// pairs the control lcore names in AssignedQueue; the control lcore runs
// Alg. 1 only for VMs whose generation moved: the per-period work on both
// sides follows the pairs that change.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include <rte_ring.h>
#include <rte_ring_elem.h>

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

// Pairs whose phi_S the control lcore changed, for their worker: an rte_ring
// of 4-byte pair indices, single producer (control lcore) and single
// consumer (the worker), with one slot per pair of the worker. A pair is in
// the ring at most once (PairShare::assigned_queued), so it never fills.
// Needs the EAL; throws std::runtime_error if the ring cannot be created.
class AssignedQueue {
 public:
  explicit AssignedQueue(uint32_t n_pairs);
  ~AssignedQueue();
  AssignedQueue(const AssignedQueue&) = delete;
  AssignedQueue& operator=(const AssignedQueue&) = delete;

  // Control lcore, after storing share.assigned.
  void changed(PairShare& sh, uint32_t pair) {
    // Still queued: the worker reads the newest value. Both sides swap the
    // flag (acq_rel): when the worker's swap reads this one's true, it sees
    // the assigned value stored before it; else this swap reads its false
    // and queues the pair again.
    if (sh.assigned_queued.exchange(true, std::memory_order_acq_rel)) return;
    // Cannot fail: at most one entry per pair, one slot per pair.
    (void)rte_ring_sp_enqueue_elem(ring_, &pair, sizeof pair);
  }
  // Worker: every named pair once, f(pair) after its flag is cleared (so a
  // later change is queued again and not lost).
  template <class F>
  void drain(PairShare* share, F&& f) {
    // What is queued now; pairs queued again meanwhile wait for the next tick.
    unsigned left = rte_ring_count(ring_);
    uint32_t batch[64];
    while (left != 0) {
      const unsigned n = rte_ring_sc_dequeue_burst_elem(ring_, batch, sizeof batch[0], left < 64 ? left : 64, nullptr);
      if (n == 0) break;
      left -= n;
      for (unsigned i = 0; i < n; ++i) {
        share[batch[i]].assigned_queued.exchange(false, std::memory_order_acq_rel);
        f(batch[i]);
      }
    }
  }

 private:
  rte_ring* ring_ = nullptr;
};

// IncomingShare::admitted before the first admission round that included
// the pair (the worker then answers provisional_admission).
inline constexpr double kTokenNotYetAdmitted = -1.0;

struct IncomingShare {
  std::atomic<double> requested{0};  // 0 after finish
  std::atomic<double> admitted{kTokenNotYetAdmitted};
  // The local VM it sends to (Incoming::local_vm), as the control lcore
  // reads it: a slot a finished pair left may be taken by another pair
  // (fabric_rx.cpp, incoming_of), whose VM the worker then writes here.
  std::atomic<uint32_t> local_vm{0};
};

}  // namespace ufab::pipeline
