// Wire units (probe/units.hpp, design-notes §4.4): rounding, saturation,
// capacity codes, and the overflow budget at 20K VM-pairs on 400 Gb/s links.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "probe/units.hpp"

namespace ufab::wire {
namespace {

TEST(Units, TokensRoundToNearest64th) {
  EXPECT_EQ(tokens_to_wire(1.0), 64u);
  EXPECT_EQ(tokens_to_wire(1023.0), 65'472u);
  EXPECT_EQ(tokens_to_wire(1.0 / 128), 1u);        // exactly half a unit rounds up
  EXPECT_EQ(tokens_to_wire(0.49 / 64), 0u);        // under half rounds down
  EXPECT_EQ(tokens_to_wire(1.5 / 64), 2u);
  EXPECT_EQ(tokens_to_wire(0.0), 0u);
  EXPECT_EQ(tokens_to_wire(-3.0), 0u);
  EXPECT_EQ(tokens_to_wire(std::nan("")), 0u);
  EXPECT_DOUBLE_EQ(wire_to_tokens(6400), 100.0);
  EXPECT_DOUBLE_EQ(wire_to_tokens(tokens_to_wire(12.25)), 12.25);  // 12.25 x 64 = 784 exactly
}

TEST(Units, TokensSaturate) {
  EXPECT_EQ(tokens_to_wire(67'108'863.0), 4'294'967'232u);  // (2^26 - 1) x 64, still exact
  EXPECT_EQ(tokens_to_wire(67'108'864.0), kMax32);          // 2^26 x 64 = 2^32 saturates
  EXPECT_EQ(tokens_to_wire(1e30), kMax32);
  EXPECT_EQ(tokens_to_wire(std::numeric_limits<double>::infinity()), kMax32);
}

TEST(Units, WindowsRoundUp) {
  EXPECT_EQ(window_to_wire(0.0), 0u);
  EXPECT_EQ(window_to_wire(-64.0), 0u);
  EXPECT_EQ(window_to_wire(0.5), 1u);  // a non-zero window never encodes as 0
  EXPECT_EQ(window_to_wire(1.0), 1u);
  EXPECT_EQ(window_to_wire(64.0), 1u);
  EXPECT_EQ(window_to_wire(64.5), 2u);
  EXPECT_EQ(window_to_wire(65.0), 2u);
  EXPECT_EQ(window_to_wire(1500.0), 24u);  // 1500 / 64 = 23.4 -> 24
  EXPECT_EQ(window_to_wire(5e6), 78'125u);
  EXPECT_DOUBLE_EQ(wire_to_window(78'125), 5e6);
  EXPECT_EQ(window_to_wire(std::nan("")), 0u);
}

TEST(Units, WindowsSaturate) {
  EXPECT_EQ(window_to_wire(64.0 * kMax32), kMax32);
  EXPECT_EQ(window_to_wire(64.0 * kMax32 - 1), kMax32);  // rounds up to the max, not past it
  EXPECT_EQ(window_to_wire(1e30), kMax32);
}

TEST(Units, QueueTruncatesAndSaturates) {
  EXPECT_EQ(queue_to_wire(0), 0u);
  EXPECT_EQ(queue_to_wire(63), 0u);
  EXPECT_EQ(queue_to_wire(64), 1u);
  EXPECT_EQ(queue_to_wire(1'048'576), 16'384u);  // 1 MiB
  EXPECT_EQ(queue_to_wire(1ull << 30), kMax24);  // 1 GiB = 2^24 units saturates
  EXPECT_EQ(queue_to_wire((1ull << 30) - 64), kMax24);
  EXPECT_EQ(queue_to_wire(~0ull), kMax24);
  EXPECT_DOUBLE_EQ(wire_to_queue(16'384), 1'048'576.0);
}

TEST(Units, TxRoundsToMbpsAndSaturates) {
  EXPECT_EQ(tx_to_wire(400e9), 400'000u);
  EXPECT_EQ(tx_to_wire(9.5e9), 9'500u);
  EXPECT_EQ(tx_to_wire(1'499'999.0), 1u);
  EXPECT_EQ(tx_to_wire(1'500'000.0), 2u);
  EXPECT_EQ(tx_to_wire(0.0), 0u);
  EXPECT_EQ(tx_to_wire(-1.0), 0u);
  EXPECT_EQ(tx_to_wire(16'777'215e6), kMax24);  // 16.7 Tb/s, the largest value
  EXPECT_EQ(tx_to_wire(20e12), kMax24);
  EXPECT_EQ(tx_to_wire(1e30), kMax24);
  EXPECT_DOUBLE_EQ(wire_to_tx(400'000), 400e9);
}

TEST(Units, IntegerSaturation) {
  EXPECT_EQ(sat32(0xffffffffull), kMax32);
  EXPECT_EQ(sat32(0x100000000ull), kMax32);
  EXPECT_EQ(sat32(7), 7u);
  EXPECT_EQ(sat24(0xffffffull), kMax24);
  EXPECT_EQ(sat24(0x1000000ull), kMax24);
  EXPECT_EQ(sat24(0xfffffeull), 0xfffffeu);
}

TEST(Units, CapacityCodesRoundTrip) {
  const uint64_t rates[] = {10'000'000ull, 100'000'000ull, 1'000'000'000ull,
                            2'500'000'000ull, 10'000'000'000ull, 25'000'000'000ull,
                            40'000'000'000ull, 50'000'000'000ull, 100'000'000'000ull,
                            200'000'000'000ull, 400'000'000'000ull, 800'000'000'000ull};
  for (uint8_t c = 1; c <= 12; ++c) {
    EXPECT_EQ(capacity_code_bps(c), rates[c - 1]) << int{c};
    EXPECT_EQ(capacity_code_of(capacity_code_bps(c)), c);
  }
  EXPECT_EQ(capacity_code_of(10'000'000'000ull), 5);   // the paper's testbed links (§5.1)
  EXPECT_EQ(capacity_code_of(100'000'000'000ull), 9);  // the paper's simulated links
  for (uint8_t c : {0, 13, 14, 15}) EXPECT_EQ(capacity_code_bps(c), 0u) << int{c};
  EXPECT_EQ(capacity_code_bps(0x1b), capacity_code_bps(0xb));  // only the low 4 bits count
  EXPECT_EQ(capacity_code_of(0), 0);
  EXPECT_EQ(capacity_code_of(12'345), 0);  // no code for an arbitrary rate
}

// design-notes §4.4: a switch sums w^l and phi over every pair on a link;
// with 20K pairs on a 400 Gb/s link those sums must fit their u32 fields.
TEST(Units, OverflowBudgetAt20KPairs) {
  constexpr uint64_t kPairs = 20'000;
  // Max per-pair window = C_l * T (Eqn 3) = 400 Gb/s x 100 us = 5 MB.
  const double max_window_bytes = 400e9 * 100e-6 / 8;
  EXPECT_DOUBLE_EQ(max_window_bytes, 5e6);
  const uint32_t w = window_to_wire(max_window_bytes);
  EXPECT_EQ(w, 78'125u);
  const uint64_t sum_w = kPairs * w;
  EXPECT_EQ(sum_w, 1'562'500'000u);
  EXPECT_LT(sum_w, uint64_t{1} << 32);

  // Tokens: a pair holding 1023 tokens, in 1/64-token units.
  const uint32_t phi = tokens_to_wire(1023.0);
  const uint64_t sum_phi = kPairs * phi;
  EXPECT_EQ(sum_phi, 1'309'440'000u);
  EXPECT_LT(sum_phi, uint64_t{1} << 32);

  // Per-hop link fields also fit their 24 bits at 400 Gb/s.
  EXPECT_LT(tx_to_wire(400e9), kMax24);
  // A queue of 3 x (C_l * T) in flight (§3.4) = 15 MB is far below 1 GiB.
  EXPECT_LT(queue_to_wire(15'000'000), kMax24);
}

}  // namespace
}  // namespace ufab::wire
