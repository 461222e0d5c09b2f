// The edge's hierarchical packet scheduler (paper §4.1 Packet Scheduler and
// "Scaling to a large number of VFs"; design-notes §4.7). Pick orders are
// computed by hand from the SFQ tags: with equal packet sizes a class of
// effective weight w advances its tag by L/w per packet, the least tag sends,
// ties go to the lower class index.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "sched/hier_scheduler.hpp"

using namespace ufab;

namespace {

using Sched = HierScheduler<uint32_t>;

constexpr uint64_t kBigWindow = uint64_t{1} << 40;

HierSchedulerConfig small_config(uint32_t flows = 4, uint32_t cap = 64) {
  HierSchedulerConfig c;
  c.max_tenants = 16;
  c.max_pairs = 32;
  c.flows_per_pair = flows;
  c.queue_capacity = cap;
  return c;
}

// Enqueues n packets of len bytes on flow 0 of pair; handles are the pair id.
void fill(Sched& s, uint32_t pair, int n, uint32_t len = 100) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(s.enqueue(pair, 0, pair, len));
}

// The pair ids of the next n dequeues (stops early when nothing is eligible).
std::vector<uint32_t> picks(Sched& s, int n) {
  std::vector<uint32_t> out;
  uint32_t pkt = 0, len = 0, pair = 0;
  for (int i = 0; i < n && s.dequeue(pkt, len, pair); ++i) out.push_back(pair);
  return out;
}

}  // namespace

TEST(ScheduleOnce, TwoClassesWeightedFair) {
  // Default class weights: class 0 -> 1, class 1 -> 2. Tags (units of L/2):
  // c0 advances by 2, c1 by 1 per packet; ties go to c0.
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_tenant(1, 1));
  ASSERT_TRUE(s.add_pair(10, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(11, 1, kBigWindow));
  fill(s, 10, 12);
  fill(s, 11, 12);
  const std::vector<uint32_t> want = {10, 11, 11, 10, 11, 11, 10, 11, 11, 10, 11, 11};
  EXPECT_EQ(picks(s, 12), want);
}

TEST(ScheduleOnce, RoundRobinAcrossPairsOfATenant) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 3));
  for (uint32_t p : {0u, 1u, 2u}) ASSERT_TRUE(s.add_pair(p, 0, kBigWindow));
  for (uint32_t p : {0u, 1u, 2u}) fill(s, p, 3);
  const std::vector<uint32_t> want = {0, 1, 2, 0, 1, 2, 0, 1, 2};
  EXPECT_EQ(picks(s, 20), want);
}

TEST(ScheduleOnce, PairJoiningMidRoundGoesToTheEndOfTheRound) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  for (uint32_t p : {0u, 1u, 2u}) ASSERT_TRUE(s.add_pair(p, 0, kBigWindow));
  fill(s, 0, 3);
  fill(s, 1, 3);
  EXPECT_EQ(picks(s, 1), std::vector<uint32_t>{0});
  // Ring 0 -> 1, cursor at 1: pair 2 joins before the cursor, after pair 0.
  fill(s, 2, 2);
  const std::vector<uint32_t> want = {1, 0, 2, 1, 0, 2, 1};
  EXPECT_EQ(picks(s, 20), want);
}

TEST(ScheduleOnce, RoundRobinAcrossFlowsOfAPair) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  // Flow 0: 10 11 12, flow 1: 20, flow 2: 30 31 (FIFO order of arrival).
  for (uint32_t h : {10u, 11u, 12u}) ASSERT_TRUE(s.enqueue(0, 0, h, 100));
  ASSERT_TRUE(s.enqueue(0, 1, 20, 100));
  for (uint32_t h : {30u, 31u}) ASSERT_TRUE(s.enqueue(0, 2, h, 100));

  std::vector<uint32_t> got;
  uint32_t pkt = 0, len = 0, pair = 0;
  for (int i = 0; i < 3 && s.dequeue(pkt, len, pair); ++i) got.push_back(pkt);
  EXPECT_EQ(got, (std::vector<uint32_t>{10, 20, 30}));
  // Flow 1 emptied and left the round (0 -> 2); refilled, it joins at the end.
  ASSERT_TRUE(s.enqueue(0, 1, 21, 100));
  while (s.dequeue(pkt, len, pair)) got.push_back(pkt);
  EXPECT_EQ(got, (std::vector<uint32_t>{10, 20, 30, 11, 31, 21, 12}));
}

