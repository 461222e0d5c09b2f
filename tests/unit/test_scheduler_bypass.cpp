// HierScheduler's bypass (try_bypass, enqueue_or_bypass_burst): a packet
// leaves on arrival, unqueued, exactly when no pair is eligible, pacing is
// off, its pair has nothing queued and its window admits it; it is charged
// as a dequeue would charge it. Otherwise the packet is queued and the
// schedule is the one enqueue() alone gives.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "sched/hier_scheduler.hpp"

using namespace ufab;

namespace {

using Sched = HierScheduler<uint32_t>;

HierSchedulerConfig config() {
  HierSchedulerConfig c;
  c.max_tenants = 8;
  c.max_pairs = 16;
  c.flows_per_pair = 2;
  c.queue_capacity = 8;
  return c;
}

// Tenants 0 and 1 in classes 0 and 1; pairs 0..3 of tenant 0, 4..7 of tenant 1.
Sched make(uint64_t window) {
  Sched s(config());
  EXPECT_TRUE(s.add_tenant(0, 0));
  EXPECT_TRUE(s.add_tenant(1, 1));
  for (uint32_t p = 0; p < 8; ++p) EXPECT_TRUE(s.add_pair(p, p < 4 ? 0 : 1, window));
  return s;
}

std::vector<uint32_t> picks(Sched& s) {
  std::vector<uint32_t> out;
  uint32_t pkt = 0, len = 0, pair = 0;
  while (s.dequeue(pkt, len, pair)) out.push_back(pair);
  return out;
}

}  // namespace

TEST(Bypass, IdleSchedulerLetsAPacketGoAndChargesItAsSent) {
  Sched s = make(1000);
  ASSERT_TRUE(s.try_bypass(2, 300));
  EXPECT_EQ(s.inflight(2), 300u);
  EXPECT_EQ(s.backlog_packets(), 0u);
  EXPECT_EQ(s.backlog_bytes(2), 0u);
  EXPECT_EQ(s.pair_state(2), PairState::kIdle);
  const HierSchedulerCounters& c = s.counters();
  EXPECT_EQ(c.enqueued, 1u);
  EXPECT_EQ(c.dequeued, 1u);
  EXPECT_EQ(c.bypassed, 1u);
  EXPECT_EQ(c.enqueued_bytes, 300u);
  EXPECT_EQ(c.dequeued_bytes, 300u);
  // The bytes come back on ack, as for a dequeued packet.
  ASSERT_TRUE(s.on_acked(2, 300));
  EXPECT_EQ(s.inflight(2), 0u);
}

TEST(Bypass, TheWindowGatesItAsItGatesTheQueue) {
  Sched s = make(1000);
  ASSERT_TRUE(s.try_bypass(1, 600));
  ASSERT_TRUE(s.try_bypass(1, 400));   // 600 + 400 <= 1000
  EXPECT_FALSE(s.try_bypass(1, 1));    // 1001 > 1000
  EXPECT_EQ(s.inflight(1), 1000u);
  Sched closed = make(0);              // window 0: never
  EXPECT_FALSE(closed.try_bypass(1, 64));
  EXPECT_EQ(closed.counters().bypassed, 0u);
  // The first packet of an empty window always fits (inflight 0), as in head_fits.
  Sched small = make(100);
  EXPECT_TRUE(small.try_bypass(3, 1500));
  EXPECT_FALSE(small.try_bypass(3, 64));
}

TEST(Bypass, NotWhileAnyPairIsEligibleOrThePairHasAQueue) {
  Sched s = make(1000);
  EXPECT_TRUE(s.bypass_possible());
  ASSERT_TRUE(s.enqueue(5, 0, 55, 100));  // pair 5 eligible: the rounds are not empty
  EXPECT_FALSE(s.bypass_possible());
  EXPECT_FALSE(s.try_bypass(0, 100));
  EXPECT_EQ(picks(s), std::vector<uint32_t>{5});
  EXPECT_TRUE(s.try_bypass(0, 100));     // empty again
  // A pair whose window is full keeps its queue, blocked (not eligible):
  // another pair may bypass, but not that one (its queue stays in order).
  Sched b = make(100);
  ASSERT_TRUE(b.try_bypass(6, 100));
  ASSERT_TRUE(b.enqueue(6, 0, 66, 100));
  EXPECT_EQ(b.pair_state(6), PairState::kBlocked);
  EXPECT_TRUE(b.try_bypass(1, 100));
  // Nor a smaller packet of pair 0 that its window would take, once 0 has a
  // blocked packet queued: it would overtake that packet.
  Sched q = make(250);
  ASSERT_TRUE(q.try_bypass(0, 200));
  ASSERT_TRUE(q.enqueue(0, 0, 1, 100));  // 300 > 250: blocked
  EXPECT_EQ(q.pair_state(0), PairState::kBlocked);
  EXPECT_FALSE(q.try_bypass(0, 50));     // 250 <= 250, but behind the queue
  ASSERT_TRUE(b.on_acked(6, 100));       // 6's queued packet is eligible now
  EXPECT_EQ(b.pair_state(6), PairState::kActive);
  ASSERT_TRUE(b.on_acked(1, 100));
  EXPECT_FALSE(b.try_bypass(1, 100));    // 6 is eligible: 1's packet must queue
  EXPECT_EQ(picks(b), std::vector<uint32_t>{6});
}

