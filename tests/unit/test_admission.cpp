// Two-stage admission (paper §3.4) against hand-computed windows.
// B_u = 1 Gb/s = 1.25e8 B/s, phi = 2, T = 24 us.
#include <gtest/gtest.h>

#include "control/admission.hpp"

using namespace ufab;

namespace {
constexpr Nanos kT = 24 * kUs;
constexpr double kBu = 1.25e8;
}  // namespace

TEST(Admission, Scenario1BootstrapWindow) {
  Admission a;
  a.join(2, kBu, kT, 1000);
  // w' = phi * B_u * T = 2 * 1.25e8 * 24e-6 = 6000 B
  EXPECT_DOUBLE_EQ(a.ramp_window(), 6000.0);
  EXPECT_DOUBLE_EQ(a.window(), 6000.0);
  EXPECT_EQ(a.stage(), Admission::Stage::ramp);
}

TEST(Admission, AdditiveIncreasePerRttThenEqn3) {
  Admission a;
  a.join(2, kBu, kT, 0);
  // Less than one RTT: no increase.
  EXPECT_DOUBLE_EQ(a.update(20000, 7125, 10 * kUs, kT), 6000.0);
  // One RTT: 6000 + 7125 = 13125 < 20000, still ramping.
  EXPECT_DOUBLE_EQ(a.update(20000, 7125, 24 * kUs, kT), 13125.0);
  EXPECT_EQ(a.stage(), Admission::Stage::ramp);
  // Two RTTs: 20250 >= 20000 -> steady, uses w from Eqn 3.
  EXPECT_DOUBLE_EQ(a.update(20000, 7125, 48 * kUs, kT), 20000.0);
  EXPECT_EQ(a.stage(), Admission::Stage::steady);
  // Steady follows Eqn 3 both ways.
  EXPECT_DOUBLE_EQ(a.update(9000, 7125, 60 * kUs, kT), 9000.0);
  EXPECT_DOUBLE_EQ(a.update(30000, 7125, 70 * kUs, kT), 30000.0);
}

TEST(Admission, SeveralRttsBetweenResponsesGiveSeveralSteps) {
  Admission a;
  a.join(2, kBu, kT, 0);
  // 2.5 RTTs elapsed -> 2 increases: 6000 + 2*1000 = 8000
  EXPECT_DOUBLE_EQ(a.update(1e6, 1000, 60 * kUs, kT), 8000.0);
  // The half RTT carried over: at 72 us (3 RTTs) one more step.
  EXPECT_DOUBLE_EQ(a.update(1e6, 1000, 72 * kUs, kT), 9000.0);
}

TEST(Admission, Eqn3BelowBootstrapGoesSteadyAtOnce) {
  Admission a;
  a.join(2, kBu, kT, 0);
  EXPECT_DOUBLE_EQ(a.update(4000, 7125, 1 * kUs, kT), 4000.0);
  EXPECT_EQ(a.stage(), Admission::Stage::steady);
}

TEST(Admission, Scenario2RestartAtTokenShare) {
  Admission a;
  a.join(2, kBu, kT, 0);
  a.update(1000, 7125, 1, kT);  // steady
  // r = 2.96875e8 B/s (2/8 of 1.1875e9); rate 1e8 < r with demand -> restart
  EXPECT_TRUE(a.should_restart(1e8, 2.96875e8, true));
  EXPECT_FALSE(a.should_restart(1e8, 2.96875e8, false));  // no demand: not a violation of admission
  EXPECT_FALSE(a.should_restart(3e8, 2.96875e8, true));
  a.restart(2.96875e8, kT, 100 * kUs);
  // w' = r * T = 2.96875e8 * 24e-6 = 7125
  EXPECT_DOUBLE_EQ(a.window(), 7125.0);
  EXPECT_EQ(a.stage(), Admission::Stage::ramp);
  EXPECT_FALSE(a.should_restart(1e8, 2.96875e8, true));  // only from steady
}
