// ufab-edge's application options (edge/options.cpp): defaults, the values
// given, and the errors that name the option and the value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edge/options.hpp"
#include "tests/unit/option_words.hpp"

namespace {

using ufab::edge::EdgeOptions;
using ufab::edge::OptionError;

EdgeOptions parse(std::vector<std::string> args) {
  return ufab::testing::parse_words(ufab::edge::parse_options, "ufab-edge", std::move(args));
}

std::string error_of(std::vector<std::string> args) {
  return ufab::testing::error_of_words<OptionError>(ufab::edge::parse_options, "ufab-edge", std::move(args));
}

TEST(EdgeOptions, Defaults) {
  const EdgeOptions o = parse({"--config", "e.yaml"});
  EXPECT_EQ(o.config, "e.yaml");
  EXPECT_EQ(o.idle_nap_us, 50u);
  EXPECT_EQ(o.queued_nap_us, 5u);
  EXPECT_EQ(o.stop_timeout_ms, 1000u);
  EXPECT_TRUE(o.rx_queue_per_worker);
  EXPECT_FALSE(o.help);
}

TEST(EdgeOptions, NapsTakeZeroAndTheMaximum) {
  const EdgeOptions busy = parse({"--config", "e.yaml", "--idle-nap-us", "0", "--queued-nap-us", "0"});
  EXPECT_EQ(busy.idle_nap_us, 0u);
  EXPECT_EQ(busy.queued_nap_us, 0u);
  const EdgeOptions shared = parse({"--config", "e.yaml", "--idle-nap-us", "100000", "--queued-nap-us", "200"});
  EXPECT_EQ(shared.idle_nap_us, ufab::edge::kMaxNapUs);
  EXPECT_EQ(shared.queued_nap_us, 200u);
}

TEST(EdgeOptions, BadNapsNameTheOptionAndValue) {
  EXPECT_EQ(error_of({"--config", "e.yaml", "--idle-nap-us", "100001"}),
            "--idle-nap-us: '100001' is not an integer in [0, 100000]");
  EXPECT_EQ(error_of({"--config", "e.yaml", "--queued-nap-us", "-1"}),
            "--queued-nap-us: '-1' is not an integer in [0, 100000]");
  EXPECT_EQ(error_of({"--config", "e.yaml", "--queued-nap-us", "5us"}),
            "--queued-nap-us: '5us' is not an integer in [0, 100000]");
  EXPECT_EQ(error_of({"--config", "e.yaml", "--idle-nap-us"}), "--idle-nap-us: needs a value");
}

TEST(EdgeOptions, OtherErrors) {
  EXPECT_EQ(error_of({}), "--config FILE is required (see --help)");
  EXPECT_EQ(error_of({"--config", "e.yaml", "--workers", "0"}), "--workers: '0' is not an integer in [1, 127]");
  EXPECT_EQ(error_of({"--config", "e.yaml", "--rx-queues", "two"}), "--rx-queues: 'two' is not auto or one");
  EXPECT_EQ(error_of({"--config", "e.yaml", "--nap"}), "unknown option '--nap' (see --help)");
  EXPECT_EQ(error_of({"--config", "e.yaml", "--workers", "1", "--lcore-map", "0:1"}),
            "--workers and --lcore-map: give one of them");
  EXPECT_TRUE(parse({"--help"}).help);
}

TEST(EdgeOptions, HelpDocumentsEveryOption) {
  const std::string u = ufab::edge::usage();
  for (const char* opt : {"--config", "--stats-interval", "--exit-after-idle-ms", "--workers", "--lcore-map",
                          "--stop-timeout-ms", "--rx-queues", "--idle-nap-us", "--queued-nap-us", "--help"})
    EXPECT_NE(u.find(opt), std::string::npos) << opt;
}

}  // namespace
