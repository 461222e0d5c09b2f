// ufab-edge's configuration on random and mutated input (issue 4 §6: an
// invalid config is rejected with the file, line and field). From one valid
// file that uses every section, fixed-seed mutations: a scalar replaced by a
// hostile value (a sign, 2^32, 2^64, 1e308, NaN, .inf, an empty string, a
// list, a map, a null, hex), a line deleted, duplicated or re-indented, and
// random byte edits. Every text is either accepted or refused with a
// ConfigError "t.yaml:LINE:COL: field: what" whose line is one of the
// text's; no other exception escapes, and nothing crashes (under
// `deploy/ufab test --sanitize`, nothing reads out of bounds either).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "tests/unit/config_error.hpp"

namespace {

using ufab::edge::ConfigError;
using ufab::edge::parse_config;

const std::vector<std::string> kValid = {
    "edge:",
    "  fabric_port: 1",
    "  ip: 10.0.0.1",
    "  mac: 02:00:00:00:00:01",
    "params:",
    "  eta: 0.95",
    "  unit_bw_gbps: 1",
    "  queue_capacity: 64",
    "  flows_per_pair: 4",
    "  probe_every_bytes: 4096",
    "  window_gating: true",
    "tenants:",
    "  - {vni: 100, guarantee_gbps: 2, weight_class: 3}",
    "  - {vni: 200, guarantee_gbps: 1, vlan: 20}",
    "vms:",
    "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}",
    "  - {name: a2, id: 2, tenant: 200, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.2, port: 0}",
    "hosts:",
    "  - name: hB",
    "    ip: 10.0.0.2",
    "    mac: 02:00:00:00:00:02",
    "    base_rtt_us: 20",
    "    paths: [[1, 2], [3, 4]]",
    "    reply_path: [0]",
    "remote_vms:",
    "  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.1, host: hB}",
    "  - {name: c1, id: 12, tenant: 200, ip: 192.168.1.2, host: hB}",
};

const std::vector<std::string> kHostile = {
    "-1", "0", "4294967296", "18446744073709551616", "99999999999999999999999", "1e308", "-1e308", "1e-320",
    "nan", ".nan", ".inf", "-.inf", "\"\"", "[]", "{}", "~", "0x10", "[1, [2, [3]]]", "{a: b}", "true",
    "\"\\xff\\x00\"", "&a 1", "*a", "!!binary AAAA", "'", "\"", "- x", "? [a, b]"};

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

// A mutation of the valid file: one to three edits.
std::string mutate(std::mt19937_64& rng) {
  const auto below = [&rng](uint64_t n) { return rng() % n; };
  std::vector<std::string> lines = kValid;
  for (uint64_t e = 1 + below(3); e > 0; --e) {
    if (lines.empty()) break;
    std::string& l = lines[below(lines.size())];
    switch (below(6)) {
      case 0:
      case 1: {  // a hostile scalar after some ':' (or in a flow list)
        std::vector<size_t> at;
        for (size_t i = 0; i < l.size(); ++i)
          if (l[i] == ':' || l[i] == '[' || l[i] == ',') at.push_back(i);
        if (at.empty()) break;
        const size_t i = at[below(at.size())] + 1;
        size_t j = i;
        while (j < l.size() && l[j] != ',' && l[j] != '}' && l[j] != ']') ++j;
        l = l.substr(0, i) + " " + kHostile[below(kHostile.size())] + l.substr(j);
        break;
      }
      case 2: lines.erase(lines.begin() + static_cast<ptrdiff_t>(&l - lines.data())); break;
      case 3: lines.insert(lines.begin() + static_cast<ptrdiff_t>(&l - lines.data()), l); break;
      case 4: l = (below(2) ? "  " : "") + l.substr(l.size() >= 2 && below(2) ? 2 : 0); break;
      default:  // random bytes
        for (uint64_t k = 1 + below(3); k > 0 && !l.empty(); --k) l[below(l.size())] = static_cast<char>(rng());
    }
  }
  return join(lines);
}

TEST(EdgeConfigFuzz, EveryTextIsAcceptedOrRefusedWithItsLineAndField) {
  ASSERT_NO_THROW(parse_config(join(kValid), "t.yaml"));
  const std::regex where(R"(^t\.yaml:(\d+):(\d+): [^ ].*: .+)");
  int accepted = 0, refused = 0;
  for (const uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 4000; ++i) {
      const std::string text = mutate(rng);
      size_t n_lines = 0;
      for (const char c : text) n_lines += c == '\n';
      try {
        parse_config(text, "t.yaml");
        ++accepted;
      } catch (const ConfigError& e) {
        ++refused;
        std::smatch m;
        const std::string msg = e.what();
        ASSERT_TRUE(std::regex_search(msg, m, where)) << "no file:line:col: field: what in '" << msg << "' for\n"
                                                       << text;
        const unsigned long line = std::stoul(m[1]);
        ASSERT_TRUE(line >= 1 && line <= n_lines + 1) << "line " << line << " of " << n_lines << ": " << msg;
      } catch (const std::exception& e) {
        FAIL() << "not a ConfigError: " << e.what() << " for\n" << text;
      }
    }
  }
  // Both sides reached (the mutations keep some files valid).
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 5000);
  std::printf("%d texts accepted, %d refused with file:line:col: field\n", accepted, refused);
}

// Two texts the fuzzing found: a key that is a list (yaml-cpp's "bad
// conversion", with no field, came out), and a key with a NUL byte (the
// message ended at the NUL, before "unknown key").
TEST(EdgeConfigFuzz, KeysThatAreNotNamesAreNamedInTheMessage) {
  std::vector<std::string> lines = kValid;
  lines[13] = "  - {vni: 200, [], vlan: 20}";
  EXPECT_EQ(ufab::edge::testing::error_of(join(lines)), "t.yaml:14:16: tenants[1]: a key that is not a name");
  lines = kValid;
  lines[13] = std::string("  - {vni: 200, \"a\\x00b\": 1, vlan: 20}");
  EXPECT_EQ(ufab::edge::testing::error_of(join(lines)), "t.yaml:14:16: tenants[1].a\\x00b: unknown key");
}

}  // namespace