TEST(ScheduleOnce, TenantsOfOneClassAlternate) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 2));
  ASSERT_TRUE(s.add_tenant(1, 2));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(2, 1, kBigWindow));
  for (uint32_t p : {0u, 1u, 2u}) fill(s, p, 2);
  EXPECT_EQ(s.active_tenants(2), 2u);
  // Tenant 0 alternates its pairs 0, 1; tenant 1 has pair 2 only.
  const std::vector<uint32_t> want = {0, 2, 1, 2, 0, 1};
  EXPECT_EQ(picks(s, 20), want);
  EXPECT_EQ(s.active_tenants(2), 0u);
}

TEST(ScheduleOnce, ClassWeightScalesWithActiveTenants) {
  // Three tenants in class 0 (w=1), one in class 1 (w=2): effective weights
  // 3 and 2, so per-tenant shares 1:1:1:2.
  Sched s(small_config());
  for (uint32_t t : {0u, 1u, 2u}) ASSERT_TRUE(s.add_tenant(t, 0));
  ASSERT_TRUE(s.add_tenant(3, 1));
  for (uint32_t t = 0; t < 4; ++t) {
    ASSERT_TRUE(s.add_pair(t, t, kBigWindow));
    fill(s, t, 8, 1000);
  }
  std::array<int, 4> count{};
  uint32_t pkt = 0, len = 0, pair = 0;
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(s.dequeue(pkt, len, pair));
    ++count[pair];
    ASSERT_TRUE(s.enqueue(pair, 0, pair, 1000));
  }
  EXPECT_NEAR(count[0], 1000, 1);
  EXPECT_NEAR(count[1], 1000, 1);
  EXPECT_NEAR(count[2], 1000, 1);
  EXPECT_NEAR(count[3], 2000, 1);
}

namespace {

// Runs n dequeues with every served pair refilled by a packet of random size
// in [64, 1500]; returns the bytes sent per pair.
std::vector<uint64_t> run_mixed(Sched& s, uint32_t npairs, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> size(64, 1500);
  for (uint32_t p = 0; p < npairs; ++p) {
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(s.enqueue(p, 0, p, size(rng)));
  }
  std::vector<uint64_t> bytes(npairs, 0);
  uint32_t pkt = 0, len = 0, pair = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(s.dequeue(pkt, len, pair));
    bytes[pair] += len;
    EXPECT_TRUE(s.on_acked(pair, len));
    EXPECT_TRUE(s.enqueue(pair, 0, pair, size(rng)));
  }
  return bytes;
}

double share(const std::vector<uint64_t>& b, size_t i) {
  uint64_t total = 0;
  for (uint64_t x : b) total += x;
  return static_cast<double>(b[i]) / static_cast<double>(total);
}

}  // namespace

TEST(WeightedShares, OneTwoFiveWithMixedSizes) {
  Sched s(small_config());
  ASSERT_TRUE(s.set_class_weight(0, 1));
  ASSERT_TRUE(s.set_class_weight(1, 2));
  ASSERT_TRUE(s.set_class_weight(2, 5));
  for (uint32_t t = 0; t < 3; ++t) {
    ASSERT_TRUE(s.add_tenant(t, t));
    ASSERT_TRUE(s.add_pair(t, t, 4000));  // window above 2 packets; acked at once
  }
  const auto b = run_mixed(s, 3, 100000, 1);
  EXPECT_NEAR(share(b, 0) / (1.0 / 8), 1.0, 0.01);
  EXPECT_NEAR(share(b, 1) / (2.0 / 8), 1.0, 0.01);
  EXPECT_NEAR(share(b, 2) / (5.0 / 8), 1.0, 0.01);
}

TEST(WeightedShares, SameClassTenantsShareEqually) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 4));
  ASSERT_TRUE(s.add_tenant(1, 4));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 1, kBigWindow));
  const auto b = run_mixed(s, 2, 100000, 2);
  EXPECT_NEAR(share(b, 0), 0.5, 0.005);
  EXPECT_NEAR(share(b, 1), 0.5, 0.005);
}

TEST(WeightedShares, OneOneOneTwoWithMixedSizes) {
  Sched s(small_config());
  for (uint32_t t : {0u, 1u, 2u}) ASSERT_TRUE(s.add_tenant(t, 0));  // w = 1
  ASSERT_TRUE(s.add_tenant(3, 1));                                  // w = 2
  for (uint32_t t = 0; t < 4; ++t) ASSERT_TRUE(s.add_pair(t, t, kBigWindow));
  const auto b = run_mixed(s, 4, 100000, 3);
  for (size_t t = 0; t < 3; ++t) EXPECT_NEAR(share(b, t) / 0.2, 1.0, 0.01) << t;
  EXPECT_NEAR(share(b, 3) / 0.4, 1.0, 0.01);
}

