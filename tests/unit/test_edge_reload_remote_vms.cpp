// A reload's hosts and remote VMs (pipeline/reload.cpp, diff_remote;
// applied by pipeline/remote_vms.cpp): the file's against the running ones,
// hosts matched by name and remote VMs by VM id. Added, removed, and (VMs)
// changed with the exact fields that differ; a running entry marked removed
// counts as gone; a VM's host index is where its host is or will be in the
// running list; the order of the entries in the file does not matter; a
// host whose address, MAC, RTT or paths changed is removed and added anew
// with each VM on it changed (the fields named exactly); anything else in
// the file still needs a restart, and nothing is then looked at further.
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

const std::string kHB = "  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: 20, paths: [[1]]}\n";
const std::string kHC = "  - {name: hC, ip: 10.0.0.3, mac: \"02:00:00:00:00:03\", base_rtt_us: 20, paths: [[2]]}\n";
const std::string kHD = "  - {name: hD, ip: 10.0.0.4, mac: \"02:00:00:00:00:04\", base_rtt_us: 30, paths: [[3], [4]]}\n";

// Local VM a1 of tenant 100, hosts hB and hC, and `remotes` (lines under remote_vms:).
std::string config(const std::string& remotes, const std::string& tenant_200 = "", const std::string& hosts = kHB + kHC) {
  return "edge: {fabric_port: 1, ip: 10.0.0.1, mac: \"02:00:00:00:00:01\"}\n"
         "tenants:\n"
         "  - {vni: 100, guarantee_gbps: 1}\n"
         "  - {vni: 200, guarantee_gbps: 1" + tenant_200 + "}\n"
         "vms:\n"
         "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n"
         "hosts:\n" + hosts +
         "remote_vms:\n" + remotes;
}

const std::string kB1 = "  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.1, host: hB}\n";
const std::string kB2 = "  - {name: b2, id: 12, tenant: 100, ip: 192.168.1.2, mac: \"02:00:00:00:0b:02\", host: hB}\n";
const std::string kC1 = "  - {name: c1, id: 21, tenant: 200, ip: 192.168.2.1, ip6: \"fd00::c:1\", host: hC}\n";

struct Diff {
  std::string error;
  std::vector<ufab::pipeline::HostChange> hosts;
  std::vector<VmChange> vms;
};

// diff_config of the running text (with `removed` remote VMs and
// `removed_hosts` marked removed, as a reload before this one left them)
// against `next` on disk.
Diff reload(const std::string& running, const std::string& next, const std::vector<size_t>& removed = {},
            const std::vector<size_t>& removed_hosts = {}) {
  const std::string path = ::testing::TempDir() + "rv_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path, std::ios::trunc) << next;
  EdgeConfig cfg = parse_config(running, path);
  for (const size_t r : removed) cfg.remote_vms[r].removed = true;
  for (const size_t h : removed_hosts) cfg.hosts[h].removed = true;
  std::vector<double> bps;
  std::vector<int> cls;
  for (const auto& t : cfg.tenants) {
    bps.push_back(t.guarantee_bps);
    cls.push_back(ufab::pipeline::TenantChange::kFromGuarantee);
  }
  Diff d;
  std::string text;
  ufab::pipeline::ReloadDiff rd;
  d.error = ufab::pipeline::diff_config(cfg, running, bps, cls, text, rd);
  std::remove(path.c_str());
  EXPECT_TRUE(rd.tenants.empty());
  d.hosts = rd.hosts;
  d.vms = rd.vms;
  return d;
}

}  // namespace

TEST(ReloadRemoteVms, NothingChangedNothingToApply) {
  const std::string running = config(kB1 + kB2 + kC1);
  const Diff d = reload(running, running);
  EXPECT_EQ(d.error, "");
  EXPECT_TRUE(d.vms.empty());
  // The same VMs in another order, in flow or block style: the same.
  const Diff e = reload(running, config(kC1 + kB2 +
                                        "  - name: b1\n    id: 11\n    tenant: 100\n    ip: 192.168.1.1\n    host: hB\n"));
  EXPECT_EQ(e.error, "");
  EXPECT_TRUE(e.vms.empty());
}

TEST(ReloadRemoteVms, AddedAndRemovedByVmId) {
  const Diff d = reload(config(kB1 + kB2), config(kB2 + kC1));
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.vms.size(), 2u);
  EXPECT_EQ(d.vms[0].kind, Kind::removed);  // removals in the running order first
  EXPECT_EQ(d.vms[0].running, 0u);
  EXPECT_EQ(d.vms[0].vm.name, "b1");
  EXPECT_EQ(d.vms[1].kind, Kind::added);
  EXPECT_EQ(d.vms[1].vm.name, "c1");
  EXPECT_EQ(d.vms[1].vm.id, 21u);
  EXPECT_EQ(d.vms[1].vm.vni, 200u);
  EXPECT_EQ(d.vms[1].vm.host, 1u);  // hC
  EXPECT_EQ(d.vms[1].vm.ip, 0xc0a80201u);
  EXPECT_EQ(d.vms[1].vm.ip6[15], 1u);
}

