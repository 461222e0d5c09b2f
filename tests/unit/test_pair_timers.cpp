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


// One slot's list, unlinked at its first, a middle and its last node (a
// disarm, a re-arm into another slot, a wake of an armed pair) and linked
// again: each pair is due once, at its own deadline, and the counts stay
// exact (a broken link loses a pair or hands one out twice).
TEST(PairTimers, ASlotsListSurvivesUnlinksAtEitherEndAndInTheMiddle) {
  PairTimers t(6, kG);
  for (uint32_t p = 0; p < 6; ++p) t.arm(p, 40 * kUs + p * kUs);  // all in tick 1 (32..63 us)
  EXPECT_EQ(t.armed_count(), 6u);
  t.arm(5, PairTimers::kUnarmed);  // the list's first (the newest): disarmed
  t.arm(0, 200 * kUs);             // its last: to tick 6
  t.arm(3, 70 * kUs);              // a middle one: to tick 2
  t.arm_min(2, 0);                 // a wake: moved to the slot collect() visits next
  EXPECT_EQ(t.armed_count(), 5u);
  EXPECT_EQ(collect(t, 10 * kUs), (std::vector<uint32_t>{2}));
  EXPECT_EQ(collect(t, 63 * kUs), (std::vector<uint32_t>{1, 4}));
  t.arm(1, 65 * kUs);  // re-armed after it was handed out, next to 3
  EXPECT_EQ(collect(t, 95 * kUs), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(collect(t, 199 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(collect(t, 200 * kUs), (std::vector<uint32_t>{0}));
  EXPECT_EQ(t.armed_count(), 0u);
  EXPECT_FALSE(t.armed(5));
  EXPECT_EQ(collect(t, 50 * kMs), (std::vector<uint32_t>{}));
}

// wake(): due at the next collect, as arm_min(pair, 0), whether the pair was
// armed (it leaves its slot: not handed out again at its old deadline) or
// not; twice is once; an arm() after it replaces it (as it replaced the
// deadline 0 arm_min set), and so does a collect that finds the pair due.
TEST(PairTimers, AWakeIsDueAtTheNextCollectOnce) {
  PairTimers t(5, kG);
  t.arm(1, 100 * kUs);
  t.arm(4, 10 * kUs);
  t.wake(1);
  t.wake(1);
  t.wake(3);  // not armed before
  t.wake(2);
  t.arm(2, 300 * kUs);  // replaces the wake
  t.wake(4);            // also due by its deadline at that collect
  EXPECT_EQ(t.armed_count(), 4u);
  EXPECT_EQ(t.deadline(1), 0u);
  EXPECT_EQ(t.deadline(2), 300 * kUs);
  t.arm_min(3, 50 * kUs);  // later than the wake: ignored
  EXPECT_EQ(t.deadline(3), 0u);
  EXPECT_EQ(collect(t, 20 * kUs), (std::vector<uint32_t>{1, 3, 4}));
  EXPECT_EQ(t.armed_count(), 1u);
  EXPECT_FALSE(t.armed(1));
  EXPECT_EQ(collect(t, 100 * kUs), (std::vector<uint32_t>{}));  // 1's old deadline is gone
  t.wake(0);
  EXPECT_EQ(collect(t, 101 * kUs), (std::vector<uint32_t>{0}));
  EXPECT_EQ(collect(t, 300 * kUs), (std::vector<uint32_t>{2}));
  EXPECT_EQ(t.armed_count(), 0u);
}

// A wake replaced by an arm and woken again is one wake: due once, at the
// next collect, out of the slot the arm put it in.
TEST(PairTimers, AWakeArmedOverAndWokenAgainIsDueOnce) {
  PairTimers t(3, kG);
  t.wake(2);
  t.arm(2, 500 * kUs);
  t.wake(2);
  t.wake(0);
  t.arm(0, PairTimers::kUnarmed);  // a wake disarmed
  EXPECT_EQ(t.armed_count(), 1u);
  EXPECT_EQ(collect(t, 1 * kUs), (std::vector<uint32_t>{2}));
  EXPECT_EQ(collect(t, 600 * kUs), (std::vector<uint32_t>{}));
  EXPECT_EQ(t.armed_count(), 0u);
}

// A woken pair that was armed leaves its old slot at the collect that hands
// it out; armed again, into that slot or another, it is due once, at the new
// deadline.
TEST(PairTimers, AWokenPairsOldSlotDoesNotHandItOutAgain) {
  PairTimers t(4, kG);
  t.arm(1, 100 * kUs);
  t.arm(2, 100 * kUs);
  t.arm(3, 101 * kUs);
  t.wake(1);
  t.wake(2);
  EXPECT_EQ(collect(t, 5 * kUs), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(t.armed_count(), 1u);
  t.arm(1, 99 * kUs);  // the slot its stale node is still in
  t.arm(2, 200 * kUs);
  EXPECT_EQ(t.armed_count(), 3u);
  EXPECT_EQ(collect(t, 101 * kUs), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(collect(t, 200 * kUs), (std::vector<uint32_t>{2}));
  EXPECT_EQ(t.armed_count(), 0u);
  EXPECT_EQ(collect(t, 100 * kMs), (std::vector<uint32_t>{}));
}