TEST(Window, FullPairIsSkippedAndResumes) {
  Sched s(small_config());
  ASSERT_TRUE(s.set_class_weight(1, 1));
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_tenant(1, 1));
  ASSERT_TRUE(s.add_pair(0, 0, 250));  // two 100 B packets fit, the third does not
  ASSERT_TRUE(s.add_pair(1, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(2, 1, kBigWindow));
  for (uint32_t p : {0u, 1u, 2u}) fill(s, p, 4);

  // Classes tie-break to class 0. Pair 0 blocks after its 2nd packet (pick 5);
  // tenant 0's turns then all go to pair 1; once pair 2 is empty, class 0 has
  // the link to itself.
  const std::vector<uint32_t> want = {0, 2, 1, 2, 0, 2, 1, 2, 1, 1};
  EXPECT_EQ(picks(s, 20), want);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  EXPECT_EQ(s.inflight(0), 200u);
  EXPECT_EQ(s.backlog_bytes(0), 200u);
  EXPECT_EQ(s.backlog_packets(), 2u);
  EXPECT_EQ(s.active_tenants(0), 0u);

  // One ack frees room for exactly one packet: 100 + 100 <= 250 < 300.
  ASSERT_TRUE(s.on_acked(0, 100));
  EXPECT_EQ(s.pair_state(0), PairState::kActive);
  EXPECT_EQ(picks(s, 5), std::vector<uint32_t>{0});
  EXPECT_EQ(s.inflight(0), 200u);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);

  // A larger window resumes it.
  ASSERT_TRUE(s.set_window(0, 300));
  EXPECT_EQ(picks(s, 5), std::vector<uint32_t>{0});
  EXPECT_EQ(s.inflight(0), 300u);
  EXPECT_EQ(s.pair_state(0), PairState::kIdle);
  // Saturating ack.
  ASSERT_TRUE(s.on_acked(0, 1000));
  EXPECT_EQ(s.inflight(0), 0u);
}

TEST(Window, BlockedTenantLeavesItsShareToOthers) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 7));  // weight 128
  ASSERT_TRUE(s.add_tenant(1, 0));  // weight 1
  ASSERT_TRUE(s.add_pair(0, 0, 0));  // window 0: never sends
  ASSERT_TRUE(s.add_pair(1, 1, kBigWindow));
  fill(s, 0, 3);
  fill(s, 1, 3);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  EXPECT_EQ(s.active_tenants(7), 0u);
  EXPECT_EQ(picks(s, 10), (std::vector<uint32_t>{1, 1, 1}));

  // Window 50 < one 100 B packet: one packet when nothing is in flight.
  ASSERT_TRUE(s.set_window(0, 50));
  EXPECT_EQ(picks(s, 10), std::vector<uint32_t>{0});
  EXPECT_EQ(s.inflight(0), 100u);
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  ASSERT_TRUE(s.on_acked(0, 60));  // 40 still in flight: 140 > 50
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  ASSERT_TRUE(s.on_acked(0, 40));
  EXPECT_EQ(picks(s, 10), std::vector<uint32_t>{0});
}

TEST(Window, ShrinkingWindowParksAnActivePair) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 0, kBigWindow));
  fill(s, 0, 3);
  fill(s, 1, 3);
  EXPECT_EQ(picks(s, 1), std::vector<uint32_t>{0});
  ASSERT_TRUE(s.set_window(0, 150));  // 100 in flight + 100 > 150
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  EXPECT_EQ(picks(s, 10), (std::vector<uint32_t>{1, 1, 1}));
  ASSERT_TRUE(s.set_window(0, kBigWindow));
  EXPECT_EQ(picks(s, 10), (std::vector<uint32_t>{0, 0}));
}

