// Eqns 1-3 and their guards against values computed by hand (paper §3.3, §3.4).
// Link: 10 Gb/s physical, eta = 0.95 -> C = 1.1875e9 B/s; T = 24 us -> C*T = 28500 B.
#include <gtest/gtest.h>

#include <array>
#include <algorithm>
#include <cmath>
#include <limits>

#include "control/window.hpp"

using namespace ufab;

namespace {
constexpr double kC = 0.95 * 1.25e9;  // 1.1875e9 B/s
constexpr Nanos kT = 24 * kUs;

LinkView link(double phi_l, double W_l, double tx, double q) {
  return LinkView{kC, tx, q, phi_l, W_l};
}
}  // namespace

TEST(Eqn1, ProportionalTokenShare) {
  // r = 2/8 * 1.1875e9 = 2.96875e8 B/s
  EXPECT_DOUBLE_EQ(token_share_Bps(2, link(8, 0, 0, 0)), 2.96875e8);
}

TEST(Eqn1, PairNotYetCountedUsesOwnToken) {
  // Phi_l = 0 < phi: the guard takes Phi_l = phi, so r = C.
  EXPECT_DOUBLE_EQ(token_share_Bps(2, link(0, 0, 0, 0)), kC);
  EXPECT_DOUBLE_EQ(token_share_Bps(2, link(1, 0, 0, 0)), kC);
}

TEST(Eqn1, UnknownCapacityIsNoConstraint) {
  LinkView l = link(8, 0, 0, 0);
  l.cap_Bps = 0;
  EXPECT_EQ(token_share_Bps(2, l), std::numeric_limits<double>::infinity());
}

TEST(Eqn2, WorkConservingRate) {
  // R = 2/8 * 5e8 * (1.1875e9 / 9.5e8) = 0.25 * 5e8 * 1.25 = 1.5625e8
  EXPECT_DOUBLE_EQ(rate_Bps(2, 5e8, link(8, 0, 9.5e8, 0)), 1.5625e8);
}

TEST(Eqn2, CappedAtCapacityAndIdleGuard) {
  // R = 1 * 2e9 * 1.1875e9/1e8 -> far above C -> C
  EXPECT_DOUBLE_EQ(rate_Bps(8, 2e9, link(8, 0, 1e8, 0)), kC);
  // tx = 0 -> idle link guard -> C
  EXPECT_DOUBLE_EQ(rate_Bps(2, 5e8, link(8, 0, 0, 0)), kC);
}

TEST(Eqn3, WindowFromLinkState) {
  // tx*T = 9.5e8 * 24e-6 = 22800; load = 22800 + 5000 = 27800
  // w = 2/8 * 40000 * 28500/27800 = 10000 * 1.02517985... = 10251.7985611...
  const double w = window_bytes(2, 0, link(8, 40000, 9.5e8, 5000), kT);
  EXPECT_NEAR(w, 10000.0 * 28500.0 / 27800.0, 1e-6);
  EXPECT_NEAR(w, 10251.79856, 1e-4);
}

TEST(Eqn3, QueueShrinksWindow) {
  // Same link, queue grows to 28500 B: load = 51300, w = 10000 * 28500/51300 = 5555.55...
  EXPECT_NEAR(window_bytes(2, 0, link(8, 40000, 9.5e8, 28500), kT), 10000.0 * 28500 / 51300, 1e-6);
}

TEST(Eqn3, CappedAtOneBdp) {
  EXPECT_DOUBLE_EQ(window_bytes(8, 0, link(8, 1e9, 1e6, 0), kT), 28500.0);
}

TEST(Eqn3, IdleLinkGivesOneBdp) {
  EXPECT_DOUBLE_EQ(window_bytes(2, 0, link(8, 40000, 0, 0), kT), 28500.0);
}

TEST(Eqn3, NoWindowInformationFallsBackToTokenShare) {
  // W_l = 0 and no own window: W := tx*T + q, so w = phi/Phi * C*T = 0.25 * 28500 = 7125
  EXPECT_NEAR(window_bytes(2, 0, link(8, 0, 9.5e8, 5000), kT), 7125.0, 1e-9);
}

TEST(Eqn3, RebootedSwitchReportsLessThanOwnWindow) {
  // W_l = 1000 < own 3000 -> W := 3000: w = 0.25 * 3000 * 28500/27800
  EXPECT_NEAR(window_bytes(2, 3000, link(8, 1000, 9.5e8, 5000), kT), 750.0 * 28500 / 27800, 1e-9);
}

