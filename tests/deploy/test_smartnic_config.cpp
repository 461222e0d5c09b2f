// deploy/examples/smartnic.yaml (the SoC SmartNIC example, README "Deploy")
// loads with ufab-edge's own configuration loader, and says what its
// comments say: the uplink is the fabric port, the VMs sit behind the VF
// representors 1..4, two tenants with 5 and 2 tokens (B_u = 1 Gb/s).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "edge/config.hpp"

#ifndef UFAB_SOURCE_ROOT
#error "UFAB_SOURCE_ROOT must be defined by the build"
#endif

namespace {

const std::string kFile = std::string(UFAB_SOURCE_ROOT) + "/deploy/examples/smartnic.yaml";

TEST(SmartnicConfig, LoadsWithTheEdgeLoader) {
  const ufab::edge::EdgeConfig cfg = ufab::edge::load_config(kFile);
  EXPECT_EQ(cfg.fabric_port(), 0);
  ASSERT_EQ(cfg.tenants.size(), 2u);
  EXPECT_EQ(cfg.tenants[0].vni, 100u);
  EXPECT_DOUBLE_EQ(cfg.tenants[0].guarantee_bps, 5e9);
  EXPECT_DOUBLE_EQ(cfg.tenants[1].guarantee_bps, 2e9);
  // Classes from the guarantees, over weight_span_gbps [1, 10] (weights 409,
  // 568, 790, 1097, 1525, 2118, 2944, 4090 for weight / 409 Gb/s): 5 Gb/s
  // is 2045, nearest 2118 (class 5); 2 Gb/s is 818, nearest 790 (class 2).
  EXPECT_TRUE(cfg.tenants[0].weight_from_guarantee);
  EXPECT_EQ(cfg.tenants[0].weight_class, 5u);
  EXPECT_EQ(cfg.tenants[1].weight_class, 2u);
  // 5 Gb/s / B_u (1 Gb/s = 125e6 B/s) = 5 tokens; 2 Gb/s -> 2 tokens.
  EXPECT_DOUBLE_EQ(cfg.tenants[0].tokens(125e6), 5.0);
  EXPECT_DOUBLE_EQ(cfg.tenants[1].tokens(125e6), 2.0);
  ASSERT_EQ(cfg.vms.size(), 4u);
  std::set<uint16_t> ports;
  for (const auto& vm : cfg.vms) ports.insert(vm.port);
  EXPECT_EQ(ports, (std::set<uint16_t>{1, 2, 3, 4}));  // representors of VFs 0..3
  ASSERT_EQ(cfg.hosts.size(), 2u);
  EXPECT_EQ(cfg.hosts[0].base_rtt_ns, 12'000u);
  EXPECT_EQ(cfg.hosts[1].paths.size(), 2u);
  EXPECT_EQ(cfg.hosts[1].paths[1].labels, (std::vector<uint16_t>{2, 6, 2}));
  ASSERT_EQ(cfg.remote_vms.size(), 3u);
  for (const auto& rv : cfg.remote_vms) EXPECT_NE(rv.mac, ufab::edge::Mac{}) << rv.name << ": a MAC for proxy ARP";
  EXPECT_EQ(cfg.mbufs, 65535u);
}

// Tenants 100 and 200 reuse 172.16.0.x on different representors: allowed,
// the VM-side port names the tenant (edge/README.md).
TEST(SmartnicConfig, TenantsReuseAddressesOnDifferentPorts) {
  const ufab::edge::EdgeConfig cfg = ufab::edge::load_config(kFile);
  EXPECT_EQ(cfg.vms[0].ip, cfg.vms[2].ip);
  EXPECT_NE(cfg.vms[0].port, cfg.vms[2].port);
  EXPECT_NE(cfg.vms[0].vni, cfg.vms[2].vni);
}

}  // namespace
