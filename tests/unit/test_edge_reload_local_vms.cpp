// A reload's local VMs (pipeline/reload.cpp, diff_local; applied by
// pipeline/local_vms.cpp): the file's against the running ones, matched by
// VM id. Added, removed, and changed with the exact fields that differ
// (name, tenant, MAC, addresses, port); a running entry marked removed
// counts as gone; the file's order does not matter; each entry added or
// changed carries where the file has it (file:line:col: vms[i]); a VM that
// moves between the local and remote lists shows in both diffs; a local
// VM's tags are its tenant's, whose change still needs a restart.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/reload.hpp"

namespace {

using ufab::edge::EdgeConfig;
using ufab::edge::parse_config;
using ufab::pipeline::VmChange;
using Kind = VmChange::Kind;

// Tenants 100 and 200, host hB, remote VM b1, and `locals` (lines under vms:).
std::string config(const std::string& locals, const std::string& remotes = "", const std::string& tenant_100 = "") {
  return "edge: {fabric_port: 1, ip: 10.0.0.1, mac: \"02:00:00:00:00:01\"}\n"
         "tenants:\n"
         "  - {vni: 100, guarantee_gbps: 1" + tenant_100 + "}\n"
         "  - {vni: 200, guarantee_gbps: 1}\n"
         "vms:\n" + locals +
         "hosts:\n"
         "  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: 20, paths: [[1]]}\n"
         "remote_vms:\n"
         "  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.1, host: hB}\n" + remotes;
}

const std::string kA1 = "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n";
const std::string kA2 = "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.2, port: 0}\n";
const std::string kA3 = "  - {name: a3, id: 3, tenant: 200, mac: \"02:00:00:00:0a:03\", ip: 192.168.0.3, ip6: \"fd00::3\", port: 2}\n";

struct Diff {
  std::string error, path;
  ufab::pipeline::ReloadDiff d;
};

// diff_config of the running text (with `removed` local VMs marked removed)
// against `next` on disk.
Diff reload(const std::string& running, const std::string& next, const std::vector<size_t>& removed = {}) {
  Diff out;
  out.path = ::testing::TempDir() + "lv_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(out.path, std::ios::trunc) << next;
  EdgeConfig cfg = parse_config(running, out.path);
  for (const size_t v : removed) cfg.vms[v].removed = true;
  std::vector<double> bps;
  std::vector<int> cls;
  for (const auto& t : cfg.tenants) {
    bps.push_back(t.guarantee_bps);
    cls.push_back(ufab::pipeline::TenantChange::kFromGuarantee);
  }
  std::string text;
  out.error = ufab::pipeline::diff_config(cfg, running, bps, cls, text, out.d);
  std::remove(out.path.c_str());
  return out;
}

TEST(ReloadLocalVms, NothingChangedIsNoChange) {
  const Diff r = reload(config(kA1 + kA2), config(kA2 + kA1));  // order does not matter
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.d.empty());
}

TEST(ReloadLocalVms, AddedAndRemovedById) {
  const Diff r = reload(config(kA1 + kA2), config(kA1 + kA3));
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.d.local_vms.size(), 2u);
  EXPECT_EQ(r.d.local_vms[0].kind, Kind::removed);
  EXPECT_EQ(r.d.local_vms[0].running, 1u);
  EXPECT_EQ(r.d.local_vms[0].vm.name, "a2");
  EXPECT_EQ(r.d.local_vms[1].kind, Kind::added);
  EXPECT_EQ(r.d.local_vms[1].vm.name, "a3");
  EXPECT_EQ(r.d.local_vms[1].vm.port, 2u);
  EXPECT_EQ(r.d.local_vms[1].vm.vni, 200u);
  // vms: is line 5, a1 line 6, a3 line 7.
  EXPECT_EQ(r.d.local_vms[1].at, r.path + ":7:5: vms[1]");
  EXPECT_TRUE(r.d.vms.empty());
  EXPECT_TRUE(r.d.hosts.empty());
}

