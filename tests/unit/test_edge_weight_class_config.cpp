// ufab-edge's tenant weight classes (§4.1 "Scaling to a large number of
// VFs", design-notes §4.7): a tenant without weight_class (or with auto)
// gets the class nearest its guarantee in log space, class c standing for
// 2^c units (params.weight_unit_gbps, default the smallest such guarantee);
// the start-up line reports the mapping error; a reload may change a class
// (pipeline/reload.cpp). Every expected class and error is worked by hand.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/reload.hpp"
#include "tests/unit/config_error.hpp"

namespace {

using ufab::edge::EdgeConfig;
using ufab::edge::parse_config;
using ufab::edge::testing::error_of;
using ufab::pipeline::TenantChange;

// Tenants of one local VM, a1 of tenant 100.
std::string config(const std::string& params, const std::string& tenants) {
  return ufab::edge::testing::small_config(
      params, tenants, "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n");
}

const std::string kTenants =
    "  - {vni: 100, guarantee_gbps: 1}\n"
    "  - {vni: 200, guarantee_gbps: 2, weight_class: auto}\n"
    "  - {vni: 300, guarantee_gbps: 3}\n"
    "  - {vni: 400, guarantee_gbps: 4, weight_class: 6}\n"
    "  - {vni: 500, guarantee_gbps: 0.5}\n";

TEST(EdgeWeightClass, FromTheGuaranteeAgainstTheSmallestOne) {
  const EdgeConfig c = parse_config(config("  seed: 1\n", kTenants), "t.yaml");
  // Unit: the smallest guarantee whose class follows it, 0.5 Gb/s (tenant
  // 400's 4 is given a class and does not count).
  EXPECT_DOUBLE_EQ(c.weight_unit_bps(), 0.5e9);
  // 1 / 0.5 = 2 units: class 1; 4 units: class 2; 1 unit: class 0.
  EXPECT_EQ(c.tenants[0].weight_class, 1u);
  EXPECT_EQ(c.tenants[1].weight_class, 2u);
  EXPECT_EQ(c.tenants[4].weight_class, 0u);
  // 6 units lies above the log-midpoint of 4 and 8 (sqrt(32) = 5.66): class
  // 3, weight 8 for 6, error 8/6 - 1 = +1/3.
  EXPECT_EQ(c.tenants[2].weight_class, 3u);
  EXPECT_NEAR(c.weight_class_of(3e9).rel_error, 1.0 / 3, 1e-12);
  EXPECT_TRUE(c.tenants[2].weight_from_guarantee);
  // Given: kept, whatever the guarantee.
  EXPECT_EQ(c.tenants[3].weight_class, 6u);
  EXPECT_FALSE(c.tenants[3].weight_from_guarantee);
  EXPECT_EQ(weight_classes_line(c),
            "weight classes: 4 tenant(s) from their guarantee (class c stands for 2^c x 0.5 Gb/s), largest error "
            "+33.3% (tenant 300: 3 Gb/s in class 3), 1 given in the file");
}

TEST(EdgeWeightClass, AGivenUnitAndGuaranteesOutsideTheRange) {
  const EdgeConfig c = parse_config(
      config("  weight_unit_gbps: 1\n",
             "  - {vni: 100, guarantee_gbps: 1}\n  - {vni: 200, guarantee_gbps: 0.25}\n"
             "  - {vni: 300, guarantee_gbps: 200}\n  - {vni: 400, guarantee_gbps: 0}\n"
             "  - {vni: 500, guarantee_gbps: 2.8}\n"),
      "t.yaml");
  EXPECT_DOUBLE_EQ(c.weight_unit_bps(), 1e9);
  EXPECT_EQ(c.tenants[0].weight_class, 0u);
  // 0.25 units: below class 0, which stands for 1: error 1/0.25 - 1 = +300%.
  EXPECT_EQ(c.tenants[1].weight_class, 0u);
  EXPECT_NEAR(c.weight_class_of(0.25e9).rel_error, 3.0, 1e-12);
  // 200 units: above class 7 (128): error 128/200 - 1 = -36%, within the
  // 41.4% that a guarantee inside the range can have.
  EXPECT_EQ(c.tenants[2].weight_class, 7u);
  EXPECT_NEAR(c.weight_class_of(200e9).rel_error, -0.36, 1e-12);
  // No guarantee: class 0, an infinite error.
  EXPECT_EQ(c.tenants[3].weight_class, 0u);
  EXPECT_TRUE(std::isinf(c.weight_class_of(0).rel_error));
  // 2.8 lies below sqrt(8) = 2.83: class 1 (2), error 2/2.8 - 1.
  EXPECT_EQ(c.tenants[4].weight_class, 1u);
  EXPECT_EQ(weight_classes_line(c),
            "weight classes: 5 tenant(s) from their guarantee (class c stands for 2^c x 1 Gb/s), largest error "
            "+inf% (tenant 400: 0 Gb/s in class 0), 2 with more than the 41.4% error of a guarantee within the "
            "classes' range, 0 given in the file");
}

TEST(EdgeWeightClass, EveryGuaranteeOfTheSameSizeIsClassZero) {
  const EdgeConfig c = parse_config(config("  seed: 1\n", "  - {vni: 100, guarantee_gbps: 2}\n  - {vni: 200, guarantee_gbps: 2}\n"), "t.yaml");
  EXPECT_DOUBLE_EQ(c.weight_unit_bps(), 2e9);
  EXPECT_EQ(c.tenants[0].weight_class, 0u);
  EXPECT_EQ(c.tenants[1].weight_class, 0u);
}

TEST(EdgeWeightClass, ClassesSpreadOverASpan) {
  // [1, 10] Gb/s: base = floor(4096 / 10) = 409, ratio 10^(1/7); weights
  // round(409 * 10^(i/7)): 409, 568, 790, 1097, 1525, 2118, 2944, 4090, each
  // standing for weight / 409 Gb/s.
  const EdgeConfig c = parse_config(
      config("  weight_span_gbps: [1, 10]\n",
             "  - {vni: 100, guarantee_gbps: 1}\n  - {vni: 200, guarantee_gbps: 3}\n  - {vni: 300, guarantee_gbps: 10}\n"
             "  - {vni: 400, guarantee_gbps: 5}\n  - {vni: 500, guarantee_gbps: 2, weight_class: 6}\n"),
      "t.yaml");
  const ufab::WeightClassMap::Weights want = {409, 568, 790, 1097, 1525, 2118, 2944, 4090};
  EXPECT_EQ(c.weight_classes.class_weights(), want);
  EXPECT_TRUE(c.weight_span);
  EXPECT_DOUBLE_EQ(c.weight_unit_bps(), 1e9);
  EXPECT_EQ(c.tenants[0].weight_class, 0u);
  // 3 Gb/s = 1227 / 409: below sqrt(1097 * 1525) = 1293, class 3; error
  // 1097 / 1227 - 1 = -10.6%.
  EXPECT_EQ(c.tenants[1].weight_class, 3u);
  EXPECT_NEAR(c.weight_class_of(3e9).rel_error, 1097.0 / 1227 - 1, 1e-12);
  EXPECT_EQ(c.tenants[2].weight_class, 7u);
  // 5 Gb/s = 2045: above sqrt(1525 * 2118) = 1797, class 5, error +3.6%.
  EXPECT_EQ(c.tenants[3].weight_class, 5u);
  EXPECT_EQ(c.tenants[4].weight_class, 6u);
  EXPECT_EQ(weight_classes_line(c),
            "weight classes: 4 tenant(s) from their guarantee (the classes spread over 1..10 Gb/s, weights 409..4090), "
            "largest error -10.6% (tenant 200: 3 Gb/s in class 3), 1 given in the file");
  // Within the span the error stays below 17.9%, from the widest step after
  // rounding, 790 / 568 (vs 41.4% for powers of two).
  EXPECT_NEAR(c.weight_classes.worst_case_rel_error(), std::sqrt(790.0 / 568) - 1, 1e-12);
}

TEST(EdgeWeightClass, BadValuesNameFileLineAndField) {
  EXPECT_EQ(error_of(config("  seed: 1\n", "  - {vni: 100, guarantee_gbps: 1, weight_class: 8}\n")),
            "t.yaml:5:49: tenants[0].weight_class: '8' is out of range [0, 7]");
  EXPECT_EQ(error_of(config("  seed: 1\n", "  - {vni: 100, guarantee_gbps: 1, weight_class: fast}\n")),
            "t.yaml:5:49: tenants[0].weight_class: 'fast' is not a class 0..7 or auto");
  EXPECT_EQ(error_of(config("  seed: 1\n", "  - {vni: 100, guarantee_gbps: 1, weight_class: -1}\n")),
            "t.yaml:5:49: tenants[0].weight_class: '-1' is not a class 0..7 or auto");
  EXPECT_EQ(error_of(config("  weight_unit_gbps: 0\n", "  - {vni: 100, guarantee_gbps: 1}\n")),
            "t.yaml:3:21: params.weight_unit_gbps: '0' is out of range [1e-06, 10000]");
  const std::string one = "  - {vni: 100, guarantee_gbps: 1}\n";
  EXPECT_EQ(error_of(config("  weight_span_gbps: 10\n", one)), "t.yaml:3:21: params.weight_span_gbps: must be [lo, hi] in Gb/s");
  EXPECT_EQ(error_of(config("  weight_span_gbps: [10, 1]\n", one)),
            "t.yaml:3:21: params.weight_span_gbps: needs lo < hi <= 4096 x lo");
  EXPECT_EQ(error_of(config("  weight_span_gbps: [1, 5000]\n", one)),
            "t.yaml:3:21: params.weight_span_gbps: needs lo < hi <= 4096 x lo");
  EXPECT_EQ(error_of(config("  weight_span_gbps: [0, 1]\n", one)),
            "t.yaml:3:22: params.weight_span_gbps[0]: '0' is out of range [1e-06, 10000]");
  EXPECT_EQ(error_of(config("  weight_unit_gbps: 1\n  weight_span_gbps: [1, 10]\n", one)),
            "t.yaml:4:21: params.weight_span_gbps: give weight_unit_gbps or weight_span_gbps, not both");
}

// diff_config against a file on disk: the running text, the live values.
struct Reload {
  std::string error;
  std::vector<TenantChange> changes;
};

Reload reload(const std::string& running, const std::string& next, const std::vector<double>& live_bps,
              const std::vector<int>& live_class) {
  const std::string path = ::testing::TempDir() + "wc_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << next;
  EdgeConfig cfg = parse_config(running, path);
  Reload r;
  std::string text;
  ufab::pipeline::ReloadDiff d;
  r.error = ufab::pipeline::diff_config(cfg, running, live_bps, live_class, text, d);
  r.changes = d.tenants;
  std::remove(path.c_str());
  return r;
}

TEST(EdgeWeightClass, AReloadMayChangeAClass) {
  const std::string two = "  - {vni: 100, guarantee_gbps: 1}\n  - {vni: 200, guarantee_gbps: 2, weight_class: 5}\n";
  const std::string running = config("  seed: 1\n", two);
  constexpr int kAuto = TenantChange::kFromGuarantee;
  // Unchanged: nothing to apply.
  Reload r = reload(running, running, {1e9, 2e9}, {kAuto, 5});
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.changes.empty());
  // auto -> 3 and 5 -> auto ("weight_class: auto" and no key are the same).
  r = reload(running,
             config("  seed: 1\n", "  - {vni: 100, guarantee_gbps: 1, weight_class: 3}\n"
                                   "  - {vni: 200, guarantee_gbps: 2, weight_class: auto}\n"),
             {1e9, 2e9}, {kAuto, 5});
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.changes.size(), 2u);
  EXPECT_EQ(r.changes[0].vni, 100u);
  EXPECT_EQ(r.changes[0].old_class, kAuto);
  EXPECT_EQ(r.changes[0].new_class, 3);
  EXPECT_EQ(r.changes[0].old_bps, r.changes[0].new_bps);
  EXPECT_EQ(r.changes[1].vni, 200u);
  EXPECT_EQ(r.changes[1].old_class, 5);
  EXPECT_EQ(r.changes[1].new_class, kAuto);
  // The file as it started, against live values changed by telemetry
  // (tenant_class 100 -> 2): the file's class comes back.
  r = reload(running, running, {1e9, 2e9}, {2, 5});
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].old_class, 2);
  EXPECT_EQ(r.changes[0].new_class, kAuto);
  // A VLAN given to a tenant is a re-tag (pipeline/tenants.hpp), not a
  // class or guarantee change.
  r = reload(running, config("  seed: 1\n", "  - {vni: 100, guarantee_gbps: 1, vlan: 5}\n  - {vni: 200, guarantee_gbps: 2, weight_class: 5}\n"),
             {1e9, 2e9}, {kAuto, 5});
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.changes.empty());
  // Still refused: the unit (params): a key only one text has is a change
  // too (it threw yaml-cpp's InvalidNode out of the control lcore before).
  r = reload(running, config("  seed: 1\n  weight_unit_gbps: 1\n", two), {1e9, 2e9}, {kAuto, 5});
  EXPECT_NE(r.error.find(": params: changed, needs a restart"), std::string::npos) << r.error;
  std::string no_params = running;
  no_params.erase(no_params.find("params:\n"), std::string("params:\n  seed: 1\n").size());
  r = reload(no_params, running, {1e9, 2e9}, {kAuto, 5});
  EXPECT_NE(r.error.find(".yaml:3:3: params: changed, needs a restart"), std::string::npos) << r.error;
  r = reload(running, no_params, {1e9, 2e9}, {kAuto, 5});
  EXPECT_NE(r.error.find(".yaml: params: changed, needs a restart"), std::string::npos) << r.error;
  // An invalid class: refused with its place.
  r = reload(running, config("  seed: 1\n", "  - {vni: 100, guarantee_gbps: 1, weight_class: 9}\n  - {vni: 200, guarantee_gbps: 2}\n"),
             {1e9, 2e9}, {kAuto, 5});
  EXPECT_NE(r.error.find("invalid configuration: "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(":5:49: tenants[0].weight_class: '9' is out of range [0, 7] (nothing applied)"), std::string::npos)
      << r.error;
}

}  // namespace
