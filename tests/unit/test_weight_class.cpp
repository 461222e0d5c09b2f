// Tenant weight -> one of the 8 WFQ classes (paper §4.1 "Scaling to a large
// number of VFs"; design-notes §4.7): nearest class in log space, and the
// relative mapping error mapped/weight - 1.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "sched/weight_class.hpp"

using namespace ufab;

TEST(WeightClassMap, DefaultIsPowersOfTwo) {
  const WeightClassMap m;
  EXPECT_EQ(m.class_weights(), (WeightClassMap::Weights{1, 2, 4, 8, 16, 32, 64, 128}));
  EXPECT_DOUBLE_EQ(m.unit(), 1.0);
  EXPECT_DOUBLE_EQ(m.worst_case_rel_error(), std::sqrt(2.0) - 1.0);
}

TEST(WeightClassMap, NearestClassInLogSpace) {
  const WeightClassMap m;
  ClassMapping r = m.map(1.0);
  EXPECT_EQ(r.cls, 0u);
  EXPECT_DOUBLE_EQ(r.rel_error, 0.0);

  r = m.map(64.0);
  EXPECT_EQ(r.cls, 6u);
  EXPECT_EQ(r.class_weight, 64u);
  EXPECT_DOUBLE_EQ(r.rel_error, 0.0);

  // 5: |ln(5/4)| = 0.223 < |ln(8/5)| = 0.470 -> class 2 (4), error 4/5 - 1.
  r = m.map(5.0);
  EXPECT_EQ(r.cls, 2u);
  EXPECT_DOUBLE_EQ(r.mapped_weight, 4.0);
  EXPECT_DOUBLE_EQ(r.rel_error, -0.2);

  // 3: ln(4/3) = 0.288 < ln(3/2) = 0.405 -> class 2 (4), error +1/3
  // (3 lies halfway between 2 and 4 in linear space, nearer 4 in ratio).
  r = m.map(3.0);
  EXPECT_EQ(r.cls, 2u);
  EXPECT_DOUBLE_EQ(r.rel_error, 4.0 / 3.0 - 1.0);

  // Either side of the log-midpoint sqrt(2) = 1.41421 between 1 and 2.
  r = m.map(1.41);
  EXPECT_EQ(r.cls, 0u);
  EXPECT_DOUBLE_EQ(r.rel_error, 1.0 / 1.41 - 1.0);
  r = m.map(1.42);
  EXPECT_EQ(r.cls, 1u);
  EXPECT_DOUBLE_EQ(r.rel_error, 2.0 / 1.42 - 1.0);
}

TEST(WeightClassMap, OutOfRangeClampsWithLargeError) {
  const WeightClassMap m;
  ClassMapping r = m.map(1000.0);
  EXPECT_EQ(r.cls, 7u);
  EXPECT_DOUBLE_EQ(r.rel_error, 0.128 - 1.0);
  r = m.map(0.25);
  EXPECT_EQ(r.cls, 0u);
  EXPECT_DOUBLE_EQ(r.rel_error, 3.0);
}

TEST(WeightClassMap, UnitScalesTenantWeights) {
  // Class weight w stands for w * 0.5 Gb/s: 1 Gb/s -> class weight 2.
  const WeightClassMap m({1, 2, 4, 8, 16, 32, 64, 128}, 0.5);
  const ClassMapping r = m.map(1.0);
  EXPECT_EQ(r.cls, 1u);
  EXPECT_EQ(r.class_weight, 2u);
  EXPECT_DOUBLE_EQ(r.mapped_weight, 1.0);
  EXPECT_DOUBLE_EQ(r.rel_error, 0.0);
}

TEST(WeightClassMap, SpanningOneToTen) {
  // base = floor(4096 / 10) = 409, ratio = 10^(1/7) = 1.389495;
  // 409 * ratio^i = 409, 568.30, 789.66, 1097.22, 1524.59, 2118.41, 2943.51, 4090.
  const WeightClassMap m = WeightClassMap::spanning(1.0, 10.0);
  EXPECT_EQ(m.class_weights(), (WeightClassMap::Weights{409, 568, 790, 1097, 1525, 2118, 2944, 4090}));
  EXPECT_DOUBLE_EQ(m.unit(), 1.0 / 409);
  EXPECT_EQ(m.map(1.0).cls, 0u);
  EXPECT_DOUBLE_EQ(m.map(1.0).rel_error, 0.0);
  EXPECT_EQ(m.map(10.0).cls, 7u);
  EXPECT_NEAR(m.map(10.0).rel_error, 0.0, 1e-12);
  // 2 -> 790 (1.9315): error 790/818 - 1; 5 -> 2118 (5.1785): 2118/2045 - 1.
  EXPECT_EQ(m.map(2.0).cls, 2u);
  EXPECT_NEAR(m.map(2.0).rel_error, 790.0 / 818.0 - 1.0, 1e-12);
  EXPECT_EQ(m.map(5.0).cls, 5u);
  EXPECT_NEAR(m.map(5.0).rel_error, 2118.0 / 2045.0 - 1.0, 1e-12);
  // Worst case: the widest adjacent ratio, 790/568 = 1.39085: sqrt of it - 1.
  EXPECT_NEAR(m.worst_case_rel_error(), std::sqrt(790.0 / 568.0) - 1.0, 1e-12);
  EXPECT_LT(m.worst_case_rel_error(), 0.18);
}

TEST(WeightClassMap, ReportForThePaperPermutationTenants) {
  // §5: VFs of 1, 2 and 5 Gb/s, default classes, unit 1 Gb/s:
  // errors 0, 0, -0.2.
  const WeightClassMap m;
  const std::vector<double> w = {1, 2, 5, 5};
  const MappingReport r = m.report(w);
  EXPECT_EQ(r.tenants, 4u);
  EXPECT_DOUBLE_EQ(r.max_abs_rel_error, 0.2);
  EXPECT_DOUBLE_EQ(r.mean_abs_rel_error, 0.1);
  EXPECT_EQ(r.per_class[0], 1u);
  EXPECT_EQ(r.per_class[1], 1u);
  EXPECT_EQ(r.per_class[2], 2u);
  EXPECT_EQ(m.report({}).tenants, 0u);
  EXPECT_DOUBLE_EQ(m.report({}).mean_abs_rel_error, 0.0);
}

TEST(WeightClassMap, RejectsBadInput) {
  const WeightClassMap m;
  EXPECT_THROW(m.map(0.0), std::invalid_argument);
  EXPECT_THROW(m.map(-1.0), std::invalid_argument);
  EXPECT_THROW(m.map(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(m.map(std::numeric_limits<double>::infinity()), std::invalid_argument);
  using W = WeightClassMap::Weights;
  EXPECT_THROW(WeightClassMap(W{1, 2, 2, 8, 16, 32, 64, 128}, 1.0), std::invalid_argument);
  EXPECT_THROW(WeightClassMap(W{0, 2, 4, 8, 16, 32, 64, 128}, 1.0), std::invalid_argument);
  EXPECT_THROW(WeightClassMap(W{1, 2, 4, 8, 16, 32, 64, 5000}, 1.0), std::invalid_argument);
  EXPECT_THROW(WeightClassMap(W{1, 2, 4, 8, 16, 32, 64, 128}, 0.0), std::invalid_argument);
  EXPECT_THROW(WeightClassMap::spanning(2.0, 1.0), std::invalid_argument);
  EXPECT_THROW(WeightClassMap::spanning(1.0, 5000.0), std::invalid_argument);
}