// A VmPair's window (a double, Eqn 3) in whole bytes: a positive window
// admits a packet with nothing in flight, as the VmPair counts it; +inf
// (links of unknown capacity) is the largest window, not 0.
TEST(Window, WindowBytesFromAPairsWindow) {
  EXPECT_EQ(Sched::window_bytes(0.02), 1u);
  EXPECT_EQ(Sched::window_bytes(0.999), 1u);
  EXPECT_EQ(Sched::window_bytes(1.0), 1u);
  EXPECT_EQ(Sched::window_bytes(1500.7), 1500u);
  EXPECT_EQ(Sched::window_bytes(0.0), 0u);
  EXPECT_EQ(Sched::window_bytes(-3.0), 0u);
  EXPECT_EQ(Sched::window_bytes(std::nan("")), 0u);
  EXPECT_EQ(Sched::window_bytes(static_cast<double>(Sched::kMaxWindow) - 0.5), Sched::kMaxWindow - 1);
  EXPECT_EQ(Sched::window_bytes(static_cast<double>(Sched::kMaxWindow)), Sched::kMaxWindow);
  EXPECT_EQ(Sched::window_bytes(0x1p64), Sched::kMaxWindow);
  EXPECT_EQ(Sched::window_bytes(1e300), Sched::kMaxWindow);
  EXPECT_EQ(Sched::window_bytes(std::numeric_limits<double>::infinity()), Sched::kMaxWindow);

  // A pair whose window is a fraction of a byte sends one packet, then waits.
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(0, 0, 0));
  fill(s, 0, 3);
  EXPECT_TRUE(picks(s, 10).empty());
  ASSERT_TRUE(s.set_window(0, Sched::window_bytes(0.02)));
  EXPECT_EQ(picks(s, 10), std::vector<uint32_t>{0});
  EXPECT_EQ(s.pair_state(0), PairState::kBlocked);
  // An unbounded window lets the rest go.
  ASSERT_TRUE(s.set_window(0, Sched::window_bytes(std::numeric_limits<double>::infinity())));
  EXPECT_EQ(picks(s, 10), (std::vector<uint32_t>{0, 0}));
}

TEST(WorkConservation, EmptyClassLeavesItsShare) {
  // Classes 0, 1 weight 1 and class 2 weight 2; class 2 has a tenant with no
  // backlog: the other two split the link 1:1.
  Sched s(small_config());
  ASSERT_TRUE(s.set_class_weight(1, 1));
  ASSERT_TRUE(s.set_class_weight(2, 2));
  for (uint32_t t = 0; t < 3; ++t) {
    ASSERT_TRUE(s.add_tenant(t, t));
    ASSERT_TRUE(s.add_pair(t, t, kBigWindow));
  }
  fill(s, 0, 4);
  fill(s, 1, 4);
  EXPECT_EQ(picks(s, 20), (std::vector<uint32_t>{0, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(WorkConservation, ClassReturningFromIdleGetsNoBurst) {
  Sched s(small_config());
  ASSERT_TRUE(s.set_class_weight(1, 1));
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_tenant(1, 1));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 1, kBigWindow));
  fill(s, 0, 4);
  uint32_t pkt = 0, len = 0, pair = 0;
  // Class 0 alone for 1000 packets: all of the link.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(s.dequeue(pkt, len, pair));
    ASSERT_EQ(pair, 0u);
    ASSERT_TRUE(s.enqueue(0, 0, 0, 100));
  }
  // Class 1 returns at the virtual time (999 L) below class 0's tag (1000 L):
  // it goes first, then strict alternation, not 1000 packets in a row.
  fill(s, 1, 64);
  std::vector<uint32_t> got;
  std::array<int, 2> count{};
  for (int i = 0; i < 120; ++i) {
    ASSERT_TRUE(s.dequeue(pkt, len, pair));
    if (i < 8) got.push_back(pair);
    ++count[pair];
    ASSERT_TRUE(s.enqueue(pair, 0, pair, 100));
  }
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 0, 1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(count[0], 60);
  EXPECT_EQ(count[1], 60);
}

TEST(WorkConservation, ReturningHeavierClassGetsItsShareAtOnce) {
  // Same as above with class 1 of weight 2: B B A B B A ... from the start.
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_tenant(1, 1));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 1, kBigWindow));
  fill(s, 0, 1);
  uint32_t pkt = 0, len = 0, pair = 0;
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(s.dequeue(pkt, len, pair));
    ASSERT_TRUE(s.enqueue(0, 0, 0, 100));
  }
  fill(s, 0, 3);
  fill(s, 1, 9);
  EXPECT_EQ(picks(s, 9), (std::vector<uint32_t>{1, 1, 0, 1, 1, 0, 1, 1, 0}));
}

