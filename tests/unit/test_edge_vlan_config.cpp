// ufab-edge configuration: VLAN tenants (edge/config.hpp, tenants[].vlan)
// and QinQ tenants (tenants[].qinq: [S, C]).
#include <gtest/gtest.h>

#include <string>

#include "edge/config.hpp"
#include "tests/unit/config_error.hpp"

namespace {

using ufab::edge::testing::error_of;
using ufab::edge::EdgeConfig;
using ufab::edge::parse_config;

std::string config(const std::string& tenants, const std::string& vms) {
  return ufab::edge::testing::small_config("", tenants, vms);
}

const std::string kTwoTenants =
    "  - {vni: 100, guarantee_gbps: 1, vlan: 10}\n"
    "  - {vni: 200, guarantee_gbps: 1}\n"
    "  - {vni: 300, guarantee_gbps: 1, vlan: 4094}\n";

TEST(EdgeVlanConfig, VlanNamesTheTenantAndItsVms) {
  const EdgeConfig c = parse_config(
      config(kTwoTenants,
             "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n"
             "  - {name: a2, id: 2, tenant: 200, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.1, port: 0}\n"
             "  - {name: a3, id: 3, tenant: 300, mac: \"02:00:00:00:0a:03\", ip: 192.168.0.1, port: 0}\n"),
      "t.yaml");
  ASSERT_EQ(c.tenants.size(), 3u);
  EXPECT_EQ(c.tenants[0].vlan, 10);
  EXPECT_EQ(c.tenants[1].vlan, 0);  // untagged
  EXPECT_EQ(c.tenants[2].vlan, 4094);
  EXPECT_EQ(c.tenant_of_vlan[10], 0);
  EXPECT_EQ(c.tenant_of_vlan[4094], 2);
  int named = 0;
  for (const int32_t t : c.tenant_of_vlan) named += t >= 0;
  EXPECT_EQ(named, 2);
  // One address on one port, three VMs: (port, VLAN, IP) tells them apart.
  EXPECT_EQ(c.vms[0].vlan, 10);
  EXPECT_EQ(c.vms[1].vlan, 0);
  EXPECT_EQ(c.vms[2].vlan, 4094);
}

TEST(EdgeVlanConfig, BadVlansNameFileLineAndField) {
  const std::string vm = "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n";
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, vlan: 0}\n", vm)),
            "t.yaml:3:41: tenants[0].vlan: '0' is out of range [1, 4094]");
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, vlan: 4095}\n", vm)),
            "t.yaml:3:41: tenants[0].vlan: '4095' is out of range [1, 4094]");
  EXPECT_NE(error_of(config("  - {vni: 100, guarantee_gbps: 1, vlan: ten}\n", vm)).find("t.yaml:3:41: tenants[0].vlan: "),
            std::string::npos);
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, vlan: 7}\n  - {vni: 200, guarantee_gbps: 1, vlan: 7}\n", vm)),
            "t.yaml:4:41: tenants[1].vlan: VLAN 7 already names tenant 100");
  // Two VMs with one address on one port and one VLAN.
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, vlan: 7}\n",
                            vm + "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.1, port: 0}\n")),
            "t.yaml:6:66: vms[1].ip: another VM on this port and VLAN has this IP");
}

TEST(EdgeVlanConfig, QinqNamesTheTenantBySAndC) {
  const EdgeConfig c = parse_config(
      config("  - {vni: 100, guarantee_gbps: 1, vlan: 10}\n"
             "  - {vni: 200, guarantee_gbps: 1, qinq: [7, 10]}\n"
             "  - {vni: 300, guarantee_gbps: 1, qinq: [8, 10]}\n",
             "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n"
             "  - {name: a2, id: 2, tenant: 200, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.1, port: 0}\n"
             "  - {name: a3, id: 3, tenant: 300, mac: \"02:00:00:00:0a:03\", ip: 192.168.0.1, port: 0}\n"),
      "t.yaml");
  EXPECT_EQ(c.tenants[1].svlan, 7);
  EXPECT_EQ(c.tenants[1].vlan, 10);
  EXPECT_EQ(c.qinq_tenant(7, 10), 1);
  EXPECT_EQ(c.qinq_tenant(8, 10), 2);
  EXPECT_EQ(c.qinq_tenant(7, 11), -1);
  EXPECT_EQ(c.tenant_of_vlan[10], 0);  // the single tag 10 is tenant 100's, not a QinQ tenant's
  // One address on one port, three VMs: the tags tell them apart.
  EXPECT_EQ(c.vms[1].svlan, 7);
  EXPECT_EQ(c.vms[1].vlan, 10);
  EXPECT_EQ(c.vms[2].svlan, 8);
  EXPECT_EQ(c.vms[0].svlan, 0);
}

TEST(EdgeVlanConfig, BadQinqNamesFileLineAndField) {
  const std::string vm = "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n";
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, qinq: [0, 5]}\n", vm)),
            "t.yaml:3:42: tenants[0].qinq[0]: '0' is out of range [1, 4094]");
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, qinq: [5, 4095]}\n", vm)),
            "t.yaml:3:45: tenants[0].qinq[1]: '4095' is out of range [1, 4094]");
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, qinq: [5]}\n", vm)),
            "t.yaml:3:41: tenants[0].qinq: must be [S-VLAN, C-VLAN]");
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, vlan: 5, qinq: [5, 6]}\n", vm)),
            "t.yaml:3:50: tenants[0].qinq: give either vlan or qinq, not both");
  EXPECT_EQ(error_of(config("  - {vni: 100, guarantee_gbps: 1, qinq: [5, 6]}\n  - {vni: 200, guarantee_gbps: 1, qinq: [5, 6]}\n",
                            vm)),
            "t.yaml:4:41: tenants[1].qinq: QinQ [5, 6] already names tenant 100");
}

}  // namespace
