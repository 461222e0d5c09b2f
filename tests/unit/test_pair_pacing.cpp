// Per-VM-pair pacing (sched/pair_pacing.hpp) and its place in the
// HierScheduler's level 2 next to the window gate. Times are hand-computed:
// a rate of 1e6 B/s is 1000 ns per byte, so a 100 B packet moves a pair's
// eligible time by 100 us; after a packet at now,
//     eligible_at = max(eligible_at, now - depth) + len * ns_per_byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "control/params.hpp"
#include "control/vm_pair.hpp"
#include "sched/hier_scheduler.hpp"
#include "sched/pair_pacing.hpp"

using namespace ufab;

namespace {

using Sched = HierScheduler<uint32_t>;
constexpr uint64_t kBigWindow = uint64_t{1} << 30;

HierSchedulerConfig config(uint64_t depth_ns = 0) {
  HierSchedulerConfig c;
  c.max_tenants = 4;
  c.max_pairs = 16;
  c.flows_per_pair = 1;
  c.queue_capacity = 64;
  c.pace_depth_ns = depth_ns;
  return c;
}

void fill(Sched& s, uint32_t pair, int n, uint32_t len = 100) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(s.enqueue(pair, 0, pair, len));
}

// The pairs of one timed burst of at most max packets at now.
std::vector<uint32_t> burst(Sched& s, uint64_t now, size_t max = 32) {
  std::vector<uint32_t> pkts(max), lens(max), ids(max);
  ids.resize(s.dequeue_burst(pkts.data(), lens.data(), ids.data(), max, now));
  return ids;
}

}  // namespace

TEST(PairPacing, NsPerByteIsFixedPointOfTheRate) {
  PairPacing p(4, 0);
  p.set_rate(0, 1e6);  // 1000 ns/B = 1000 * 2^24
  EXPECT_EQ(p.ns_per_byte_fp(0), 16777216000u);
  p.set_rate(1, 3e6);  // 333.33 ns/B: round(1e9 * 2^24 / 3e6)
  EXPECT_EQ(p.ns_per_byte_fp(1), 5592405333u);
  p.set_rate(2, 1187500);  // 9.5 Mb/s (the emulated fabric's C_l = eta * 10 Mb/s)
  EXPECT_EQ(p.ns_per_byte_fp(2), 14128181895u);
  EXPECT_FALSE(p.paced(3));
  p.set_rate(3, 0);
  EXPECT_FALSE(p.paced(3));
  p.set_rate(3, -5);
  EXPECT_FALSE(p.paced(3));
}

TEST(PairPacing, EligibleTimeAdvancesByLenTimesNsPerByte) {
  PairPacing p(4, 0);
  p.set_rate(0, 1e6);
  EXPECT_TRUE(p.charge(0, 100, 0));  // 0 + 100 * 1000
  EXPECT_EQ(p.eligible_at(0), 100000u);
  EXPECT_FALSE(p.waiting(0, 100000));
  EXPECT_TRUE(p.charge(0, 100, 100000));
  EXPECT_EQ(p.eligible_at(0), 200000u);
  // Served 50 us late with no depth: the lateness is lost, from now on.
  EXPECT_TRUE(p.charge(0, 100, 250000));
  EXPECT_EQ(p.eligible_at(0), 350000u);
  // 1500 B at 3e6 B/s: (1500 * 5592405333) >> 24 = 499999 ns (truncated, < 1 ns per packet).
  p.set_rate(1, 3e6);
  p.charge(1, 1500, 0);
  EXPECT_EQ(p.eligible_at(1), 499999u);
  // 1000 B at 9.5 Mb/s: 842105 ns.
  p.set_rate(2, 1187500);
  p.charge(2, 1000, 0);
  EXPECT_EQ(p.eligible_at(2), 842105u);
  // An unpaced pair never waits and keeps no time.
  EXPECT_FALSE(p.charge(3, 1500, 7));
  EXPECT_EQ(p.eligible_at(3), 0u);
}

