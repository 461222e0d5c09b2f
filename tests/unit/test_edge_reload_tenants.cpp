// A reload's tenants (pipeline/reload.cpp, diff_config; applied by
// pipeline/tenants.cpp): matched by VNI, not by their place in the file.
// Added and removed tenants are listed (a running entry marked removed
// counts as gone, so its VNI comes back as added); a guarantee or class
// change is compared with what is in force for that VNI; QinQ tenants come
// and go as VLAN ones do; a tenant whose tags change (vlan, qinq, given
// or taken away) is re-tagged in place, and each of its local VMs changes
// with it.
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
using ufab::pipeline::ReloadDiff;
using ufab::pipeline::TenantChange;

const std::string kT100 = "  - {vni: 100, guarantee_gbps: 1}\n";
const std::string kT200 = "  - {vni: 200, guarantee_gbps: 2, vlan: 20}\n";
const std::string kT300 = "  - {vni: 300, guarantee_gbps: 3, vlan: 30}\n";
const std::string kQ400 = "  - {vni: 400, guarantee_gbps: 1, qinq: [4, 40]}\n";

// `tenants` (lines under tenants:), local VM a1 of tenant 100, no remote VM.
std::string config(const std::string& tenants) {
  return "edge: {fabric_port: 1, ip: 10.0.0.1, mac: \"02:00:00:00:00:01\"}\n"
         "tenants:\n" +
         tenants +
         "vms:\n"
         "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n"
         "hosts: []\n"
         "remote_vms: []\n";
}

struct Diff {
  std::string error, path;
  ReloadDiff d;
};

// diff_config of the running text (tenants `removed` marked removed, as a
// reload before left them; `live_gbps` in force, by running index, when
// given) against `next` on disk.
Diff reload(const std::string& running, const std::string& next, const std::vector<size_t>& removed = {},
            const std::vector<double>& live_gbps = {}) {
  Diff out;
  out.path = ::testing::TempDir() + "rt_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(out.path, std::ios::trunc) << next;
  EdgeConfig cfg = parse_config(running, out.path);
  for (const size_t t : removed) cfg.tenants[t].removed = true;
  std::vector<double> bps;
  std::vector<int> cls;
  for (size_t t = 0; t < cfg.tenants.size(); ++t) {
    bps.push_back(t < live_gbps.size() ? live_gbps[t] * 1e9 : cfg.tenants[t].guarantee_bps);
    cls.push_back(TenantChange::kFromGuarantee);
  }
  std::string text;
  out.error = ufab::pipeline::diff_config(cfg, running, bps, cls, text, out.d);
  std::remove(out.path.c_str());
  return out;
}

}  // namespace

TEST(ReloadTenants, MatchedByVniNotByPlace) {
  // The same tenants in another order: nothing to apply (by place, 100's
  // fields would have been compared with 200's).
  const Diff d = reload(config(kT100 + kT200 + kT300), config(kT300 + kT100 + kT200));
  EXPECT_EQ(d.error, "");
  EXPECT_TRUE(d.d.empty());
  // A guarantee change is found for its VNI, against the guarantee in force
  // (tenant 300 runs at 5 Gb/s after a tenant_set; the file says 3).
  const Diff g = reload(config(kT100 + kT200 + kT300), config(kT300 + kT100 + kT200), {}, {1, 2, 5});
  ASSERT_EQ(g.error, "");
  ASSERT_EQ(g.d.tenants.size(), 1u);
  EXPECT_EQ(g.d.tenants[0].vni, 300u);
  EXPECT_EQ(g.d.tenants[0].old_bps, 5e9);
  EXPECT_EQ(g.d.tenants[0].new_bps, 3e9);
  EXPECT_TRUE(g.d.tenants_added.empty() && g.d.tenants_removed.empty());
}

TEST(ReloadTenants, AddedAndRemoved) {
  const Diff d = reload(config(kT100 + kT200), config(kT300 + kT100));
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.d.tenants_added.size(), 1u);
  EXPECT_EQ(d.d.tenants_added[0].vni, 300u);
  EXPECT_EQ(d.d.tenants_added[0].guarantee_bps, 3e9);
  EXPECT_EQ(d.d.tenants_added[0].vlan, 30u);
  EXPECT_TRUE(d.d.tenants_added[0].weight_from_guarantee);
  EXPECT_EQ(d.d.tenants_removed, std::vector<uint32_t>({1}));  // 200, by its running index
  EXPECT_TRUE(d.d.tenants.empty());
  EXPECT_FALSE(d.d.empty());
}

TEST(ReloadTenants, ARemovedEntryCountsAsGone) {
  // Tenant 200 was removed by an earlier reload (its entry stays): the file
  // having it again adds it, and a file without it removes nothing.
  const Diff again = reload(config(kT100 + kT200), config(kT100 + kT200), {1});
  ASSERT_EQ(again.error, "");
  ASSERT_EQ(again.d.tenants_added.size(), 1u);
  EXPECT_EQ(again.d.tenants_added[0].vni, 200u);
  EXPECT_TRUE(again.d.tenants_removed.empty());
  const Diff gone = reload(config(kT100 + kT200), config(kT100), {1});
  EXPECT_EQ(gone.error, "");
  EXPECT_TRUE(gone.d.empty());
}

