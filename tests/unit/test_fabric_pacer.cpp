// pipeline/fabric_pacer.hpp: ufab-edge's NIC-rate pacing of data frames.
// Values by hand: 8 Mb/s = 1 byte per us = 0.001 B/ns.
#include <gtest/gtest.h>

#include "pipeline/fabric_pacer.hpp"

using ufab::kUs;
using ufab::pipeline::FabricPacer;

TEST(FabricPacer, UnpacedAllowsAFullBurst) {
  FabricPacer p;
  EXPECT_FALSE(p.paced());
  EXPECT_EQ(p.allowance(0, 1500, 32), 32u);
  p.spend(1'000'000);
  EXPECT_EQ(p.allowance(1, 1500, 32), 32u);
}

TEST(FabricPacer, CreditGrowsAtTheRateUpToTheDepth) {
  FabricPacer p;
  p.configure(8.0, 3000);  // 1 B/us, bucket 3000 B, starts full
  // Full bucket: 3000 / 1000 + 1 = 4 frames of 1000 B may leave.
  EXPECT_EQ(p.allowance(0, 1000, 32), 4u);
  p.spend(4000);  // credit -1000: nothing until 1000 us have passed
  EXPECT_EQ(p.allowance(500 * kUs, 1000, 32), 0u);
  EXPECT_EQ(p.allowance(1000 * kUs, 1000, 32), 0u);  // credit exactly 0
  EXPECT_EQ(p.allowance(1001 * kUs, 1000, 32), 1u);  // credit 1 B: one frame (a deficit is allowed)
  p.spend(1000);                                      // credit -999
  // 10 s later the credit is capped at the depth, not 10^7 bytes.
  EXPECT_EQ(p.allowance(10'001'001 * kUs, 1000, 32), 4u);
  EXPECT_EQ(p.allowance(10'001'001 * kUs, 1000, 2), 2u);  // never more than asked
}

TEST(FabricPacer, LongRunRateIsTheConfiguredRate) {
  // Send 1000 B frames whenever allowed, polling every 100 us for 1 s: the
  // bytes sent are the depth plus rate x time (within one frame).
  FabricPacer p;
  p.configure(8.0, 3000);
  uint64_t sent = 0;
  for (uint64_t t = 0; t <= 1'000'000; t += 100) {
    const uint32_t n = p.allowance(t * kUs, 1000, 32);
    for (uint32_t i = 0; i < n; ++i) p.spend(1000);
    sent += 1000ull * n;
  }
  EXPECT_GE(sent, 1'000'000u + 3000u);
  EXPECT_LE(sent, 1'000'000u + 3000u + 1000u);
}
