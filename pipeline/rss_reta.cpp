#include "pipeline/rss_reta.hpp"

#include <rte_ethdev.h>
#include <rte_thash.h>

#include "edge/dpdk/reta.hpp"

namespace ufab::pipeline {

namespace {

constexpr uint64_t kIpv6Types =
    RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_OTHER | RTE_ETH_RSS_IPV6_EX;

}  // namespace

uint32_t src_hash4(uint32_t ip, const std::vector<uint8_t>& key) {
  uint32_t tuple[1] = {ip};
  return rte_softrss(tuple, 1, key.data());
}

uint32_t src_hash6(const edge::Ip6& ip6, const std::vector<uint8_t>& key) {
  uint32_t tuple[4];
  for (size_t w = 0; w < 4; ++w)
    tuple[w] = uint32_t{ip6[4 * w]} << 24 | uint32_t{ip6[4 * w + 1]} << 16 | uint32_t{ip6[4 * w + 2]} << 8 | ip6[4 * w + 3];
  return rte_softrss(tuple, 4, key.data());
}

RetaPlan plan_reta(const std::vector<RetaVm>& vms, const std::vector<uint8_t>& key, uint16_t reta_size, uint16_t n_queues,
                   bool ipv6) {
  RetaPlan plan;
  plan.queue.resize(reta_size);
  for (size_t i = 0; i < reta_size; ++i) plan.queue[i] = static_cast<uint16_t>(i % n_queues);
  std::vector<int> claimed(reta_size, -1);  // entry -> the VM (index) whose owner it names
  const auto claim = [&](size_t v, uint32_t hash, const std::string& addr) {
    ++plan.addresses;
    const size_t e = hash % reta_size;
    if (claimed[e] < 0) {
      claimed[e] = static_cast<int>(v);
      plan.queue[e] = vms[v].owner;
    }
    if (plan.queue[e] == vms[v].owner) {
      ++plan.steered;
      return;
    }
    const RetaVm& first = vms[static_cast<size_t>(claimed[e])];
    plan.clashes.push_back(vms[v].name + " " + addr + " on entry " + std::to_string(e) + " of " + first.name + " (worker " +
                           std::to_string(first.owner) + ")");
  };
  for (size_t v = 0; v < vms.size(); ++v) {
    claim(v, src_hash4(vms[v].ip, key), edge::ip4_text(vms[v].ip));
    if (ipv6 && vms[v].ip6 != edge::Ip6{}) claim(v, src_hash6(vms[v].ip6, key), edge::ip6_text(vms[v].ip6));
  }
  return plan;
}

void steer_vm_ports_by_reta(const edge::EdgeConfig& cfg, const std::vector<uint64_t>& rss_hf, Layout& layout) {
  layout.rx_reta.assign(layout.rx_mode.size(), "");
  for (uint16_t port = 0; port < layout.rx_mode.size(); ++port) {
    if (layout.rx_mode[port] != RxMode::spread || cfg.is_fabric_port(port)) continue;
    std::string& out = layout.rx_reta[port];
    const uint64_t hf = port < rss_hf.size() ? rss_hf[port] : 0;
    if (hf == 0) {
      out = "not programmed: the port has no RSS (the PMD picks the queue), so strays are handed over (misqueued)";
      continue;
    }
    if ((hf & RTE_ETH_RSS_L3_SRC_ONLY) == 0) {
      out = "not programmed: the PMD does not hash by source address alone (RTE_ETH_RSS_L3_SRC_ONLY), so a VM's "
            "frames spread over the queues and the strays are handed over (misqueued)";
      continue;
    }
    rte_eth_dev_info dev{};
    if (rte_eth_dev_info_get(port, &dev) != 0 || dev.reta_size == 0) {
      out = "not programmed: the PMD has no redirection table";
      continue;
    }
    std::string why;
    const std::vector<uint8_t> key = dpdk::rss_key(port, &why);
    if (key.size() < 20) {
      out = "not programmed: " + (key.empty() ? why : "an RSS key of " + std::to_string(key.size()) + " bytes");
      continue;
    }
    std::vector<RetaVm> vms;
    for (size_t i = 0; i < cfg.vms.size(); ++i)  // a VM a reload removed has no queue to claim (local_vms.hpp)
      if (cfg.vms[i].port == port && !cfg.vms[i].removed)
        vms.push_back({cfg.vms[i].name, cfg.vms[i].ip, cfg.vms[i].ip6, layout.vm_owner[i]});
    const RetaPlan plan = plan_reta(vms, key, dev.reta_size, layout.rx_queues[port], (hf & kIpv6Types) != 0);
    if (!dpdk::write_reta(port, plan.queue, &why)) {
      out = "not programmed: " + why;
      continue;
    }
    out = "programmed: " + std::to_string(dev.reta_size) + " entries, " + std::to_string(plan.steered) + " of " +
          std::to_string(plan.addresses) + " VM addresses on their owner's queue";
    for (const std::string& c : plan.clashes) out += "; clash: " + c;
  }
}

}  // namespace ufab::pipeline
