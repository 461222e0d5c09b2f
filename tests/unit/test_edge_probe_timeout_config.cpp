// ufab-edge configuration: params.probe_timeout_max_rtts, the cap of the
// doubling probe-loss timeout (edge/config.cpp, docs/design.md §14), and
// params.token_round_max_share and params.pair_poll_max_share (§15),
// params.sched_bypass (§16), params.classify_cache, and params.probe_on_window_full, whose default
// follows params.window_gating.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "edge/config.hpp"
#include "tests/unit/config_error.hpp"

namespace {

using ufab::edge::testing::error_of;
using ufab::edge::parse_config;

// params on line 2 of the file.
std::string config(const std::string& params) {
  return "edge: {fabric_port: 1, ip: 10.0.0.1, mac: \"02:00:00:00:00:01\"}\n"
         "params: {" + params + "}\n"
         "tenants:\n"
         "  - {vni: 100, guarantee_gbps: 1}\n"
         "vms:\n"
         "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:01:01\", ip: 192.168.0.1, port: 0}\n"
         "hosts:\n"
         "  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: 20, paths: [[1]]}\n"
         "remote_vms:\n"
         "  - {name: b1, id: 9, tenant: 100, ip: 192.168.0.2, host: hB}\n";
}

TEST(EdgeProbeTimeoutConfig, DefaultAndExplicitValues) {
  EXPECT_EQ(parse_config(config(""), "t.yaml").params.probe_timeout_max_rtts, 1024u);
  EXPECT_EQ(parse_config(config("probe_timeout_max_rtts: 64"), "t.yaml").params.probe_timeout_max_rtts, 64u);
  // Equal to probe_timeout_rtts: no doubling.
  const auto c = parse_config(config("probe_timeout_rtts: 400, probe_timeout_max_rtts: 400"), "t.yaml");
  EXPECT_EQ(c.params.probe_timeout_rtts, 400u);
  EXPECT_EQ(c.params.probe_timeout_max_rtts, 400u);
}

TEST(EdgeProbeTimeoutConfig, BadValuesNameFileLineAndField) {
  const std::string below = error_of(config("probe_timeout_rtts: 16, probe_timeout_max_rtts: 8"));
  EXPECT_NE(below.find("t.yaml:2:"), std::string::npos) << below;
  EXPECT_NE(below.find("params.probe_timeout_max_rtts: must be >= probe_timeout_rtts (16)"), std::string::npos) << below;
  // The order of the keys does not matter.
  const std::string below2 = error_of(config("probe_timeout_max_rtts: 8, probe_timeout_rtts: 16"));
  EXPECT_NE(below2.find("params.probe_timeout_max_rtts: must be >= probe_timeout_rtts (16)"), std::string::npos) << below2;
  for (const char* bad : {"probe_timeout_max_rtts: 0", "probe_timeout_max_rtts: 1000001", "probe_timeout_max_rtts: -3",
                          "probe_timeout_max_rtts: lots"}) {
    const std::string e = error_of(config(bad));
    EXPECT_NE(e.find("t.yaml:2:"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("params.probe_timeout_max_rtts"), std::string::npos) << bad << ": " << e;
  }
}

// params.KEY: each bad value is refused with the file, line and field.
void expect_rejected(const std::string& key, std::initializer_list<const char*> bad_values) {
  for (const char* v : bad_values) {
    const std::string line = key + ": " + v;
    const std::string e = error_of(config(line));
    EXPECT_NE(e.find("t.yaml:2:"), std::string::npos) << line << ": " << e;
    EXPECT_NE(e.find("params." + key), std::string::npos) << line << ": " << e;
  }
}

// params.token_round_max_share (pipeline/worker.cpp, docs/design.md §15).
TEST(EdgeTokenRoundShareConfig, DefaultExplicitAndBadValues) {
  EXPECT_DOUBLE_EQ(parse_config(config(""), "t.yaml").token_round_max_share, 0.25);
  EXPECT_DOUBLE_EQ(parse_config(config("token_round_max_share: 1"), "t.yaml").token_round_max_share, 1.0);
  expect_rejected("token_round_max_share", {"0", "1.5", "half"});
}

// params.pair_poll_max_share (pipeline/worker.cpp, docs/design.md §15).
TEST(EdgePairPollShareConfig, DefaultExplicitAndBadValues) {
  EXPECT_DOUBLE_EQ(parse_config(config(""), "t.yaml").pair_poll_max_share, 0.25);
  EXPECT_DOUBLE_EQ(parse_config(config("pair_poll_max_share: 0.5"), "t.yaml").pair_poll_max_share, 0.5);
  EXPECT_DOUBLE_EQ(parse_config(config("pair_poll_max_share: 1"), "t.yaml").pair_poll_max_share, 1.0);
  expect_rejected("pair_poll_max_share", {"0", "1.01", "most"});
}

// params.sched_bypass (pipeline/vm_rx.cpp, docs/design.md §16).
TEST(EdgeSchedBypassConfig, DefaultExplicitAndBadValues) {
  EXPECT_TRUE(parse_config(config(""), "t.yaml").sched_bypass);
  EXPECT_FALSE(parse_config(config("sched_bypass: false"), "t.yaml").sched_bypass);
  expect_rejected("sched_bypass", {"maybe", "2"});
}

// params.classify_cache (pipeline/classify_cache.hpp).
TEST(EdgeClassifyCacheConfig, DefaultExplicitAndBadValues) {
  EXPECT_TRUE(parse_config(config(""), "t.yaml").classify_cache);
  EXPECT_FALSE(parse_config(config("classify_cache: false"), "t.yaml").classify_cache);
  expect_rejected("classify_cache", {"sometimes", "3"});
}

// params.probe_on_window_full: true by default; with window_gating off no
// window holds a pair, so the default is then false (the §4.1 rule alone);
// an explicit value wins either way, in either key order.
TEST(EdgeProbeOnWindowFullConfig, DefaultFollowsWindowGating) {
  EXPECT_TRUE(parse_config(config(""), "t.yaml").params.probe_on_window_full);
  EXPECT_FALSE(parse_config(config("window_gating: false"), "t.yaml").params.probe_on_window_full);
  EXPECT_TRUE(parse_config(config("window_gating: false, probe_on_window_full: true"), "t.yaml").params.probe_on_window_full);
  EXPECT_TRUE(parse_config(config("probe_on_window_full: true, window_gating: false"), "t.yaml").params.probe_on_window_full);
  EXPECT_FALSE(parse_config(config("probe_on_window_full: false"), "t.yaml").params.probe_on_window_full);
  const std::string e = error_of(config("probe_on_window_full: often"));
  EXPECT_NE(e.find("t.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("params.probe_on_window_full"), std::string::npos) << e;
}

}  // namespace