TEST(PairPacing, DepthBoundsTheCatchUp) {
  PairPacing p(2, 150000);  // 150 us: 1.5 packets of 100 B at 1e6 B/s
  p.set_rate(0, 1e6);
  p.charge(0, 100, 0);
  EXPECT_EQ(p.eligible_at(0), 100000u);
  // Served 50 us late: within the depth, the schedule is kept (no loss).
  EXPECT_TRUE(p.charge(0, 100, 150000));
  EXPECT_EQ(p.eligible_at(0), 200000u);
  // Idle until 1 ms: credit starts at now - depth = 850 us, so the first
  // packet ends at 950 us (still eligible), the second at 1050 us (waits).
  EXPECT_FALSE(p.charge(0, 100, 1000000));
  EXPECT_EQ(p.eligible_at(0), 950000u);
  EXPECT_TRUE(p.charge(0, 100, 1000000));
  EXPECT_EQ(p.eligible_at(0), 1050000u);
}

TEST(PairPacing, HeapReleasesByTimeThenPairId) {
  PairPacing p(8, 0);
  for (uint32_t i = 0; i < 8; ++i) p.set_rate(i, 1e6);
  // Eligible times 300, 100, 200, 100 us for pairs 4, 7, 2, 3.
  p.charge(4, 300, 0);
  p.charge(7, 100, 0);
  p.charge(2, 200, 0);
  p.charge(3, 100, 0);
  for (uint32_t i : {4u, 7u, 2u, 3u}) p.park(i);
  EXPECT_EQ(p.parked(), 4u);
  EXPECT_EQ(p.next_release(), 100000u);
  uint32_t got = 0;
  EXPECT_FALSE(p.release(99999, got));
  std::vector<uint32_t> order;
  while (p.release(150000, got)) order.push_back(got);
  EXPECT_EQ(order, (std::vector<uint32_t>{3, 7}));
  EXPECT_EQ(p.next_release(), 200000u);
  while (p.release(1000000, got)) order.push_back(got);
  EXPECT_EQ(order, (std::vector<uint32_t>{3, 7, 2, 4}));
  EXPECT_EQ(p.parked(), 0u);
  EXPECT_EQ(p.next_release(), UINT64_MAX);
  EXPECT_FALSE(p.is_parked(4));
}

// unpark takes a pair out of the heap wherever it sits; the others leave
// in (time, id) order as before.
TEST(PairPacing, UnparkKeepsTheHeapOrder) {
  PairPacing p(16, 0);
  for (uint32_t i = 0; i < 16; ++i) p.set_rate(i, 1e6);
  // Pair i is due at (16 - i) * 10 us: the heap holds them in reverse.
  for (uint32_t i = 0; i < 16; ++i) {
    p.charge(i, (16 - i) * 10, 0);
    p.park(i);
  }
  for (const uint32_t gone : {15u, 0u, 7u, 9u}) p.unpark(gone);  // the root, the last, two inside
  p.unpark(7);  // not parked any more: nothing
  EXPECT_EQ(p.parked(), 12u);
  EXPECT_FALSE(p.is_parked(7));
  std::vector<uint32_t> order;
  for (uint32_t got = 0; p.release(UINT64_MAX - 1, got);) order.push_back(got);
  EXPECT_EQ(order, (std::vector<uint32_t>{14, 13, 12, 11, 10, 8, 6, 5, 4, 3, 2, 1}));
}

