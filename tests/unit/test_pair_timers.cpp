// PairTimers (control/pair_timers.hpp): the due set at hand-computed times.
// Granularity 32 us (the token period), 1024 slots: one lap = 32.768 ms.
#include <gtest/gtest.h>

#include <vector>

#include "control/pair_timers.hpp"

using namespace ufab;

namespace {
constexpr Nanos kG = 32 * kUs;

std::vector<uint32_t> collect(PairTimers& t, Nanos now) {
  std::vector<uint32_t> due;
  t.collect(now, due);
  return due;
}
}  // namespace

TEST(PairTimers, CollectsExactlyThePairsDueInPairOrder) {
  PairTimers t(8, kG);
  t.arm(5, 10 * kUs);
  t.arm(2, 40 * kUs);   // next tick's slot
  t.arm(7, 31 * kUs);
  t.arm(0, 100 * kUs);
  EXPECT_EQ(t.armed_count(), 4u);
  EXPECT_EQ(collect(t, 9 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, 31 * kUs), (std::vector<uint32_t>{5, 7}));  // sorted, not arming order
  EXPECT_FALSE(t.armed(5));
  EXPECT_EQ(collect(t, 39 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, 40 * kUs), (std::vector<uint32_t>{2}));
  EXPECT_EQ(collect(t, 99 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, 100 * kUs), (std::vector<uint32_t>{0}));
  EXPECT_EQ(t.armed_count(), 0u);
}

TEST(PairTimers, LaterDeadlinesInTheCurrentTickStayForTheNextCollect) {
  PairTimers t(4, kG);
  t.arm(1, 33 * kUs);
  t.arm(3, 60 * kUs);  // same tick (32..63 us)
  EXPECT_EQ(collect(t, 40 * kUs), (std::vector<uint32_t>{1}));
  EXPECT_EQ(collect(t, 59 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, 61 * kUs), (std::vector<uint32_t>{3}));
}

TEST(PairTimers, RearmMovesAndArmMinOnlyAdvances) {
  PairTimers t(4, kG);
  t.arm(1, 500 * kUs);
  t.arm(1, 50 * kUs);  // replaces
  EXPECT_EQ(t.deadline(1), 50 * kUs);
  t.arm_min(1, 80 * kUs);  // later: ignored
  EXPECT_EQ(t.deadline(1), 50 * kUs);
  t.arm_min(1, 0);  // wake: due at the next collect
  EXPECT_EQ(t.armed_count(), 1u);
  EXPECT_EQ(collect(t, 1), (std::vector<uint32_t>{1}));
  t.arm(2, 70 * kUs);
  t.arm(2, PairTimers::kUnarmed);  // disarm
  EXPECT_EQ(collect(t, 1000 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(t.armed_count(), 0u);
}

TEST(PairTimers, DeadlinesBeyondOneLapWaitTheirLap) {
  PairTimers t(4, kG);
  const Nanos lap = PairTimers::kSlots * kG;  // 32.768 ms
  t.arm(0, 10 * kMs);            // within the lap
  t.arm(1, 10 * kUs + lap);      // same slot as 10 us, one lap later
  t.arm(2, 10 * kUs + 3 * lap);  // three laps later
  EXPECT_EQ(collect(t, 10 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, 10 * kMs), (std::vector<uint32_t>{0}));
  EXPECT_EQ(collect(t, lap), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, lap + 10 * kUs), (std::vector<uint32_t>{1}));
  // A long gap (more than a lap since the last collect) still finds it.
  EXPECT_EQ(collect(t, 10 * kUs + 3 * lap - 1), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, 5 * lap), (std::vector<uint32_t>{2}));
}

TEST(PairTimers, ADeadlineBehindTheWheelIsDueAtTheNextCollect) {
  PairTimers t(4, kG);
  EXPECT_EQ(collect(t, 10 * kMs), (std::vector<uint32_t>{}));
  t.arm(3, 5 * kMs);  // already past
  t.arm(2, 10 * kMs + 1);
  EXPECT_EQ(collect(t, 10 * kMs + 1), (std::vector<uint32_t>{2, 3}));
}