TEST(Bypass, NeverWithPacingOnOrForUnknownPairsOrBadLengths) {
  Sched s = make(1000);
  EXPECT_FALSE(s.try_bypass(9, 100));    // never added
  EXPECT_FALSE(s.try_bypass(99, 100));   // out of range
  EXPECT_FALSE(s.try_bypass(0, 0));
  EXPECT_FALSE(s.try_bypass(0, 65536));
  ASSERT_TRUE(s.set_pair_rate(7, 1e6));  // pacing on for the scheduler
  EXPECT_FALSE(s.bypass_possible());
  EXPECT_FALSE(s.try_bypass(0, 100));
  EXPECT_EQ(s.counters().bypassed, 0u);
  EXPECT_EQ(s.counters().enqueued, 0u);
}

// A burst: bypassed[] and accepted[] per packet, in order; packets that may
// not bypass or do not fit are queued, and the first one queued as eligible
// ends the burst's bypasses. Then the queue drains in WFQ/RR order.
namespace {
// The burst both burst tests send: packet i to pairs[i]'s flow flows[i].
struct SevenPackets {
  //                          0    1    2    3    4    5    6
  std::array<uint32_t, 7> pairs = {0, 4, 0, 0, 1, 5, 6};
  std::array<uint32_t, 7> flows = {0, 0, 1, 0, 0, 0, 0};
  std::array<uint32_t, 7> pkts = {10, 40, 11, 12, 13, 50, 60};
  std::array<uint32_t, 7> lens = {100, 100, 100, 100, 100, 100, 100};
};
}  // namespace

TEST(Bypass, BurstBypassesInOrderUntilSomethingIsEligible) {
  Sched s = make(250);
  auto [pairs, flows, pkts, lens] = SevenPackets{};
  const std::array<bool, 7> may = {true, true, true, true, false, true, true};
  std::array<bool, 7> accepted{}, bypassed{};
  // Pair 0 bypasses (in flight 100), 4 bypasses, 0 again (200 <= 250). 0 a
  // third time does not fit (300 > 250): queued, blocked, not eligible, so
  // bypasses could go on; but pair 1 may not bypass (may[4] is false): it is
  // queued, eligible, and that ends the bypasses: 5 and 6 are queued.
  EXPECT_EQ(s.enqueue_or_bypass_burst(pairs.data(), flows.data(), pkts.data(), lens.data(), 7, may.data(),
                                      accepted.data(), bypassed.data()),
            7u);
  const std::array<bool, 7> want_bypassed = {true, true, true, false, false, false, false};
  EXPECT_EQ(bypassed, want_bypassed);
  for (const bool a : accepted) EXPECT_TRUE(a);
  EXPECT_EQ(s.counters().bypassed, 3u);
  EXPECT_EQ(s.backlog_packets(), 4u);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  // Class 0 (weight 1) holds pair 1, class 1 (weight 2) pairs 5 and 6:
  // tags in units of 100/2: c0 +2, c1 +1 per packet, ties to c0.
  const std::vector<uint32_t> want = {1, 5, 6};
  EXPECT_EQ(picks(s), want);
  EXPECT_EQ(s.inflight(0), 200u);  // its queued packet waits for an ack
  ASSERT_TRUE(s.on_acked(0, 200));
  EXPECT_EQ(picks(s), std::vector<uint32_t>{0});
}

// may_bypass null: every packet may bypass (ufab-edge's call). The same
// burst as above then bypasses pair 1 too (index 4), and 5 and 6 as well:
// only pair 0's third packet waits, blocked behind its window.
TEST(Bypass, NullMayBypassLetsEveryPacketTry) {
  Sched s = make(250);
  auto [pairs, flows, pkts, lens] = SevenPackets{};
  std::array<bool, 7> accepted{}, bypassed{};
  EXPECT_EQ(s.enqueue_or_bypass_burst(pairs.data(), flows.data(), pkts.data(), lens.data(), 7, nullptr,
                                      accepted.data(), bypassed.data()),
            7u);
  const std::array<bool, 7> want_bypassed = {true, true, true, false, true, true, true};
  EXPECT_EQ(bypassed, want_bypassed);
  EXPECT_EQ(s.counters().bypassed, 6u);
  EXPECT_EQ(s.backlog_packets(), 1u);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  EXPECT_TRUE(picks(s).empty());
}

// With nothing else queued, bypassing a packet gives what enqueue() then an
// immediate dequeue() gives: the same packet, pair, in-flight bytes and
// counts (except bypassed).
TEST(Bypass, SameChargeAsEnqueueThenDequeue) {
  Sched a = make(5000), b = make(5000);
  const std::array<std::array<uint32_t, 2>, 5> seq = {{{0, 100}, {4, 1500}, {0, 64}, {7, 900}, {2, 1200}}};
  for (const auto& [pair, len] : seq) {
    ASSERT_TRUE(a.try_bypass(pair, len));
    ASSERT_TRUE(b.enqueue(pair, 0, pair, len));
    uint32_t pkt = 0, l = 0, p = 0;
    ASSERT_TRUE(b.dequeue(pkt, l, p));
    EXPECT_EQ(p, pair);
    EXPECT_EQ(l, len);
  }
  for (uint32_t p = 0; p < 8; ++p) EXPECT_EQ(a.inflight(p), b.inflight(p)) << p;
  EXPECT_EQ(a.counters().dequeued, b.counters().dequeued);
  EXPECT_EQ(a.counters().dequeued_bytes, b.counters().dequeued_bytes);
  EXPECT_EQ(a.backlog_packets(), b.backlog_packets());
  EXPECT_EQ(a.counters().bypassed, 5u);
  EXPECT_EQ(b.counters().bypassed, 0u);
}