TEST(ReloadRemoteVms, ChangedNamesEachFieldThatDiffers) {
  // b1 moves to hC with a new address and a MAC: one change, its fields in order.
  Diff d = reload(config(kB1 + kB2),
                  config("  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.9, mac: \"02:00:00:00:0b:01\", host: hC}\n" + kB2));
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.vms.size(), 1u);
  EXPECT_EQ(d.vms[0].kind, Kind::changed);
  EXPECT_EQ(d.vms[0].running, 0u);
  EXPECT_EQ(d.vms[0].fields,
            "mac 00:00:00:00:00:00 -> 02:00:00:00:0b:01, ip 192.168.1.1 -> 192.168.1.9, host hB -> hC");
  EXPECT_EQ(d.vms[0].vm.host, 1u);
  // A new name, tenant and IPv6 address.
  d = reload(config(kB1), config("  - {name: b1x, id: 11, tenant: 200, ip: 192.168.1.1, ip6: \"fd00::b:1\", host: hB}\n"));
  ASSERT_EQ(d.vms.size(), 1u);
  EXPECT_EQ(d.vms[0].fields, "name b1 -> b1x, tenant 100 -> 200, ip6 none -> fd00::b:1");
}

TEST(ReloadRemoteVms, AnEntryMarkedRemovedIsGone) {
  // b1 was removed by an earlier reload (its entry stays, marked): a file
  // without it changes nothing; a file with it adds it again as new.
  const std::string running = config(kB1 + kB2);
  Diff d = reload(running, config(kB2), {0});
  EXPECT_EQ(d.error, "");
  EXPECT_TRUE(d.vms.empty());
  d = reload(running, config(kB1 + kB2), {0});
  ASSERT_EQ(d.vms.size(), 1u);
  EXPECT_EQ(d.vms[0].kind, Kind::added);
  EXPECT_EQ(d.vms[0].vm.name, "b1");
}

TEST(ReloadRemoteVms, HostsAddedAndRemovedByName) {
  // hC goes, hD comes (listed first in the file); c1 moves from hC to hD
  // and b3 is added on hD: their host index is hD's once appended (2).
  const std::string c1_on_hd = "  - {name: c1, id: 21, tenant: 200, ip: 192.168.2.1, ip6: \"fd00::c:1\", host: hD}\n";
  const std::string b3_on_hd = "  - {name: b3, id: 13, tenant: 100, ip: 192.168.1.3, host: hD}\n";
  Diff d = reload(config(kB1 + kC1), config(kB1 + c1_on_hd + b3_on_hd, "", kHD + kHB));
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.hosts.size(), 2u);
  EXPECT_FALSE(d.hosts[0].added);
  EXPECT_EQ(d.hosts[0].running, 1u);
  EXPECT_EQ(d.hosts[0].host.name, "hC");
  EXPECT_TRUE(d.hosts[1].added);
  EXPECT_EQ(d.hosts[1].host.name, "hD");
  EXPECT_EQ(d.hosts[1].host.paths.size(), 2u);
  EXPECT_EQ(d.hosts[1].host.base_rtt_ns, 30'000u);
  ASSERT_EQ(d.vms.size(), 2u);
  EXPECT_EQ(d.vms[0].kind, Kind::changed);
  EXPECT_EQ(d.vms[0].fields, "host hC -> hD");
  EXPECT_EQ(d.vms[0].vm.host, 2u);
  EXPECT_EQ(d.vms[1].kind, Kind::added);
  EXPECT_EQ(d.vms[1].vm.name, "b3");
  EXPECT_EQ(d.vms[1].vm.host, 2u);
  // hB kept at its index 0 though the file lists it second: b1 unchanged.
  // A host removed by an earlier reload and named again is added anew, after
  // the running entries (index 2, its old entry 1 stays removed).
  d = reload(config(kB1), config(kB1 + "  - {name: b3, id: 13, tenant: 100, ip: 192.168.1.3, host: hC}\n"), {}, {1});
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.hosts.size(), 1u);
  EXPECT_TRUE(d.hosts[0].added);
  EXPECT_EQ(d.hosts[0].host.name, "hC");
  ASSERT_EQ(d.vms.size(), 1u);
  EXPECT_EQ(d.vms[0].vm.host, 2u);
}

