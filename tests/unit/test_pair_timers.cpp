// PairTimers (control/pair_timers.hpp): the due set at hand-computed times.
// Granularity 32 us (the token period), 1024 slots: one lap = 32.768 ms.
#include <gtest/gtest.h>

#include <algorithm>
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

// Many pairs due at once are handed out in pair order too (the bitmap pass
// above 32 due pairs), after what `due` already held, each once; the bitmap
// is clean for the next collect (a few due: the sort).
TEST(PairTimers, ManyDuePairsComeInPairOrderAfterWhatDueHeld) {
  PairTimers t(1000, kG);
  std::vector<uint32_t> expect;
  for (uint32_t k = 0; k < 200; ++k) {
    const uint32_t p = (k * 389 + 17) % 1000;  // 389 is coprime to 1000: 200 distinct pairs, scrambled
    t.arm(p, (k % 3) * kUs);
    expect.push_back(p);
  }
  std::sort(expect.begin(), expect.end());
  expect.insert(expect.begin(), {999, 5});  // what the caller's list held before
  std::vector<uint32_t> due{999, 5};
  t.collect(10 * kUs, due);
  EXPECT_EQ(due, expect);
  EXPECT_EQ(t.armed_count(), 0u);
  t.arm(64, 20 * kUs);
  t.arm(3, 20 * kUs);
  EXPECT_EQ(collect(t, 20 * kUs), (std::vector<uint32_t>{3, 64}));
  for (uint32_t p = 0; p < 1000; p += 7) t.arm(p, 30 * kUs);
  const std::vector<uint32_t> got = collect(t, 30 * kUs);
  ASSERT_EQ(got.size(), 143u);  // 0, 7, ..., 994
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], 7 * i);
}