TEST(Conservation, FullQueueDropsAreCounted) {
  Sched s(small_config(2, 4));
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  for (uint32_t i = 0; i < 4; ++i) EXPECT_TRUE(s.enqueue(0, 0, i, 100));
  EXPECT_FALSE(s.enqueue(0, 0, 4, 100));
  EXPECT_FALSE(s.enqueue(0, 0, 5, 100));
  EXPECT_TRUE(s.enqueue(0, 1, 6, 100));  // the other flow has room
  EXPECT_FALSE(s.enqueue(0, 2, 7, 100));  // no flow 2
  EXPECT_FALSE(s.enqueue(5, 0, 8, 100));  // no pair 5
  EXPECT_FALSE(s.enqueue(0, 1, 9, 0));    // empty packet
  EXPECT_FALSE(s.enqueue(0, 1, 9, Sched::kMaxPacketLen + 1));
  const HierSchedulerCounters& c = s.counters();
  EXPECT_EQ(c.enqueued, 5u);
  EXPECT_EQ(c.enqueued_bytes, 500u);
  EXPECT_EQ(c.dropped_full, 2u);
  EXPECT_EQ(c.dropped_invalid, 4u);
  EXPECT_EQ(s.backlog_packets(), 5u);
  EXPECT_EQ(s.backlog_bytes(0), 500u);
}

TEST(Conservation, ExhaustedPoolDropsAreCounted) {
  HierSchedulerConfig cfg = small_config(2, 4);
  cfg.pool_packets = 3;  // fewer than one flow's capacity
  Sched s(cfg);
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  EXPECT_TRUE(s.enqueue(0, 0, 1, 100));
  EXPECT_TRUE(s.enqueue(0, 1, 2, 100));
  EXPECT_TRUE(s.enqueue(0, 0, 3, 100));
  EXPECT_FALSE(s.enqueue(0, 1, 4, 100));
  EXPECT_EQ(s.counters().dropped_full, 1u);
  EXPECT_EQ(picks(s, 1), std::vector<uint32_t>{0});  // frees one descriptor
  EXPECT_TRUE(s.enqueue(0, 1, 4, 100));
  EXPECT_EQ(s.backlog_packets(), 3u);
  EXPECT_EQ(s.backlog_packets(0), 3u);
}

TEST(Conservation, PacketsAndBytesUnderRandomOperations) {
  // A reference model of per-flow occupancy predicts every drop; after each
  // step enqueued = dequeued + backlog (packets and bytes), the per-pair
  // backlogs add up, and each flow stays FIFO.
  constexpr uint32_t kPairs = 6, kFlows = 2, kCap = 4;
  Sched s(small_config(kFlows, kCap));
  for (uint32_t t = 0; t < 3; ++t) ASSERT_TRUE(s.add_tenant(t, t * 3));
  for (uint32_t p = 0; p < kPairs; ++p) ASSERT_TRUE(s.add_pair(p, p % 3, 3000));

  std::mt19937 rng(7);
  std::array<uint32_t, kPairs * kFlows> occ{};
  std::array<uint32_t, kPairs * kFlows> next_seq{};
  std::array<uint32_t, kPairs * kFlows> expect_seq{};
  uint64_t drops = 0;
  uint32_t pkt = 0, len = 0, pair = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t op = rng() % 10;
    const uint32_t p = rng() % kPairs;
    if (op < 5) {
      const uint32_t f = rng() % kFlows;
      const uint32_t fi = p * kFlows + f;
      const uint32_t l = 64 + rng() % 1437;
      const bool ok = s.enqueue(p, f, (fi << 20) | next_seq[fi], l);
      ASSERT_EQ(ok, occ[fi] < kCap);
      if (ok) {
        ++occ[fi];
        ++next_seq[fi];
      } else {
        ++drops;
      }
    } else if (op < 8) {
      if (s.dequeue(pkt, len, pair)) {
        const uint32_t fi = pkt >> 20;
        ASSERT_EQ(fi / kFlows, pair);
        ASSERT_EQ(pkt & 0xfffff, expect_seq[fi]++);
        --occ[fi];
      }
    } else if (op < 9) {
      ASSERT_TRUE(s.on_acked(p, rng() % 2000));
    } else if (rng() % 16 != 0) {
      ASSERT_TRUE(s.set_window(p, rng() % 4000));
    } else {  // now and then the pair is flushed (a remote VM removed): each flow's packets in order
      uint32_t seen = 0;
      const uint32_t n = s.flush_pair(p, [&](uint32_t&& k, uint32_t) {
        const uint32_t fi = k >> 20;
        EXPECT_EQ(fi / kFlows, p);
        EXPECT_EQ(k & 0xfffff, expect_seq[fi]++);
        --occ[fi];
        ++seen;
      });
      ASSERT_EQ(n, seen);
      ASSERT_EQ(s.backlog_packets(p), 0u);
      ASSERT_TRUE(s.set_window(p, rng() % 4000));
    }
    const HierSchedulerCounters& c = s.counters();
    ASSERT_EQ(c.enqueued, c.dequeued + c.flushed + s.backlog_packets());
    ASSERT_EQ(c.enqueued_bytes, c.dequeued_bytes + c.flushed_bytes + s.backlog_bytes());
    ASSERT_EQ(c.dropped_full, drops);
    uint64_t pkts = 0, bytes = 0;
    for (uint32_t q = 0; q < kPairs; ++q) {
      pkts += s.backlog_packets(q);
      bytes += s.backlog_bytes(q);
    }
    ASSERT_EQ(pkts, s.backlog_packets());
    ASSERT_EQ(bytes, s.backlog_bytes());
  }
  // Drain: open every window; exactly the backlog comes out.
  for (uint32_t p = 0; p < kPairs; ++p) ASSERT_TRUE(s.set_window(p, kBigWindow));
  const uint64_t backlog = s.backlog_packets();
  std::array<uint32_t, 8> pkts{};
  std::array<uint32_t, 8> lens{};
  std::array<uint32_t, 8> pairs{};
  uint64_t drained = 0;
  while (size_t n = s.dequeue_burst(pkts.data(), lens.data(), pairs.data(), pkts.size())) {
    drained += n;
  }
  EXPECT_EQ(drained, backlog);
  EXPECT_EQ(s.backlog_packets(), 0u);
  EXPECT_EQ(s.backlog_bytes(), 0u);
  EXPECT_EQ(s.counters().enqueued, s.counters().dequeued + s.counters().flushed);
  EXPECT_GT(s.counters().flushed, 0u);
}

