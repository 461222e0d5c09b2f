// RSS redirection by VM (pipeline/rss_reta.hpp, edge/dpdk/reta.hpp).
// 1. src_hash4 / src_hash6 against a Toeplitz hash written out here bit by
//    bit (the window of the key at each set bit of the input), itself
//    checked against the Microsoft RSS verification vector (IPv4 66.9.149.187
//    -> 161.142.100.80, standard 40-byte key: 0x323e8fc2).
// 2. plan_reta: each VM's entry names its owner, the others keep entry i ->
//    queue i mod queues; two VMs of different owners on one entry clash
//    (the first keeps it, the clash is named); IPv6 addresses claim entries
//    only when the port hashes IPv6.
// 3. On a real PMD (net_null, two RX queues, RSS; EAL --no-huge --no-pci)
//    (a VM a reload removed claims no entry):
//    write_reta then read_reta give the table written, entry by entry;
//    steer_vm_ports_by_reta on a port hashing by source alone programs the
//    plan (read back from the PMD) and says so; on one hashing source and
//    destination it leaves the table and says why.
#include <gtest/gtest.h>
#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <vector>

#include "edge/dpdk/reta.hpp"
#include "pipeline/rss_reta.hpp"
#include "tests/unit/eal_gtest_main.hpp"

namespace ufab::pipeline {
namespace {

const std::vector<uint8_t> kKey = {0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
                                   0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
                                   0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

// Toeplitz by definition: for each input bit set (most significant first),
// XOR in the 32 key bits starting at that bit's position.
uint32_t toeplitz(const std::vector<uint8_t>& in, const std::vector<uint8_t>& key) {
  const auto key_bit = [&](size_t b) { return (key[b / 8] >> (7 - b % 8)) & 1u; };
  uint32_t h = 0;
  for (size_t i = 0; i < in.size() * 8; ++i) {
    if (((in[i / 8] >> (7 - i % 8)) & 1u) == 0) continue;
    uint32_t window = 0;
    for (size_t b = 0; b < 32; ++b) window = window << 1 | key_bit(i + b);
    h ^= window;
  }
  return h;
}

std::vector<uint8_t> bytes4(uint32_t ip) {
  return {static_cast<uint8_t>(ip >> 24), static_cast<uint8_t>(ip >> 16), static_cast<uint8_t>(ip >> 8),
          static_cast<uint8_t>(ip)};
}

TEST(Toeplitz, OracleMatchesTheMicrosoftVector) {
  std::vector<uint8_t> in = bytes4(0x420995bb);  // 66.9.149.187
  for (uint8_t b : bytes4(0xa18e6450)) in.push_back(b);  // 161.142.100.80
  EXPECT_EQ(toeplitz(in, kKey), 0x323e8fc2u);
}

TEST(Toeplitz, SourceHashesAreTheSourceAddressAlone) {
  for (uint32_t ip : {0x420995bbu, 0xc0a80001u, 0xc0a80003u, 0x0a000002u})
    EXPECT_EQ(src_hash4(ip, kKey), toeplitz(bytes4(ip), kKey)) << std::hex << ip;
  edge::Ip6 a{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x07};
  EXPECT_EQ(src_hash6(a, kKey), toeplitz(std::vector<uint8_t>(a.begin(), a.end()), kKey));
}

TEST(PlanReta, EachVmOnItsOwnersQueueTheRestSpread) {
  const std::vector<RetaVm> vms = {{"a1", 0xc0a80001, {}, 0}, {"a2", 0xc0a80003, {}, 1}};
  const size_t e1 = toeplitz(bytes4(0xc0a80001), kKey) % 128, e2 = toeplitz(bytes4(0xc0a80003), kKey) % 128;
  ASSERT_NE(e1, e2);
  const RetaPlan plan = plan_reta(vms, kKey, 128, 2, false);
  ASSERT_EQ(plan.queue.size(), 128u);
  for (size_t e = 0; e < 128; ++e) {
    const uint16_t want = e == e1 ? 0 : e == e2 ? 1 : static_cast<uint16_t>(e % 2);
    EXPECT_EQ(plan.queue[e], want) << "entry " << e;
  }
  EXPECT_EQ(plan.addresses, 2u);
  EXPECT_EQ(plan.steered, 2u);
  EXPECT_TRUE(plan.clashes.empty());
}

TEST(PlanReta, TwoOwnersOnOneEntryClashTheFirstKeepsIt) {
  // The first address after 192.168.0.1 whose entry (of 64) is a1's.
  const uint32_t a1 = 0xc0a80001;
  const size_t e = toeplitz(bytes4(a1), kKey) % 64;
  uint32_t a3 = a1 + 1;
  while (toeplitz(bytes4(a3), kKey) % 64 != e) ++a3;
  const std::vector<RetaVm> vms = {{"a1", a1, {}, 0}, {"a3", a3, {}, 1}, {"a4", a3, {}, 0}};
  const RetaPlan plan = plan_reta(vms, kKey, 64, 2, false);
  EXPECT_EQ(plan.queue[e], 0);
  EXPECT_EQ(plan.addresses, 3u);
  EXPECT_EQ(plan.steered, 2u);  // a1, and a4 (same owner as a1)
  ASSERT_EQ(plan.clashes.size(), 1u);
  char addr[16];
  std::snprintf(addr, sizeof addr, "%u.%u.%u.%u", a3 >> 24, a3 >> 16 & 0xff, a3 >> 8 & 0xff, a3 & 0xff);
  EXPECT_EQ(plan.clashes[0], "a3 " + std::string(addr) + " on entry " + std::to_string(e) + " of a1 (worker 0)");
}

TEST(PlanReta, Ipv6AddressesClaimOnlyWhenThePortHashesIpv6) {
  const edge::Ip6 six{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03};
  const std::vector<RetaVm> vms = {{"a2", 0xc0a80003, six, 1}};
  const size_t e4 = toeplitz(bytes4(0xc0a80003), kKey) % 128;
  const size_t e6 = toeplitz(std::vector<uint8_t>(six.begin(), six.end()), kKey) % 128;
  const RetaPlan v4 = plan_reta(vms, kKey, 128, 4, false);
  EXPECT_EQ(v4.addresses, 1u);
  EXPECT_EQ(v4.queue[e4], 1);
  if (e6 != e4) {
    EXPECT_EQ(v4.queue[e6], e6 % 4);
  }
  const RetaPlan both = plan_reta(vms, kKey, 128, 4, true);
  EXPECT_EQ(both.addresses, 2u);
  EXPECT_EQ(both.steered, 2u);
  EXPECT_EQ(both.queue[e4], 1);
  EXPECT_EQ(both.queue[e6], 1);
}

// A started net_null port with two RX queues under RSS.
uint16_t null_port() {
  static const int id = [] {
    rte_mempool* pool = rte_pktmbuf_pool_create("reta_pool", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    uint16_t p = 0;
    if (pool == nullptr || rte_vdev_init("net_null_reta", "no-rx=1") != 0 ||
        rte_eth_dev_get_port_by_name("net_null_reta", &p) != 0)
      return -1;
    rte_eth_dev_info dev{};
    rte_eth_dev_info_get(p, &dev);
    std::printf("net_null: reta_size %u, hash_key_size %u, flow_type_rss_offloads 0x%llx\n", dev.reta_size,
                dev.hash_key_size, static_cast<unsigned long long>(dev.flow_type_rss_offloads));
    rte_eth_conf conf{};
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP & dev.flow_type_rss_offloads;
    if (rte_eth_dev_configure(p, 2, 1, &conf) != 0) return -1;
    for (uint16_t q = 0; q < 2; ++q)
      if (rte_eth_rx_queue_setup(p, q, 256, SOCKET_ID_ANY, nullptr, pool) != 0) return -1;
    if (rte_eth_tx_queue_setup(p, 0, 256, SOCKET_ID_ANY, nullptr) != 0 || rte_eth_dev_start(p) != 0) return -1;
    return static_cast<int>(p);
  }();
  if (id < 0) ADD_FAILURE() << "net_null port setup failed";
  return static_cast<uint16_t>(id);
}

uint16_t reta_size(uint16_t port) {
  rte_eth_dev_info dev{};
  rte_eth_dev_info_get(port, &dev);
  return dev.reta_size;
}

TEST(RetaOnNetNull, WrittenIsReadBack) {
  const uint16_t p = null_port();
  const uint16_t n = reta_size(p);
  ASSERT_GT(n, 64u);  // more than one 64-entry group
  std::vector<uint16_t> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = static_cast<uint16_t>((i * 7 / 3) % 2);
  std::string why;
  ASSERT_TRUE(dpdk::write_reta(p, want, &why)) << why;
  EXPECT_EQ(dpdk::read_reta(p, n, &why), want);
  // net_null reports hash_key_size 0 but gives its key (the standard one).
  EXPECT_EQ(dpdk::rss_key(p, &why), kKey) << why;
}

edge::EdgeConfig two_vms_on(uint16_t port) {
  edge::EdgeConfig cfg;
  cfg.fabric_ports = {static_cast<uint16_t>(port + 1)};
  cfg.vms.resize(2);
  cfg.vms[0].name = "a1", cfg.vms[0].ip = 0xc0a80001, cfg.vms[0].port = port;
  cfg.vms[1].name = "a2", cfg.vms[1].ip = 0xc0a80003, cfg.vms[1].port = port;
  return cfg;
}

Layout spread_layout(uint16_t port) {
  Layout l;
  l.vm_owner = {0, 1};
  l.rx_mode.assign(port + 1u, RxMode::dispatch);
  l.rx_queues.assign(port + 1u, 1);
  l.rx_mode[port] = RxMode::spread;
  l.rx_queues[port] = 2;
  return l;
}

TEST(RetaOnNetNull, SteerProgramsThePlanWhenThePortHashesBySource) {
  const uint16_t p = null_port();
  const uint16_t n = reta_size(p);
  std::string why;
  ASSERT_TRUE(dpdk::write_reta(p, std::vector<uint16_t>(n, 1), &why)) << why;  // everything on queue 1 first
  const std::vector<uint8_t> key = dpdk::rss_key(p, &why);
  ASSERT_GE(key.size(), 20u) << why;
  const edge::EdgeConfig cfg = two_vms_on(p);
  Layout l = spread_layout(p);
  std::vector<uint64_t> hf(p + 1u, 0);
  hf[p] = RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_L3_SRC_ONLY;
  steer_vm_ports_by_reta(cfg, hf, l);
  const RetaPlan plan = plan_reta({{"a1", 0xc0a80001, {}, 0}, {"a2", 0xc0a80003, {}, 1}}, key, n, 2, false);
  EXPECT_EQ(dpdk::read_reta(p, n, &why), plan.queue);
  EXPECT_EQ(plan.queue[toeplitz(bytes4(0xc0a80001), key) % n], 0);
  EXPECT_EQ(l.rx_reta[p], "programmed: " + std::to_string(n) + " entries, " + std::to_string(plan.steered) +
                              " of 2 VM addresses on their owner's queue" +
                              (plan.clashes.empty() ? "" : "; clash: " + plan.clashes[0]));
}

TEST(RetaOnNetNull, SteerAfterAReloadLeavesRemovedVmsOut) {
  // a2 removed by a reload (local_vms.hpp): steered again, only a1 claims an entry.
  const uint16_t p = null_port();
  const uint16_t n = reta_size(p);
  std::string why;
  const std::vector<uint8_t> key = dpdk::rss_key(p, &why);
  ASSERT_GE(key.size(), 20u) << why;
  edge::EdgeConfig cfg = two_vms_on(p);
  cfg.vms[1].removed = true;
  Layout l = spread_layout(p);
  std::vector<uint64_t> hf(p + 1u, 0);
  hf[p] = RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_L3_SRC_ONLY;
  steer_vm_ports_by_reta(cfg, hf, l);
  const RetaPlan plan = plan_reta({{"a1", 0xc0a80001, {}, 0}}, key, n, 2, false);
  EXPECT_EQ(dpdk::read_reta(p, n, &why), plan.queue);
  EXPECT_EQ(l.rx_reta[p], "programmed: " + std::to_string(n) + " entries, 1 of 1 VM addresses on their owner's queue");
}

TEST(RetaOnNetNull, SteerLeavesThePortWhenItHashesSourceAndDestination) {
  const uint16_t p = null_port();
  const uint16_t n = reta_size(p);
  std::string why;
  const std::vector<uint16_t> before(n, 1);
  ASSERT_TRUE(dpdk::write_reta(p, before, &why)) << why;
  Layout l = spread_layout(p);
  std::vector<uint64_t> hf(p + 1u, 0);
  hf[p] = RTE_ETH_RSS_IP;
  steer_vm_ports_by_reta(two_vms_on(p), hf, l);
  EXPECT_EQ(dpdk::read_reta(p, n, &why), before);
  EXPECT_EQ(l.rx_reta[p].rfind("not programmed: the PMD does not hash by source address alone", 0), 0u) << l.rx_reta[p];
}

}  // namespace
}  // namespace ufab::pipeline

int main(int argc, char** argv) { return ufab::eal_test::run_with_eal(argc, argv, "test_edge_rss_reta"); }
