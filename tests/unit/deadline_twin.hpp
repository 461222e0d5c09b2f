// Shared by the tests that check VmPair::next_deadline against a pair polled
// at every tick (test_pair_deadline, test_probe_backoff): two copies of one
// pair driven alike, a polled at every token-period tick and b only by the
// edge's rule (pipeline/control_tick.cpp): when its deadline has come, when
// its queue starts while wakes_on_backlog(), and with the deadline
// recomputed after each poll and each message.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "control/vm_pair.hpp"

namespace ufab::test {

struct DeadlineTwin {
  VmPair& a;  // polled at every tick
  VmPair& b;  // polled at its deadlines
  Nanos due_b = 0;
  uint64_t polls_a = 0, polls_b = 0;
  uint64_t acked_a = 0, acked_b = 0;  // what advance_acks gave each owner

  // The queue went from empty to backlogged at t.
  void on_backlog(Nanos t) {
    if (b.wakes_on_backlog(t)) due_b = std::min(due_b, t);
  }
  // Both pairs' control messages due at t, in lockstep: each pair must have
  // the same one on the same path (type and seq compared here); check(ma, mb)
  // compares more fields and takes a's message.
  template <typename Check>
  void send_all(Nanos t, bool backlogged, uint64_t seed, Check&& check) {
    for (;;) {
      wire::Message ma, mb;
      int pa = -1, pb = -1;
      const bool sa = a.next_message(t, backlogged, ma, pa);
      const bool sb = b.next_message(t, backlogged, mb, pb);
      ASSERT_EQ(sa, sb) << "seed " << seed << " t " << t;
      if (!sa) return;
      ASSERT_EQ(pa, pb);
      ASSERT_EQ(ma.type, mb.type);
      ASSERT_EQ(ma.seq, mb.seq);
      check(ma, mb);
    }
  }
  // The tick at t: a is polled, b only if its deadline has come; then the
  // messages due (send_all) and b's next deadline.
  template <typename Check>
  void tick(Nanos t, bool backlogged, uint64_t seed, Check&& check) {
    a.poll(t, backlogged);
    acked_a += a.advance_acks(t);
    const bool poll_b = t >= due_b;
    ++polls_a;
    polls_b += poll_b;
    if (poll_b) {
      b.poll(t, backlogged);
      acked_b += b.advance_acks(t);
    }
    send_all(t, backlogged, seed, check);
    if (poll_b) due_b = b.next_deadline(t, backlogged);
  }
};

}  // namespace ufab::test