TEST(ReloadRemoteVms, ChangedHostIsRemovedAndAddedWithItsVms) {
  // hC's path changes: hC removed (index 1) and added anew (index 2), c1 on
  // it changed towards the new entry; b2 added on hB; b1 untouched.
  std::string next = config(kB1 + kB2 + kC1);
  next.replace(next.find("paths: [[2]]"), 12, "paths: [[3], [4]]");
  Diff d = reload(config(kB1 + kC1), next);
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.hosts.size(), 2u);
  EXPECT_FALSE(d.hosts[0].added);
  EXPECT_EQ(d.hosts[0].running, 1u);
  // The reply path is the first path unless given (49152: the default UDP source port).
  EXPECT_EQ(d.hosts[0].fields, "paths [[2]] -> [[3], [4]], reply_path [2] 49152/1 -> [3] 49152/1");
  EXPECT_TRUE(d.hosts[1].added);
  EXPECT_EQ(d.hosts[1].host.name, "hC");
  EXPECT_EQ(d.hosts[1].host.paths.size(), 2u);
  EXPECT_EQ(d.hosts[1].fields, d.hosts[0].fields);
  ASSERT_EQ(d.vms.size(), 2u);
  EXPECT_EQ(d.vms[0].kind, Kind::changed);
  EXPECT_EQ(d.vms[0].vm.name, "c1");
  EXPECT_EQ(d.vms[0].running, 1u);
  EXPECT_EQ(d.vms[0].fields, "host hC changed");
  EXPECT_EQ(d.vms[0].vm.host, 2u);
  EXPECT_EQ(d.vms[1].kind, Kind::added);
  EXPECT_EQ(d.vms[1].vm.name, "b2");
  EXPECT_EQ(d.vms[1].vm.host, 0u);
  // A new address, MAC and base RTT, named exactly; c1 also moves its address.
  next = config(kB1 + "  - {name: c1, id: 21, tenant: 200, ip: 192.168.2.9, ip6: \"fd00::c:1\", host: hC}\n", "",
                kHB + "  - {name: hC, ip: 10.0.0.9, mac: \"02:00:00:00:00:09\", base_rtt_us: 25, paths: [[2]]}\n");
  d = reload(config(kB1 + kC1), next);
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.hosts.size(), 2u);
  EXPECT_EQ(d.hosts[0].fields,
            "ip 10.0.0.3 -> 10.0.0.9, mac 02:00:00:00:00:03 -> 02:00:00:00:00:09, base_rtt_us 20 -> 25");
  ASSERT_EQ(d.vms.size(), 1u);
  EXPECT_EQ(d.vms[0].fields, "ip 192.168.2.1 -> 192.168.2.9, host hC changed");
  // Only a path's UDP source port: named as such.
  next = config(kB1 + kC1);
  next.replace(next.find("paths: [[2]]"), 12, "paths: [{labels: [2], udp_src_port: 5000}]");
  d = reload(config(kB1 + kC1), next);
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.hosts.size(), 2u);
  EXPECT_EQ(d.hosts[0].fields, "paths' udp_src_port/port 49152/1 -> 5000/1, reply_path [2] 49152/1 -> [2] 5000/1");
}

TEST(ReloadRemoteVms, OtherChangesStillNeedARestart) {
  Diff d;
  std::string next;
  // Anything else: a parameter.
  next = config(kB1 + kB2);
  next.replace(next.find("edge: {"), 7, "params: {seed: 3}\nedge: {");
  d = reload(config(kB1), next);
  EXPECT_NE(d.error.find("params: changed, needs a restart; nothing applied"), std::string::npos) << d.error;
  EXPECT_TRUE(d.vms.empty());
  // An invalid file (a remote VM on a host that does not exist): refused with its line.
  d = reload(config(kB1), config(kB1 + "  - {name: b3, id: 13, tenant: 100, ip: 192.168.1.3, host: hX}\n"));
  EXPECT_EQ(d.error.rfind("invalid configuration: ", 0), 0u) << d.error;
  EXPECT_NE(d.error.find(":12:"), std::string::npos) << d.error;
  EXPECT_NE(d.error.find("remote_vms[1].host"), std::string::npos) << d.error;
  EXPECT_TRUE(d.vms.empty());
  // A remote VM with a local VM's address: refused by the file's checks.
  d = reload(config(kB1), config(kB1 + "  - {name: b3, id: 13, tenant: 100, ip: 192.168.0.1, host: hB}\n"));
  EXPECT_EQ(d.error.rfind("invalid configuration: ", 0), 0u) << d.error;
  EXPECT_TRUE(d.vms.empty());
}
