// ufab-edge's configuration on random and mutated input (issue 4 §6: an
// invalid config is rejected with the file, line and field). From one valid
// file that uses every section, fixed-seed mutations: a scalar replaced by a
// hostile value (a sign, 2^32, 2^64, 1e308, NaN, .inf, an empty string, a
// list, a map, a null, hex), a line deleted, duplicated or re-indented, a
// key of a flow map dropped, and random byte edits. Every text is either accepted or refused with a
// ConfigError "t.yaml:LINE:COL: field: what" whose line is one of the
// text's; no other exception escapes, and nothing crashes (under
// `deploy/ufab test --sanitize`, nothing reads out of bounds either).
// The same texts as reloads (pipeline/reload.cpp's diff_config, both ways
// against the valid file): each is applied, refused as invalid, or refused
// naming the field that needs a restart; no exception escapes (a key that
// only one text had threw yaml-cpp's InvalidNode out of the control lcore).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/reload.hpp"
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
    switch (below(7)) {
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
      case 5: {  // a key of a flow map dropped: ", key: value" (a file without an optional key)
        const size_t open = l.find('{');
        if (open == std::string::npos) break;
        std::vector<size_t> commas;
        for (size_t i = open; i < l.size(); ++i)
          if (l[i] == ',') commas.push_back(i);
        if (commas.empty()) break;
        const size_t i = commas[below(commas.size())];
        size_t j = i + 1;
        while (j < l.size() && l[j] != ',' && l[j] != '}') ++j;
        l.erase(i, j - i);
        break;
      }
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

// diff_config(running, next) with `next` written where running.file names.
std::string reload_error(const std::string& running, const std::string& next, const std::string& path,
                         std::vector<ufab::pipeline::TenantChange>& changes) {
  std::ofstream(path, std::ios::trunc) << next;
  const ufab::edge::EdgeConfig cfg = parse_config(running, path);
  std::vector<double> bps;
  std::vector<int> cls;
  for (const ufab::edge::TenantCfg& t : cfg.tenants) {
    bps.push_back(t.guarantee_bps);
    cls.push_back(t.weight_from_guarantee ? ufab::pipeline::TenantChange::kFromGuarantee : static_cast<int>(t.weight_class));
  }
  std::string text;
  ufab::pipeline::ReloadDiff d;  // with the file's hosts and remote VMs against the running ones: never throws
  const std::string err = ufab::pipeline::diff_config(cfg, running, bps, cls, text, d);
  changes = d.tenants;
  return err;
}

TEST(EdgeConfigFuzz, EveryTextIsAReloadAppliedOrRefused) {
  const std::string valid = join(kValid), path = ::testing::TempDir() + "fuzz_reload_" + std::to_string(getpid()) + ".yaml";
  int applied = 0, invalid = 0, restart = 0;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) {
    const std::string text = mutate(rng);
    std::vector<ufab::pipeline::TenantChange> changes;
    std::string err;
    try {
      err = reload_error(valid, text, path, changes);
    } catch (const std::exception& e) {
      FAIL() << "reload threw " << e.what() << " for\n" << text;
    }
    if (err.empty()) {
      ++applied;
      for (const auto& c : changes) ASSERT_TRUE(c.vni == 100 || c.vni == 200) << text;
    } else if (err.rfind("invalid configuration: " + path + ":", 0) == 0) {
      ++invalid;
    } else {
      ++restart;
      ASSERT_NE(err.find("needs a restart; nothing applied"), std::string::npos) << err << " for\n" << text;
      ASSERT_EQ(err.rfind(path, 0), 0u) << err;
      // And the other way: the edge runs the mutated file, the valid one comes back.
      changes.clear();
      try {
        const std::string back = reload_error(text, valid, path, changes);
        ASSERT_NE(back.find("needs a restart; nothing applied"), std::string::npos) << back << " for\n" << text;
      } catch (const std::exception& e) {
        FAIL() << "reload back threw " << e.what() << " for\n" << text;
      }
    }
  }
  std::remove(path.c_str());
  EXPECT_GT(applied, 50);
  EXPECT_GT(invalid, 1000);
  EXPECT_GT(restart, 50);
  std::printf("reloads: %d applied, %d refused as invalid, %d refused as needing a restart\n", applied, invalid, restart);
}

// Texts the fuzzing found: a key that is a list (yaml-cpp's "bad
// conversion", with no field, came out), a key with a NUL byte (the
// message ended at the NUL, before "unknown key"), a raw NUL byte (yaml-cpp
// ends the stream there: "must be a YAML mapping" with no line), and a
// document that is not a mapping.
TEST(EdgeConfigFuzz, KeysThatAreNotNamesAreNamedInTheMessage) {
  std::vector<std::string> lines = kValid;
  lines[13] = "  - {vni: 200, [], vlan: 20}";
  EXPECT_EQ(ufab::edge::testing::error_of(join(lines)), "t.yaml:14:16: tenants[1]: a key that is not a name");
  lines = kValid;
  lines[13] = std::string("  - {vni: 200, \"a\\x00b\": 1, vlan: 20}");
  EXPECT_EQ(ufab::edge::testing::error_of(join(lines)), "t.yaml:14:16: tenants[1].a\\x00b: unknown key");
  std::string text = join(kValid);
  text[0] = '\0';
  EXPECT_EQ(ufab::edge::testing::error_of(text), "t.yaml:1:1: (text): a NUL byte");
  text = join(kValid);
  text[text.find("vni: 200") + 5] = '\0';
  EXPECT_EQ(ufab::edge::testing::error_of(text), "t.yaml:14:11: (text): a NUL byte");
  EXPECT_EQ(ufab::edge::testing::error_of("- a\n- b\n"),
            "t.yaml:1:1: (top level): must be a mapping (edge:, params:, tenants:, vms:, hosts:, remote_vms:)");
  EXPECT_EQ(ufab::edge::testing::error_of(""),
            "t.yaml:1:1: (top level): must be a mapping (edge:, params:, tenants:, vms:, hosts:, remote_vms:)");
}

}  // namespace