// A paced pair waiting in the heap is flushed out of it: it is not released later.
TEST(SchedulerPacing, FlushedPairLeavesThePaceHeap) {
  Sched s(config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(1, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(2, 0, kBigWindow));
  ASSERT_TRUE(s.set_pair_rate(1, 1e6));
  fill(s, 1, 3);
  fill(s, 2, 1);
  EXPECT_EQ(burst(s, 0), (std::vector<uint32_t>{1, 2}));
  ASSERT_EQ(s.pair_state(1), PairState::kPaced);
  EXPECT_EQ(s.flush_pair(1, [](uint32_t&&, uint32_t) {}), 2u);
  EXPECT_EQ(s.next_pace_release(), UINT64_MAX);
  EXPECT_TRUE(burst(s, 1000000).empty());
  EXPECT_EQ(s.counters().enqueued, s.counters().dequeued + s.counters().flushed);
}

TEST(SchedulerPacing, WaitingPairLeavesTheRoundOthersKeepSending) {
  // Pairs 1 (paced, 100 us per packet) and 2 (unpaced) of one tenant, 5
  // packets each. At t = 0 round robin serves 1, then 1 must wait until
  // 100 us: 2 sends its 5 packets alone (work conservation).
  Sched s(config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(1, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(2, 0, kBigWindow));
  ASSERT_TRUE(s.set_pair_rate(1, 1e6));
  fill(s, 1, 5);
  fill(s, 2, 5);
  EXPECT_EQ(burst(s, 0), (std::vector<uint32_t>{1, 2, 2, 2, 2, 2}));
  EXPECT_EQ(s.pair_state(1), PairState::kPaced);
  EXPECT_EQ(s.pair_eligible_at(1), 100000u);
  EXPECT_EQ(s.next_pace_release(), 100000u);
  EXPECT_TRUE(burst(s, 99999).empty());
  // One packet per 100 us from then on, however often it is polled.
  EXPECT_EQ(burst(s, 100000), (std::vector<uint32_t>{1}));
  EXPECT_TRUE(burst(s, 150000).empty());
  EXPECT_EQ(burst(s, 200000), (std::vector<uint32_t>{1}));
  // Polled 250 us late, with depth 0: one packet, next 100 us after it.
  EXPECT_EQ(burst(s, 550000), (std::vector<uint32_t>{1}));
  EXPECT_EQ(s.pair_eligible_at(1), 650000u);
  EXPECT_EQ(burst(s, 650000), (std::vector<uint32_t>{1}));
  EXPECT_EQ(s.pair_state(1), PairState::kIdle);
  EXPECT_EQ(s.counters().dequeued, 10u);
}

TEST(SchedulerPacing, ReleasedPairsJoinTheEndOfTheRoundInTimeOrder) {
  // Pairs 3 and 5 are paced at 1e6 B/s, pair 4 is not. Pair 5 gets a
  // 200 B packet first, so it is due at 200 us, pair 3 at 100 us.
  Sched s(config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  for (uint32_t p : {3u, 4u, 5u}) ASSERT_TRUE(s.add_pair(p, 0, kBigWindow));
  ASSERT_TRUE(s.set_pair_rate(3, 1e6));
  ASSERT_TRUE(s.set_pair_rate(5, 1e6));
  fill(s, 3, 3);
  fill(s, 4, 6);
  ASSERT_TRUE(s.enqueue(5, 0, 5, 200));
  fill(s, 5, 2);
  // t = 0: ring 3, 4, 5 -> 3 (waits), 4, 5 (waits), then 4 alone; stop at 4 packets.
  EXPECT_EQ(burst(s, 0, 4), (std::vector<uint32_t>{3, 4, 5, 4}));
  // t = 200 us: both are due; 3 (100 us) is released before 5 (200 us), and
  // both join after 4, which is the cursor: 4, 3, 5, then 4 alone.
  EXPECT_EQ(burst(s, 200000, 5), (std::vector<uint32_t>{4, 3, 5, 4, 4}));
  EXPECT_EQ(s.pair_eligible_at(3), 300000u);  // max(100, 200 - 0) + 100 us
  EXPECT_EQ(s.pair_eligible_at(5), 300000u);  // max(200, 200) + 100 us
  // Equal times: the lower pair id first.
  EXPECT_EQ(burst(s, 300000), (std::vector<uint32_t>{4, 3, 5}));
  // Every packet sent (3: 3, 4: 6, 5: 3): all idle, nothing parked.
  EXPECT_EQ(s.counters().dequeued, s.counters().enqueued);
  for (uint32_t p : {3u, 4u, 5u}) EXPECT_EQ(s.pair_state(p), PairState::kIdle);
  EXPECT_EQ(s.next_pace_release(), UINT64_MAX);
}

TEST(SchedulerPacing, WindowAndPaceGateTogether) {
  // Window 200 B, 100 B packets, 100 us each: the window admits two packets,
  // the pace spaces them; a pair whose window fills waits for acks
  // (kBlocked), and one acked before its time waits for the time (kPaced).
  Sched s(config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(0, 0, 200));
  ASSERT_TRUE(s.set_pair_rate(0, 1e6));
  fill(s, 0, 6);
  EXPECT_EQ(burst(s, 0), (std::vector<uint32_t>{0}));
  EXPECT_EQ(s.pair_state(0), PairState::kPaced);
  EXPECT_EQ(burst(s, 100000), (std::vector<uint32_t>{0}));
  EXPECT_EQ(s.inflight(0), 200u);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);  // window full (the pace would also wait)
  ASSERT_TRUE(s.on_acked(0, 200));                   // at the scheduler's clock, 100 us
  EXPECT_EQ(s.pair_state(0), PairState::kPaced);     // due at 200 us
  EXPECT_TRUE(burst(s, 150000).empty());
  EXPECT_EQ(burst(s, 200000), (std::vector<uint32_t>{0}));
  // Released while its window is full: it goes to kBlocked, not the ring.
  EXPECT_EQ(burst(s, 300000), (std::vector<uint32_t>{0}));
  EXPECT_EQ(s.inflight(0), 200u);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  ASSERT_TRUE(s.set_window(0, 0));
  ASSERT_TRUE(s.on_acked(0, 200));
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);  // window 0 never sends
}

TEST(SchedulerPacing, RateZeroUnpacesAndDepthAllowsABurst) {
  Sched s(config(150000));
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.set_pair_rate(0, 1e6));
  fill(s, 0, 6);
  // At 1 ms after an idle start: 2 packets (credit from 850 us), then 100 us each.
  EXPECT_EQ(burst(s, 1000000).size(), 2u);
  EXPECT_EQ(s.pair_eligible_at(0), 1050000u);
  EXPECT_EQ(burst(s, 1050000).size(), 1u);
  // Unpaced from its next packet on: the one it waits for is still at 1150 us.
  ASSERT_TRUE(s.set_pair_rate(0, 0));
  EXPECT_TRUE(burst(s, 1100000).empty());
  EXPECT_EQ(burst(s, 1150000).size(), 3u);
  EXPECT_EQ(s.pair_state(0), PairState::kIdle);
}

