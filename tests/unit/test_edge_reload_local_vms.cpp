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
#include <optional>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/reload.hpp"

namespace {

using ufab::edge::EdgeConfig;
using ufab::edge::parse_config;
using ufab::pipeline::VmChange;
using Kind = VmChange::Kind;

// The EAL's ports as resolve_ports sees them: net_vhost0 is port 0, the
// fabric net_memif0 port 1, net_vhost1 port 2.
std::optional<uint16_t> by_name(const std::string& name) {
  if (name == "net_vhost0") return 0;
  if (name == "net_memif0") return 1;
  if (name == "net_vhost1") return 2;
  return std::nullopt;
}

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
  ufab::edge::resolve_ports(cfg, by_name);
  for (const size_t v : removed) cfg.vms[v].removed = true;
  std::vector<double> bps;
  std::vector<int> cls;
  for (const auto& t : cfg.tenants) {
    bps.push_back(t.guarantee_bps);
    cls.push_back(ufab::pipeline::TenantChange::kFromGuarantee);
  }
  std::string text;
  out.error = ufab::pipeline::diff_config(cfg, running, bps, cls, text, out.d, by_name);
  std::remove(out.path.c_str());
  return out;
}

// a2 on the port its device name gives.
std::string a2_on(const std::string& port) {
  return "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.2, port: " + port + "}\n";
}

TEST(ReloadLocalVms, PortByDeviceName) {
  // Named and numbered the same port: no change; another device: the port changes.
  Diff r = reload(config(kA1 + a2_on("2")), config(kA1 + a2_on("net_vhost1")));
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.d.empty());
  r = reload(config(kA1 + a2_on("net_vhost1")), config(kA1 + a2_on("net_vhost0")));
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.d.local_vms.size(), 1u);
  EXPECT_EQ(r.d.local_vms[0].fields, "port 2 -> 0");
  EXPECT_EQ(r.d.local_vms[0].vm.port, 0u);
  EXPECT_EQ(r.d.local_vms[0].vm.port_name, "net_vhost0");
  // a2's line is 7; `port:` is at column 85.
  r = reload(config(kA1 + a2_on("2")), config(kA1 + a2_on("net_vhost9")));
  EXPECT_EQ(r.error, "invalid configuration: " + r.path +
                         ":7:85: vms[1].port: no DPDK port named 'net_vhost9' (--vdev, or /ufab/port_add at runtime) "
                         "(nothing applied)");
  r = reload(config(kA1 + a2_on("2")), config(kA1 + a2_on("net_memif0")));
  EXPECT_EQ(r.error, "invalid configuration: " + r.path +
                         ":7:85: vms[1].port: 'net_memif0' is port 1, a fabric port (nothing applied)");
}

TEST(ReloadLocalVms, PortByDeviceNameChecksAddressesOnceResolved) {
  // a2 takes a1's MAC on port 0 (a solicitation's VM is found by it:
  // pipeline/ipv6_tables.hpp), a1 naming the port by its id, a2 by its device.
  const std::string clash = "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.2, port: net_vhost0}\n";
  EdgeConfig c = parse_config(config(kA1 + clash), "f.yaml");
  EXPECT_EQ(c.vms[1].port_name, "net_vhost0");
  EXPECT_EQ(c.vms[1].port_at, "f.yaml:7:85");
  try {
    ufab::edge::resolve_ports(c, by_name);
    FAIL() << "a2 on a1's port with a1's MAC accepted";
  } catch (const ufab::edge::ConfigError& e) {
    EXPECT_STREQ(e.what(), "f.yaml:7:85: vms[1].port: 'net_vhost0' is port 0, where a1 has the same MAC");
  }
  // Not a name a device can have.
  try {
    parse_config(config(kA1 + a2_on("\"net vhost\"")), "f.yaml");
    FAIL() << "a port with a space accepted";
  } catch (const ufab::edge::ConfigError& e) {
    EXPECT_STREQ(e.what(), "f.yaml:7:85: vms[1].port: 'net vhost' is neither a port id nor a DPDK device name");
  }
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

TEST(ReloadLocalVms, TenantTagsChangeItsVms) {
  // Tenant 100 given VLAN 7 while a2 is added: a1 changes (its tags), a2 is
  // added with the new tag.
  const Diff r = reload(config(kA1), config(kA1 + kA2, "", ", vlan: 7"));
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.d.tenants_retagged.size(), 1u);
  ASSERT_EQ(r.d.local_vms.size(), 2u);
  EXPECT_EQ(r.d.local_vms[0].kind, Kind::changed);
  EXPECT_EQ(r.d.local_vms[0].vm.id, 1u);
  EXPECT_EQ(r.d.local_vms[0].fields, "tags untagged -> vlan 7");
  EXPECT_EQ(r.d.local_vms[1].kind, Kind::added);
  EXPECT_EQ(r.d.local_vms[1].vm.vlan, 7u);
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