TEST(Control, PairAndTenantLifecycle) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  EXPECT_FALSE(s.add_tenant(0, 1));                 // exists
  EXPECT_FALSE(s.add_tenant(1, kWeightClasses));    // no such class
  EXPECT_FALSE(s.add_pair(0, 1, 100));              // no tenant 1
  ASSERT_TRUE(s.add_pair(0, 0, 1000));
  EXPECT_FALSE(s.add_pair(0, 0, 1000));             // exists
  EXPECT_EQ(s.window(0), 1000u);
  EXPECT_EQ(s.pair_tenant(0), 0u);
  fill(s, 0, 1);
  EXPECT_FALSE(s.remove_pair(0));                   // backlogged
  EXPECT_FALSE(s.remove_tenant(0));                 // has a pair
  EXPECT_EQ(picks(s, 2), std::vector<uint32_t>{0});
  EXPECT_TRUE(s.remove_pair(0));
  EXPECT_FALSE(s.has_pair(0));
  EXPECT_FALSE(s.set_window(0, 10));
  EXPECT_TRUE(s.remove_tenant(0));
  EXPECT_FALSE(s.set_class_weight(0, 0));
  EXPECT_FALSE(s.set_class_weight(0, kMaxClassWeight + 1));
  EXPECT_THROW({ Sched bad(small_config(1, 0)); }, std::invalid_argument);
  EXPECT_THROW({ Sched bad(small_config(2, 1u << 16)); }, std::invalid_argument);
}

TEST(Control, MovingAnActiveTenantToAnotherClass) {
  // Tenants 0 (class 0, w=1) and 1 (class 1, w=2); moving tenant 0 to class 1
  // makes it a round-robin peer of tenant 1.
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_tenant(1, 1));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 1, kBigWindow));
  fill(s, 0, 4);
  fill(s, 1, 4);
  ASSERT_TRUE(s.set_tenant_class(0, 1));
  EXPECT_EQ(s.active_tenants(0), 0u);
  EXPECT_EQ(s.active_tenants(1), 2u);
  EXPECT_EQ(s.tenant_class(0), 1u);
  EXPECT_EQ(picks(s, 20), (std::vector<uint32_t>{1, 0, 1, 0, 1, 0, 1, 0}));
}