TEST(Eqn3, PhiZeroOnLinkUsesOwnToken) {
  // Phi_l = 0: phi/Phi := 1, w = 40000 * 28500/27800 capped at 28500
  EXPECT_DOUBLE_EQ(window_bytes(2, 0, link(0, 40000, 9.5e8, 5000), kT), 28500.0);
}

TEST(Eqn3, ZeroTokenAdmitsNothing) {
  EXPECT_EQ(window_bytes(0, 0, link(8, 40000, 9.5e8, 5000), kT), 0.0);
}

TEST(PathWindow, MinimumOverLinksAndBottleneck) {
  // Link 0 as WindowFromLinkState (10251.8); link 1 with a 4x larger token sum:
  // w1 = 2/32 * 40000 * 28500/27800 = 2562.95; r1 = 2/32 * C = 7.421875e7
  std::array<LinkView, 2> links{link(8, 40000, 9.5e8, 5000), link(32, 40000, 9.5e8, 5000)};
  std::array<double, 2> per{};
  const PathWindow p = path_window(2, links, {}, kT, per);
  EXPECT_NEAR(per[0], 10000.0 * 28500 / 27800, 1e-6);
  EXPECT_NEAR(per[1], 2500.0 * 28500 / 27800, 1e-6);
  EXPECT_NEAR(p.w, per[1], 1e-9);
  EXPECT_EQ(p.bottleneck, 1u);
  EXPECT_DOUBLE_EQ(p.r, kC / 16);
  EXPECT_DOUBLE_EQ(p.ramp_step, kC / 16 * 24e-6);  // 1781.25 B
  // R with R_l = W_l/T = 40000/24us = 1.6667e9: link1 = 1/16 * 1.6667e9 * 1.25 = 1.30208e8
  EXPECT_NEAR(path_rate_Bps(2, links, kT), 1.0 / 16 * (40000 / 24e-6) * (kC / 9.5e8), 1e-3);
}

TEST(PathWindow, AgreesWithThePerLinkEquations) {
  // path_window fuses Eqns 1 and 3 for the hot path; it must give exactly
  // what window_bytes and token_share_Bps give link by link.
  Rng rng(3);
  for (int k = 0; k < 2000; ++k) {
    std::array<LinkView, 5> links;
    std::array<double, 5> own, per{};
    for (size_t i = 0; i < 5; ++i) {
      links[i] = LinkView{rng.unit() < 0.1 ? 0.0 : 1e8 + rng.unit() * 5e10, rng.unit() < 0.2 ? 0.0 : rng.unit() * 5e10,
                          rng.unit() < 0.3 ? 0.0 : rng.unit() * 1e5, rng.unit() * 50, rng.unit() < 0.2 ? 0.0 : rng.unit() * 1e6};
      own[i] = rng.unit() < 0.3 ? 0.0 : rng.unit() * 1e5;
    }
    const double phi = 0.1 + rng.unit() * 10;
    const PathWindow p = path_window(phi, links, own, kT, per);
    double w = std::numeric_limits<double>::infinity(), r = w;
    for (size_t i = 0; i < 5; ++i) {
      const double want = window_bytes(phi, own[i], links[i], kT);
      if (std::isinf(want)) {
        EXPECT_TRUE(std::isinf(per[i])) << "link " << i;  // unknown capacity: no constraint
      } else {
        EXPECT_NEAR(per[i], want, 1e-12 * want) << "link " << i;  // same equation, fused: rounding only
      }
      w = std::min(w, per[i]);
      r = std::min(r, token_share_Bps(phi, links[i]));
    }
    if (!std::isinf(w)) {
      EXPECT_NEAR(p.w, w, 1e-12 * w);
    }
    if (!std::isinf(r)) {
      EXPECT_NEAR(p.r, r, 1e-12 * r);
    }
  }
}

TEST(PathWindow, ZeroRttGuard) {
  std::array<LinkView, 1> links{link(8, 40000, 9.5e8, 5000)};
  EXPECT_EQ(path_window(2, links, {}, 0).w, 0.0);
}

TEST(InflightBound, ThreeBdp) {
  EXPECT_DOUBLE_EQ(inflight_bound_bytes(kC, kT), 85500.0);
}