TEST(SchedulerPacing, WholePacketWindowRoundsUp) {
  // Window 3300 B, 1056 B frames, nothing acked: the exact gate admits 3
  // (3168 <= 3300, 4224 > 3300); rounded up to whole packets 4 (3168 < 3300,
  // then 4224 >= 3300 stops it), i.e. at most one packet over the window.
  for (const bool whole : {false, true}) {
    HierSchedulerConfig c = config();
    c.window_whole_packets = whole;
    Sched s(c);
    ASSERT_TRUE(s.add_tenant(0, 0));
    ASSERT_TRUE(s.add_pair(0, 0, 3300));
    fill(s, 0, 6, 1056);
    EXPECT_EQ(burst(s, 0).size(), whole ? 4u : 3u);
    EXPECT_EQ(s.inflight(0), whole ? 4224u : 3168u);
    EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
    // An ack of one frame opens exactly one more in both cases.
    ASSERT_TRUE(s.on_acked(0, 1056));
    EXPECT_EQ(burst(s, 0).size(), 1u);
  }
}

TEST(SchedulerPacing, NoRateNoChange) {
  // Without set_pair_rate the timed calls schedule exactly as the untimed ones.
  Sched a(config()), b(config());
  for (Sched* s : {&a, &b}) {
    ASSERT_TRUE(s->add_tenant(0, 0));
    ASSERT_TRUE(s->add_pair(1, 0, 300));
    ASSERT_TRUE(s->add_pair(2, 0, kBigWindow));
    fill(*s, 1, 4);
    fill(*s, 2, 4);
  }
  std::vector<uint32_t> pkts(8), lens(8), ids(8);
  const size_t n = a.dequeue_burst(pkts.data(), lens.data(), ids.data(), 8);
  ids.resize(n);
  EXPECT_EQ(burst(b, 123456789), ids);
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 2, 1, 2, 1, 2, 2}));
}

TEST(VmPairPacing, RateIsWindowOverBaseRtt) {
  // The edge paces a pair at w / T. Selecting: window 0, not paced. Joined
  // (one candidate path, Scenario 1): w' = phi * B_u * T = 2 * 1.25e8 B/s *
  // 24 us = 6000 B, so the pace is 6000 B / 24 us = 2.5e8 B/s = phi * B_u:
  // the bootstrap window sent at exactly the guaranteed rate.
  EdgeParams prm;
  const uint8_t hops[] = {2};
  VmPair vp(prm, 9, 24 * kUs, hops, nullptr, 1);
  vp.set_assigned_token(2);
  EXPECT_EQ(vp.pacing_rate_Bps(0), 0.0);
  vp.poll(0, true);
  ASSERT_EQ(vp.state(), VmPair::State::active);
  EXPECT_DOUBLE_EQ(vp.window(0), 6000.0);
  EXPECT_DOUBLE_EQ(vp.pacing_rate_Bps(0), 2.5e8);
}