// flush_pair (a remote VM removed at runtime): the pair's packets come out
// flow by flow in the flow round's order, each FIFO oldest first, and are
// counted as flushed; the pair is idle with nothing in flight and can be
// removed; its tenant leaves the class round when it was its only active
// pair, and the others go on exactly as before.
TEST(Control, FlushingAPairHandsBackItsPacketsAndLeavesTheOthers) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 0));
  ASSERT_TRUE(s.add_tenant(1, 0));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(2, 1, kBigWindow));
  // Pair 1: flow 2 gets 10, 11; flow 0 gets 12; flow 2 again 13 (lengths 110..113).
  ASSERT_TRUE(s.enqueue(1, 2, 10, 110));
  ASSERT_TRUE(s.enqueue(1, 0, 12, 112));
  ASSERT_TRUE(s.enqueue(1, 2, 11, 111));
  ASSERT_TRUE(s.enqueue(1, 2, 13, 113));
  fill(s, 0, 2);
  fill(s, 2, 3);
  // Tenant 0's round is pair 1 then 0 (pair 1 got a packet first); pair
  // 1's flow round is flow 2 then 0.
  uint32_t pkt = 0, len = 0, pair = 0;
  ASSERT_TRUE(s.dequeue(pkt, len, pair));  // tenant 0, pair 1: flow 2's head; flow 2 to the round's end
  ASSERT_EQ(pair, 1u);
  ASSERT_EQ(pkt, 10u);
  ASSERT_TRUE(s.dequeue(pkt, len, pair));  // tenant 1, pair 2
  ASSERT_EQ(pair, 2u);
  ASSERT_TRUE(s.dequeue(pkt, len, pair));  // tenant 0, pair 0
  ASSERT_EQ(pair, 0u);
  EXPECT_EQ(s.inflight(1), 110u);
  std::vector<std::pair<uint32_t, uint32_t>> got;
  EXPECT_EQ(s.flush_pair(1, [&](uint32_t&& p, uint32_t l) { got.emplace_back(p, l); }), 3u);
  // Flow 0 is next in the pair's flow round (flow 2 went to its end).
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, uint32_t>>{{12, 112}, {11, 111}, {13, 113}}));
  EXPECT_EQ(s.pair_state(1), PairState::kIdle);
  EXPECT_EQ(s.backlog_bytes(1), 0u);
  EXPECT_EQ(s.backlog_packets(1), 0u);
  EXPECT_EQ(s.inflight(1), 0u);
  EXPECT_EQ(s.counters().flushed, 3u);
  EXPECT_EQ(s.counters().flushed_bytes, 336u);
  EXPECT_EQ(s.backlog_packets(), 3u);  // pair 0's one, pair 2's two
  EXPECT_EQ(s.counters().enqueued, s.counters().dequeued + s.counters().flushed + s.backlog_packets());
  EXPECT_EQ(s.flush_pair(1, [&](uint32_t&&, uint32_t) { got.clear(); }), 0u);  // nothing left: drop not called
  EXPECT_EQ(got.size(), 3u);
  EXPECT_EQ(s.flush_pair(7, [](uint32_t&&, uint32_t) {}), 0u);  // no such pair
  EXPECT_EQ(picks(s, 10), (std::vector<uint32_t>{2, 0, 2}));  // tenant 1's turn came next
  EXPECT_TRUE(s.remove_pair(1));
  // The freed descriptors serve again: the pair comes back and sends.
  ASSERT_TRUE(s.add_pair(1, 1, kBigWindow));
  fill(s, 1, 2);
  EXPECT_EQ(picks(s, 10), (std::vector<uint32_t>{1, 1}));
}

// A flushed pair that was the only active one of its tenant takes the
// tenant (and the class) out of the WFQ; a blocked pair (window full) is
// flushed from its parking place.
TEST(Control, FlushingTheLastActivePairIdlesTheTenant) {
  Sched s(small_config());
  ASSERT_TRUE(s.add_tenant(0, 3));
  ASSERT_TRUE(s.add_tenant(1, 0));
  ASSERT_TRUE(s.add_pair(0, 0, kBigWindow));
  ASSERT_TRUE(s.add_pair(1, 1, 100));
  fill(s, 0, 3);
  fill(s, 1, 3);
  EXPECT_EQ(s.active_tenants(3), 1u);
  uint32_t pkt = 0, len = 0, pair = 0;
  while (s.pair_state(1) != PairState::kBlocked && s.dequeue(pkt, len, pair)) {
  }
  ASSERT_EQ(s.pair_state(1), PairState::kBlocked);
  const uint32_t blocked = s.backlog_packets(1);
  EXPECT_EQ(s.flush_pair(1, [](uint32_t&&, uint32_t) {}), blocked);
  EXPECT_EQ(s.active_tenants(0), 0u);
  const uint32_t left = s.backlog_packets(0);
  EXPECT_EQ(s.flush_pair(0, [](uint32_t&&, uint32_t) {}), left);
  EXPECT_EQ(s.active_tenants(3), 0u);
  EXPECT_FALSE(s.dequeue(pkt, len, pair));
  EXPECT_EQ(s.backlog_packets(), 0u);
  EXPECT_TRUE(s.remove_pair(0) && s.remove_pair(1));
}

