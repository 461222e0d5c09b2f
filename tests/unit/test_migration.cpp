// Migration triggers and the per-host freeze window (paper §3.5).
#include <gtest/gtest.h>

#include <set>

#include "control/migration.hpp"

using namespace ufab;

TEST(Trigger1, FiveConsecutiveViolatingRtts) {
  MigrationMonitor m(5, 30 * kSec);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(m.on_rtt(true));
  EXPECT_TRUE(m.on_rtt(true));
  EXPECT_EQ(m.consecutive_violations(), 0u);
}

TEST(Trigger1, AGoodRttResetsTheCount) {
  MigrationMonitor m(5, 30 * kSec);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(m.on_rtt(true));
  EXPECT_FALSE(m.on_rtt(false));
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(m.on_rtt(true));
  EXPECT_TRUE(m.on_rtt(true));
}

TEST(Trigger2, BetterPathHeldThirtySeconds) {
  MigrationMonitor m(5, 30 * kSec);
  EXPECT_FALSE(m.on_better(2, 1 * kSec));
  EXPECT_FALSE(m.on_better(2, 30 * kSec));  // 29 s held
  EXPECT_TRUE(m.on_better(2, 31 * kSec));   // 30 s held
}

TEST(Trigger2, ChangingOrLosingTheBetterPathRestartsTheHold) {
  MigrationMonitor m(5, 30 * kSec);
  EXPECT_FALSE(m.on_better(2, 0));
  EXPECT_FALSE(m.on_better(3, 20 * kSec));  // a different path: hold restarts at 20 s
  EXPECT_FALSE(m.on_better(3, 49 * kSec));
  EXPECT_FALSE(m.on_better(-1, 49 * kSec));
  EXPECT_FALSE(m.on_better(3, 50 * kSec));
  EXPECT_TRUE(m.on_better(3, 80 * kSec));
}

TEST(FreezeWindow, OneMigrationPerWindowDrawnFromOneToNRtts) {
  const Nanos rtt = 24 * kUs;
  HostMigrationGate g(10, 99);
  std::set<Nanos> lengths;
  Nanos now = 0;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(g.try_acquire(now, rtt));
    const Nanos len = g.frozen_until() - now;
    EXPECT_EQ(len % rtt, 0u);
    EXPECT_GE(len, rtt);
    EXPECT_LE(len, 10 * rtt);
    lengths.insert(len);
    EXPECT_FALSE(g.try_acquire(g.frozen_until() - 1, rtt));
    now = g.frozen_until();
  }
  EXPECT_EQ(lengths.size(), 10u);  // every window length 1..N occurs
  EXPECT_EQ(g.granted(), 2000u);
  EXPECT_EQ(g.refused(), 2000u);
}

TEST(FreezeWindow, SameSeedSameWindows) {
  HostMigrationGate a(10, 5), b(10, 5);
  for (int i = 0; i < 50; ++i) {
    a.try_acquire(a.frozen_until(), 1000);
    b.try_acquire(b.frozen_until(), 1000);
    EXPECT_EQ(a.frozen_until(), b.frozen_until());
  }
}