TEST(ReloadLocalVms, ChangedFieldsNamedExactly) {
  const std::string moved =
      "  - {name: a2x, id: 2, tenant: 200, mac: \"02:00:00:00:0a:09\", ip: 192.168.0.9, ip6: \"fd00::9\", port: 3}\n";
  const Diff r = reload(config(kA1 + kA2), config(kA1 + moved));
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.d.local_vms.size(), 1u);
  const VmChange& ch = r.d.local_vms[0];
  EXPECT_EQ(ch.kind, Kind::changed);
  EXPECT_EQ(ch.running, 1u);
  EXPECT_EQ(ch.fields,
            "name a2 -> a2x, tenant 100 -> 200, mac 02:00:00:00:0a:02 -> 02:00:00:00:0a:09, ip 192.168.0.2 -> "
            "192.168.0.9, ip6 none -> fd00::9, port 0 -> 3");
  EXPECT_EQ(ch.vm.port, 3u);
  EXPECT_EQ(ch.at, r.path + ":7:5: vms[1]");
}

TEST(ReloadLocalVms, RemovedEntryCountsAsGone) {
  // a2's entry was removed by an earlier reload: the file's a2 is added anew, and only a1 is compared.
  const Diff r = reload(config(kA1 + kA2), config(kA1 + kA2), {1});
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.d.local_vms.size(), 1u);
  EXPECT_EQ(r.d.local_vms[0].kind, Kind::added);
  EXPECT_EQ(r.d.local_vms[0].vm.name, "a2");
}

TEST(ReloadLocalVms, VmMovingHereFromRemoteShowsInBothLists) {
  // b1 (id 11) leaves the remote list and is local now: one removal, one addition.
  const std::string b1_here = "  - {name: b1, id: 11, tenant: 100, mac: \"02:00:00:00:0b:01\", ip: 192.168.1.1, port: 0}\n";
  const std::string running = config(kA1);
  std::string next = config(kA1 + b1_here);
  next.erase(next.find("  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.1, host: hB}\n"));
  const Diff r = reload(running, next);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.d.vms.size(), 1u);
  EXPECT_EQ(r.d.vms[0].kind, Kind::removed);
  EXPECT_EQ(r.d.vms[0].vm.id, 11u);
  ASSERT_EQ(r.d.local_vms.size(), 1u);
  EXPECT_EQ(r.d.local_vms[0].kind, Kind::added);
  EXPECT_EQ(r.d.local_vms[0].vm.id, 11u);
}

TEST(ReloadLocalVms, TenantTagsStillNeedARestart) {
  const Diff r = reload(config(kA1), config(kA1 + kA2, "", ", vlan: 7"));
  EXPECT_NE(r.error.find("tenants[0].vlan: changed, needs a restart; nothing applied"), std::string::npos) << r.error;
}

TEST(ReloadLocalVms, InvalidVmRefusedWithFileLineField) {
  // Two VMs with one id: the file's own check, before any diff.
  const std::string dup = "  - {name: a9, id: 1, tenant: 100, mac: \"02:00:00:00:0a:09\", ip: 192.168.0.9, port: 0}\n";
  const Diff r = reload(config(kA1), config(kA1 + dup));
  EXPECT_NE(r.error.find(":7:"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("vms[1].id: duplicate VM id 1"), std::string::npos) << r.error;
  EXPECT_TRUE(r.d.local_vms.empty());
  // A VM on the fabric port.
  const std::string on_fabric = "  - {name: a9, id: 9, tenant: 100, mac: \"02:00:00:00:0a:09\", ip: 192.168.0.9, port: 1}\n";
  const Diff f = reload(config(kA1), config(kA1 + on_fabric));
  EXPECT_NE(f.error.find("vms[1].port: is a fabric port"), std::string::npos) << f.error;
}

}  // namespace
