// Path qualification and selection (paper §3.3, §3.5).
// B_u = 1.25e8 B/s; C = 1.1875e9 B/s -> C/B_u = 9.5 tokens fit a link.
#include <gtest/gtest.h>

#include <array>

#include "control/path_select.hpp"

using namespace ufab;

namespace {
constexpr double kC = 1.1875e9;
constexpr double kBu = 1.25e8;
LinkView l(double phi_l) { return LinkView{kC, 0, 0, phi_l, 0}; }
}  // namespace

TEST(Qualified, NewPairAddsItsToken) {
  std::array<LinkView, 2> links{l(4), l(7.5)};
  PathCandidate p{links, false, true};
  // (7.5 + 2) * B_u = 9.5 * 1.25e8 = 1.1875e9 = C -> qualified (>=)
  EXPECT_TRUE(path_qualified(p, 2, kBu));
  EXPECT_DOUBLE_EQ(path_subscription(p, 2, kBu), 1.0);
  // phi = 2.5 -> 10 tokens > 9.5 -> not qualified
  EXPECT_FALSE(path_qualified(p, 2.5, kBu));
}

TEST(Qualified, CountedPairIsAlreadyInside) {
  std::array<LinkView, 1> links{l(9.5)};
  EXPECT_TRUE(path_qualified(PathCandidate{links, true, true}, 2, kBu));
  EXPECT_FALSE(path_qualified(PathCandidate{links, false, true}, 2, kBu));
}

TEST(Qualified, UnusableOrEmptyIsNotQualified) {
  std::array<LinkView, 1> links{l(0)};
  EXPECT_FALSE(path_qualified(PathCandidate{links, false, false}, 1, kBu));
  EXPECT_FALSE(path_qualified(PathCandidate{{}, false, true}, 1, kBu));
}

TEST(Select, PrefersLeastSubscribed) {
  // A: (3.75+1)/9.5 = 0.5, B: (7.55+1)/9.5 = 0.9, C: (11+1)/9.5 > 1 (unqualified)
  std::array<LinkView, 1> a{l(3.75)}, b{l(7.55)}, c{l(11)};
  std::array<PathCandidate, 3> paths{PathCandidate{a}, PathCandidate{b}, PathCandidate{c}};
  EXPECT_NEAR(path_subscription(paths[0], 1, kBu), 0.5, 1e-12);
  EXPECT_NEAR(path_subscription(paths[1], 1, kBu), 0.9, 1e-12);
  Rng rng(7);
  int count[3] = {0, 0, 0};
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++count[select_path(paths, 1, kBu, rng)];
  // P(A) = 0.5 / (0.5 + 0.1) = 5/6, P(B) = 1/6, P(C) = 0
  EXPECT_NEAR(count[0] / double(n), 5.0 / 6, 0.01);
  EXPECT_NEAR(count[1] / double(n), 1.0 / 6, 0.01);
  EXPECT_EQ(count[2], 0);
}

TEST(Select, RepeatableWithSeedAndSkip) {
  std::array<LinkView, 1> a{l(1)}, b{l(2)};
  std::array<PathCandidate, 2> paths{PathCandidate{a}, PathCandidate{b}};
  Rng r1(42), r2(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(select_path(paths, 1, kBu, r1), select_path(paths, 1, kBu, r2));
  Rng r3(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(select_path(paths, 1, kBu, r3, 0), 1);
}

TEST(Select, NoneQualified) {
  std::array<LinkView, 1> a{l(9)};
  std::array<PathCandidate, 1> paths{PathCandidate{a}};
  Rng rng(1);
  EXPECT_EQ(select_path(paths, 1, kBu, rng), -1);
}

TEST(BestRate, LargestRAmongQualified) {
  std::array<LinkView, 1> a{l(1)}, b{l(2)}, c{l(20)};
  std::array<PathCandidate, 3> paths{PathCandidate{a}, PathCandidate{b}, PathCandidate{c}};
  std::array<double, 3> rates{1e8, 5e8, 9e8};  // C has the largest R but is not qualified
  EXPECT_EQ(best_rate_path(paths, rates, 1, kBu), 1);
}
