// FinishTracker: finish probes retried until every hop acks (§3.6,
// design-notes §4.3), with exponential backoff and give-up. Scripted timelines
// with exact values.
#include "probe/finish_tracker.hpp"

#include <gtest/gtest.h>

#include "control/params.hpp"

namespace ufab {
namespace {

constexpr Nanos kRtt = 10 * kUs;  // timeout 8 x 10 us = 80 us

TEST(FinishTracker, AllHopsAckOnFirstTry) {
  FinishTracker f(8, 3);
  EXPECT_EQ(f.state(), FinishState::idle);
  EXPECT_FALSE(f.send_due(0));

  f.start(1 * kMs, kRtt, 5);
  EXPECT_EQ(f.state(), FinishState::pending);
  EXPECT_EQ(f.full_mask(), 0x1Fu);
  EXPECT_TRUE(f.send_due(1 * kMs));
  const uint32_t s = f.on_sent(1 * kMs);
  EXPECT_EQ(s, 0u);
  EXPECT_EQ(f.attempt(), 1u);
  EXPECT_EQ(f.retry_at(), 1 * kMs + 80 * kUs);
  EXPECT_FALSE(f.send_due(1 * kMs + 20 * kUs));

  EXPECT_TRUE(f.on_ack(s, 0x1F));
  EXPECT_EQ(f.state(), FinishState::done);
  EXPECT_FALSE(f.send_due(1 * kMs + 80 * kUs));
  EXPECT_FALSE(f.check_give_up(10 * kMs));
  EXPECT_EQ(f.sends(), 1u);
  EXPECT_EQ(f.retries(), 0u);
  EXPECT_EQ(f.acks(), 1u);
  EXPECT_EQ(f.gave_up(), 0u);
}

TEST(FinishTracker, PartialAckRetryThenCompleteByMaskUnion) {
  FinishTracker f(8, 3);
  f.start(0, kRtt, 4);
  const uint32_t s0 = f.on_sent(0);
  // Hops 0 and 2 acked; hops 1 and 3 lost the finish (or its ack).
  EXPECT_FALSE(f.on_ack(s0, 0b0101));
  EXPECT_EQ(f.acked_mask(), 0b0101u);
  EXPECT_EQ(f.state(), FinishState::pending);
  // Retry timer: 80 us, not a nanosecond earlier.
  EXPECT_FALSE(f.send_due(80 * kUs - 1));
  EXPECT_TRUE(f.send_due(80 * kUs));
  const uint32_t s1 = f.on_sent(80 * kUs);
  EXPECT_EQ(s1, 1u);
  EXPECT_EQ(f.attempt(), 2u);
  EXPECT_EQ(f.retry_at(), 80 * kUs + 160 * kUs);  // backoff x2
  // The retry reaches hop 1 only; hop 0 acked before and is reported unacked
  // now (bits outside n_hop are dropped): the union keeps it.
  EXPECT_FALSE(f.on_ack(s1, 0b1'0000'0010));
  EXPECT_EQ(f.acked_mask(), 0b0111u);
  // A late ack of the first send (hop 3) completes the finish: any send of this
  // finish counts.
  EXPECT_TRUE(f.on_ack(s0, 0b1000));
  EXPECT_EQ(f.state(), FinishState::done);
  EXPECT_EQ(f.acked_mask(), 0b1111u);
  // Duplicate ack after done: still complete, nothing changes.
  EXPECT_TRUE(f.on_ack(s1, 0));
  EXPECT_FALSE(f.send_due(240 * kUs));
  EXPECT_EQ(f.sends(), 2u);
  EXPECT_EQ(f.retries(), 1u);
  EXPECT_EQ(f.acks(), 4u);
  EXPECT_EQ(f.ignored_acks(), 0u);
}

TEST(FinishTracker, GiveUpAfterMaxRetriesWithExactBackoff) {
  FinishTracker f(8, 3);  // 1 send + 3 retries
  f.start(0, kRtt, 3);
  // Sends at 0, 80, 240, 560 us (timeouts 80, 160, 320, 640 us); give up at 1200 us.
  const Nanos send_at[] = {0, 80 * kUs, 240 * kUs, 560 * kUs};
  for (uint32_t i = 0; i < 4; ++i) {
    if (i > 0) {
      EXPECT_FALSE(f.send_due(send_at[i] - 1)) << i;
    }
    EXPECT_TRUE(f.send_due(send_at[i])) << i;
    EXPECT_FALSE(f.check_give_up(send_at[i])) << i;
    EXPECT_EQ(f.on_sent(send_at[i]), i);
    EXPECT_FALSE(f.on_ack(i, 0b001));  // hop 0 keeps acking, hops 1-2 never do
  }
  EXPECT_EQ(f.retry_at(), 1200 * kUs);
  EXPECT_FALSE(f.send_due(1200 * kUs));  // no retries left
  EXPECT_FALSE(f.check_give_up(1200 * kUs - 1));
  EXPECT_EQ(f.state(), FinishState::pending);
  EXPECT_TRUE(f.check_give_up(1200 * kUs));
  EXPECT_EQ(f.state(), FinishState::gave_up);
  EXPECT_FALSE(f.check_give_up(2000 * kUs));  // once
  EXPECT_FALSE(f.send_due(2000 * kUs));
  // A late ack after giving up is ignored.
  EXPECT_FALSE(f.on_ack(3, 0b111));
  EXPECT_EQ(f.state(), FinishState::gave_up);
  EXPECT_EQ(f.sends(), 4u);
  EXPECT_EQ(f.retries(), 3u);
  EXPECT_EQ(f.acks(), 4u);
  EXPECT_EQ(f.ignored_acks(), 1u);
  EXPECT_EQ(f.gave_up(), 1u);
}

TEST(FinishTracker, AbandonedWhilePendingSendsNoMore) {
  FinishTracker f(8, 3);
  EXPECT_FALSE(f.abandon());  // idle: nothing to abandon
  f.start(0, kRtt, 3);
  EXPECT_EQ(f.on_sent(0), 0u);
  EXPECT_FALSE(f.on_ack(0, 0b001));
  // The path's uplink is gone: given up at 10 us, long before the retry at 80 us.
  EXPECT_TRUE(f.abandon());
  EXPECT_EQ(f.state(), FinishState::gave_up);
  EXPECT_FALSE(f.abandon());  // once
  EXPECT_FALSE(f.send_due(80 * kUs));
  EXPECT_FALSE(f.check_give_up(10 * kMs));  // abandoned, not given up after its retries
  EXPECT_FALSE(f.on_ack(0, 0b111));         // a late ack is ignored, as after a give-up
  EXPECT_EQ(f.abandoned(), 1u);
  EXPECT_EQ(f.gave_up(), 0u);
  EXPECT_EQ(f.sends(), 1u);
  EXPECT_EQ(f.ignored_acks(), 1u);
  // A finish done is not abandoned, and a new one starts as usual.
  f.start(1 * kMs, kRtt, 1);
  EXPECT_TRUE(f.on_ack(f.on_sent(1 * kMs), 0b1));
  EXPECT_FALSE(f.abandon());
  EXPECT_EQ(f.state(), FinishState::done);
  EXPECT_EQ(f.abandoned(), 1u);
}

TEST(FinishTracker, BackoffCappedAt16xWithDefaultParams) {
  const EdgeParams ep;
  ASSERT_EQ(ep.probe_timeout_rtts, 8u);
  ASSERT_EQ(ep.finish_max_retries, 8u);
  FinishTracker f(ep.probe_timeout_rtts, ep.finish_max_retries);
  f.start(0, kRtt, 5);
  // Timeouts 80, 160, 320, 640, 1280, then capped at 1280 us.
  const Nanos send_at[] = {0, 80, 240, 560, 1200, 2480, 3760, 5040, 6320};
  Nanos t = 0;
  for (Nanos at_us : send_at) {
    t = at_us * kUs;
    ASSERT_TRUE(f.send_due(t)) << at_us;
    f.on_sent(t);
  }
  EXPECT_EQ(f.attempt(), 9u);
  EXPECT_EQ(f.retry_at(), 7600 * kUs);  // 80 us x (1+2+4+8+16x5) = 7.6 ms
  EXPECT_FALSE(f.send_due(7600 * kUs));
  EXPECT_FALSE(f.check_give_up(7600 * kUs - 1));
  EXPECT_TRUE(f.check_give_up(7600 * kUs));
  EXPECT_EQ(f.retries(), 8u);
}

TEST(FinishTracker, IdleStartDoneRestartIgnoresOldAcks) {
  FinishTracker f(8, 3);
  // Acks while idle are ignored.
  EXPECT_FALSE(f.on_ack(0, 0xFFFF));
  EXPECT_EQ(f.ignored_acks(), 1u);

  f.start(0, kRtt, 2);
  const uint32_t s0 = f.on_sent(0);
  EXPECT_EQ(s0, 0u);
  EXPECT_TRUE(f.on_ack(s0, 0b11));
  EXPECT_EQ(f.state(), FinishState::done);

  // The pair came back and goes idle again (or migrates away): a new finish.
  f.start(50 * kMs, 20 * kUs, 3);
  EXPECT_EQ(f.state(), FinishState::pending);
  EXPECT_EQ(f.acked_mask(), 0u);
  EXPECT_EQ(f.attempt(), 0u);
  EXPECT_TRUE(f.send_due(50 * kMs));
  // An ack of the previous finish's send does not count.
  EXPECT_FALSE(f.on_ack(s0, 0b111));
  EXPECT_EQ(f.ignored_acks(), 2u);
  EXPECT_EQ(f.acked_mask(), 0u);
  // Not-yet-sent seq: ignored too.
  const uint32_t s1 = f.on_sent(50 * kMs);
  EXPECT_EQ(s1, 1u);
  EXPECT_EQ(f.retry_at(), 50 * kMs + 160 * kUs);  // 8 x 20 us
  EXPECT_FALSE(f.on_ack(2, 0b111));
  EXPECT_EQ(f.ignored_acks(), 3u);
  EXPECT_TRUE(f.on_ack(s1, 0b111));
  EXPECT_EQ(f.state(), FinishState::done);
  EXPECT_EQ(f.sends(), 2u);
  EXPECT_EQ(f.retries(), 0u);
  EXPECT_EQ(f.acks(), 2u);
}

TEST(FinishTracker, RestartWhilePendingAndSeqWrap) {
  FinishTracker f(8, 3, 0xFFFF'FFFFu);
  f.start(0, kRtt, 2);
  EXPECT_EQ(f.on_sent(0), 0xFFFF'FFFFu);
  // Restarted before any ack (the pair left this path mid-finish).
  f.start(10 * kUs, kRtt, 2);
  EXPECT_TRUE(f.send_due(10 * kUs));
  const uint32_t a = f.on_sent(10 * kUs);
  EXPECT_EQ(a, 0u);  // wrapped
  EXPECT_FALSE(f.on_ack(0xFFFF'FFFFu, 0b11));  // previous finish: ignored
  EXPECT_EQ(f.ignored_acks(), 1u);
  EXPECT_FALSE(f.on_ack(a, 0b10));
  ASSERT_TRUE(f.send_due(90 * kUs));
  const uint32_t b = f.on_sent(90 * kUs);
  EXPECT_EQ(b, 1u);
  EXPECT_TRUE(f.on_ack(b, 0b01));
  EXPECT_EQ(f.state(), FinishState::done);
}

TEST(FinishTracker, ZeroHopsIsDoneAtOnce) {
  FinishTracker f(8, 3);
  f.start(0, kRtt, 0);
  EXPECT_EQ(f.state(), FinishState::done);
  EXPECT_FALSE(f.send_due(0));
}

}  // namespace
}  // namespace ufab