TEST(ReloadTenants, TagsChangedInPlace) {
  using ufab::pipeline::VmChange;
  // Tenant 200's VLAN 20 -> 21: re-tagged by its running index; it has no
  // local VM, and nothing else changes.
  const Diff vlan = reload(config(kT100 + kT200), config(kT100 + "  - {vni: 200, guarantee_gbps: 2, vlan: 21}\n"));
  ASSERT_EQ(vlan.error, "");
  ASSERT_EQ(vlan.d.tenants_retagged.size(), 1u);
  EXPECT_EQ(vlan.d.tenants_retagged[0].running, 1u);
  EXPECT_EQ(vlan.d.tenants_retagged[0].vlan, 21u);
  EXPECT_EQ(vlan.d.tenants_retagged[0].svlan, 0u);
  EXPECT_TRUE(vlan.d.tenants_added.empty() && vlan.d.tenants_removed.empty() && vlan.d.tenants.empty() &&
              vlan.d.local_vms.empty());
  EXPECT_FALSE(vlan.d.empty());
  // Untagged tenant 100 given VLAN 5: its local VM a1 changes with it.
  const Diff tagged = reload(config(kT100), config("  - {vni: 100, guarantee_gbps: 1, vlan: 5}\n"));
  ASSERT_EQ(tagged.error, "");
  ASSERT_EQ(tagged.d.tenants_retagged.size(), 1u);
  EXPECT_EQ(tagged.d.tenants_retagged[0].running, 0u);
  EXPECT_EQ(tagged.d.tenants_retagged[0].vlan, 5u);
  ASSERT_EQ(tagged.d.local_vms.size(), 1u);
  EXPECT_EQ(tagged.d.local_vms[0].kind, VmChange::Kind::changed);
  EXPECT_EQ(tagged.d.local_vms[0].fields, "tags untagged -> vlan 5");
  EXPECT_EQ(tagged.d.local_vms[0].vm.vlan, 5u);
  // A QinQ tenant's C-VLAN changed, and a VLAN tenant made QinQ.
  const Diff qinq = reload(config(kT100 + kQ400), config(kT100 + "  - {vni: 400, guarantee_gbps: 1, qinq: [4, 41]}\n"));
  ASSERT_EQ(qinq.error, "");
  ASSERT_EQ(qinq.d.tenants_retagged.size(), 1u);
  EXPECT_EQ(qinq.d.tenants_retagged[0].running, 1u);
  EXPECT_EQ(qinq.d.tenants_retagged[0].svlan, 4u);
  EXPECT_EQ(qinq.d.tenants_retagged[0].vlan, 41u);
  const Diff to_qinq = reload(config(kT100 + kT200), config(kT100 + "  - {vni: 200, guarantee_gbps: 2, qinq: [9, 20]}\n"));
  ASSERT_EQ(to_qinq.error, "");
  ASSERT_EQ(to_qinq.d.tenants_retagged.size(), 1u);
  EXPECT_EQ(to_qinq.d.tenants_retagged[0].svlan, 9u);
  EXPECT_EQ(to_qinq.d.tenants_retagged[0].vlan, 20u);
  // Two tenants swap their VLANs, and one's guarantee changes too: both
  // re-tagged, the guarantee a change of its own.
  const Diff swap = reload(config(kT100 + kT200 + kT300), config(kT100 + "  - {vni: 200, guarantee_gbps: 2, vlan: 30}\n"
                                                                          "  - {vni: 300, guarantee_gbps: 4, vlan: 20}\n"));
  ASSERT_EQ(swap.error, "");
  ASSERT_EQ(swap.d.tenants_retagged.size(), 2u);
  EXPECT_EQ(swap.d.tenants_retagged[0].running, 1u);
  EXPECT_EQ(swap.d.tenants_retagged[0].vlan, 30u);
  EXPECT_EQ(swap.d.tenants_retagged[1].running, 2u);
  EXPECT_EQ(swap.d.tenants_retagged[1].vlan, 20u);
  ASSERT_EQ(swap.d.tenants.size(), 1u);
  EXPECT_EQ(swap.d.tenants[0].vni, 300u);
  // Two tenants with one VLAN in the file: the file's own error, nothing diffed.
  const Diff dup = reload(config(kT100 + kT200 + kT300), config(kT100 + kT200 + "  - {vni: 300, guarantee_gbps: 3, vlan: 20}\n"));
  EXPECT_NE(dup.error.find("tenants[2].vlan: VLAN 20 already names tenant 200"), std::string::npos) << dup.error;
  EXPECT_TRUE(dup.d.empty());
}

TEST(ReloadTenants, QinQTenantsComeAndGo) {
  const Diff add = reload(config(kT100), config(kT100 + kQ400));
  ASSERT_EQ(add.error, "");
  ASSERT_EQ(add.d.tenants_added.size(), 1u);
  EXPECT_EQ(add.d.tenants_added[0].vni, 400u);
  EXPECT_EQ(add.d.tenants_added[0].svlan, 4u);
  EXPECT_EQ(add.d.tenants_added[0].vlan, 40u);
  const Diff gone = reload(config(kT100 + kQ400), config(kT100));
  ASSERT_EQ(gone.error, "");
  EXPECT_EQ(gone.d.tenants_removed, std::vector<uint32_t>({1}));
  // Kept as it is, in another place: nothing.
  const Diff kept = reload(config(kT100 + kQ400), config(kQ400 + kT100));
  EXPECT_EQ(kept.error, "");
  EXPECT_TRUE(kept.d.empty());
}
