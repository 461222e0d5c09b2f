// ufab-core's application options (p4/softswitch/options.cpp): the idle
// loop's naps (defaults, 0, the maximum, errors naming the option and the
// value), a few other values, and --help naming every option.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "p4/softswitch/options.hpp"
#include "tests/unit/option_words.hpp"

namespace {

using ufab::core::CoreOptions;
using ufab::core::OptionError;

CoreOptions parse(std::vector<std::string> args) {
  return ufab::testing::parse_words(ufab::core::parse_options, "ufab-core", std::move(args));
}

std::string error_of(std::vector<std::string> args) {
  return ufab::testing::error_of_words<OptionError>(ufab::core::parse_options, "ufab-core", std::move(args));
}

TEST(CoreOptions, Defaults) {
  const CoreOptions o = parse({});
  EXPECT_EQ(o.idle_nap_us, 50u);
  EXPECT_EQ(o.min_nap_us, 20u);
  EXPECT_EQ(o.burst, 32u);
  EXPECT_EQ(o.port_caps_bps, std::vector<uint64_t>{10'000'000'000ull});
  EXPECT_FALSE(o.help);
}

TEST(CoreOptions, NapsTakeZeroAndTheMaximum) {
  const CoreOptions busy = parse({"--idle-nap-us", "0", "--min-nap-us", "0"});
  EXPECT_EQ(busy.idle_nap_us, 0u);
  EXPECT_EQ(busy.min_nap_us, 0u);
  const CoreOptions shared = parse({"--idle-nap-us", "100000", "--min-nap-us", "200"});
  EXPECT_EQ(shared.idle_nap_us, CoreOptions::kMaxNapUs);
  EXPECT_EQ(shared.min_nap_us, 200u);
}

TEST(CoreOptions, BadNapsNameTheOptionAndValue) {
  EXPECT_EQ(error_of({"--idle-nap-us", "100001"}), "--idle-nap-us: '100001' is out of range [0, 100000]");
  EXPECT_EQ(error_of({"--min-nap-us", "-1"}), "--min-nap-us: '-1' is not a non-negative integer");
  EXPECT_EQ(error_of({"--min-nap-us", "20us"}), "--min-nap-us: '20us' is not a non-negative integer");
  EXPECT_EQ(error_of({"--idle-nap-us"}), "--idle-nap-us: needs a value");
  EXPECT_EQ(error_of({"--nap"}), "unknown option '--nap' (see --help)");
}

TEST(CoreOptions, HelpDocumentsEveryOption) {
  const std::string u = ufab::core::usage();
  for (const char* opt : {"--port-caps", "--delay-us", "--queue-bytes", "--aging-s", "--tx-shift", "--stats-interval",
                          "--burst", "--mbufs", "--route", "--down-ports", "--event", "--t0-ns", "--watch-links",
                          "--queue-log", "--capture", "--burst-us", "--link-wait-ms", "--sample-ms", "--fake-clock",
                          "--exit-after-idle-ms", "--idle-nap-us", "--min-nap-us", "--help"})
    EXPECT_NE(u.find(opt), std::string::npos) << opt;
}

}  // namespace