TEST(Control, ClassWeightsFromAWeightClassMap) {
  Sched s(small_config());
  const WeightClassMap m = WeightClassMap::spanning(1, 10);
  s.set_class_weights(m);
  for (uint32_t c = 0; c < kWeightClasses; ++c) EXPECT_EQ(s.class_weight(c), m.class_weights()[c]);
}

TEST(Burst, EnqueueBurstEqualsSequentialEnqueues) {
  // enqueue_burst is enqueue() in order (the prefetching is a hint, §4.1):
  // same results per packet, counters, drops and pick order. The burst mixes
  // full flows, invalid pairs/flows/lengths and pairs that start idle.
  HierSchedulerConfig cfg = small_config(2, 3);
  Sched a(cfg), b(cfg);
  for (Sched* s : {&a, &b}) {
    for (uint32_t t = 0; t < 4; ++t) ASSERT_TRUE(s->add_tenant(t, t * 2));
    for (uint32_t p = 0; p < 8; ++p) ASSERT_TRUE(s->add_pair(p, p % 4, p == 5 ? 0 : kBigWindow));
  }
  std::mt19937 rng(11);
  constexpr size_t kN = 200;
  std::array<uint32_t, kN> pairs{}, flows{}, lens{}, pkts{};
  for (size_t i = 0; i < kN; ++i) {
    pairs[i] = rng() % 10;  // 8, 9: no such pair
    flows[i] = rng() % 3;   // 2: no such flow
    lens[i] = i % 37 == 0 ? 0 : 64 + rng() % 1437;
    pkts[i] = static_cast<uint32_t>(i);
  }
  std::array<bool, kN> want{}, got{};
  size_t want_n = 0;
  for (size_t i = 0; i < kN; ++i) want_n += (want[i] = a.enqueue(pairs[i], flows[i], pkts[i], lens[i]));
  EXPECT_EQ(b.enqueue_burst(pairs.data(), flows.data(), pkts.data(), lens.data(), kN, got.data()), want_n);
  EXPECT_EQ(got, want);
  EXPECT_EQ(b.counters().enqueued, a.counters().enqueued);
  EXPECT_EQ(b.counters().dropped_full, a.counters().dropped_full);
  EXPECT_EQ(b.counters().dropped_invalid, a.counters().dropped_invalid);
  EXPECT_GT(a.counters().dropped_full, 0u);
  EXPECT_EQ(b.pair_state(5), PairState::kBlocked);
  uint32_t pa = 0, la = 0, qa = 0, pb = 0, lb = 0, qb = 0;
  while (a.dequeue(pa, la, qa)) {
    ASSERT_TRUE(b.dequeue(pb, lb, qb));
    ASSERT_EQ(std::make_tuple(pa, la, qa), std::make_tuple(pb, lb, qb));
  }
  EXPECT_FALSE(b.dequeue(pb, lb, qb));
  // Without the result array, only the count (pair 5's blocked backlog
  // makes some of its flows full this time).
  size_t again = 0;
  for (size_t i = 0; i < kN; ++i) again += a.enqueue(pairs[i], flows[i], pkts[i], lens[i]);
  EXPECT_EQ(b.enqueue_burst(pairs.data(), flows.data(), pkts.data(), lens.data(), kN), again);
  EXPECT_EQ(b.backlog_packets(), a.backlog_packets());
}

TEST(Control, CopiedSchedulerContinuesIdentically) {
  Sched a(small_config());
  for (uint32_t t = 0; t < 3; ++t) ASSERT_TRUE(a.add_tenant(t, t));
  for (uint32_t p = 0; p < 6; ++p) {
    ASSERT_TRUE(a.add_pair(p, p % 3, kBigWindow));
    for (uint32_t i = 0; i < 5; ++i) ASSERT_TRUE(a.enqueue(p, i % 4, p * 10 + i, 100 + 50 * i));
  }
  EXPECT_EQ(picks(a, 7).size(), 7u);
  Sched b(a);
  Sched c(small_config());
  c = a;
  const std::vector<uint32_t> want = picks(a, 40);
  EXPECT_EQ(want.size(), 23u);
  EXPECT_EQ(picks(b, 40), want);
  EXPECT_EQ(picks(c, 40), want);
  Sched d(std::move(b));
  EXPECT_EQ(d.backlog_packets(), 0u);
}
