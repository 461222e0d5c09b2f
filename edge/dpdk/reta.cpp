#include "edge/dpdk/reta.hpp"

#include <rte_ethdev.h>

#include <algorithm>
#include <cstring>

namespace ufab::dpdk {

namespace {

constexpr size_t kDefaultKeyBytes = 40;  // the Toeplitz key most NICs use

std::string err(const char* step, int rc) { return std::string(step) + ": " + std::strerror(rc < 0 ? -rc : rc); }

// Groups of RTE_ETH_RETA_GROUP_SIZE entries covering n, every entry selected.
std::vector<rte_eth_rss_reta_entry64> groups(size_t n) {
  std::vector<rte_eth_rss_reta_entry64> g((n + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE);
  for (size_t i = 0; i < n; ++i) g[i / RTE_ETH_RETA_GROUP_SIZE].mask |= uint64_t{1} << (i % RTE_ETH_RETA_GROUP_SIZE);
  return g;
}

}  // namespace

std::vector<uint8_t> rss_key(uint16_t port, std::string* why) {
  rte_eth_dev_info dev{};
  if (const int rc = rte_eth_dev_info_get(port, &dev); rc != 0) return *why = err("dev_info_get", rc), std::vector<uint8_t>{};
  // A PMD that leaves hash_key_size 0 (net_null) may still give its key:
  // asked with the usual 40-byte buffer; a key left all zero is none.
  const size_t size = dev.hash_key_size != 0 ? dev.hash_key_size : kDefaultKeyBytes;
  std::vector<uint8_t> key(size, 0);
  rte_eth_rss_conf conf{};
  conf.rss_key = key.data();
  conf.rss_key_len = static_cast<uint8_t>(size);
  if (const int rc = rte_eth_dev_rss_hash_conf_get(port, &conf); rc != 0) return *why = err("rss_hash_conf_get", rc), std::vector<uint8_t>{};
  if (conf.rss_key_len != 0 && conf.rss_key_len < size) key.resize(conf.rss_key_len);
  if (std::all_of(key.begin(), key.end(), [](uint8_t b) { return b == 0; }))
    return *why = "the PMD reports no RSS hash key", std::vector<uint8_t>{};
  return key;
}

std::vector<uint16_t> read_reta(uint16_t port, uint16_t reta_size, std::string* why) {
  std::vector<rte_eth_rss_reta_entry64> g = groups(reta_size);
  if (const int rc = rte_eth_dev_rss_reta_query(port, g.data(), reta_size); rc != 0)
    return *why = err("rss_reta_query", rc), std::vector<uint16_t>{};
  std::vector<uint16_t> queue(reta_size);
  for (size_t i = 0; i < reta_size; ++i) queue[i] = g[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
  return queue;
}

bool write_reta(uint16_t port, const std::vector<uint16_t>& queue, std::string* why) {
  const auto n = static_cast<uint16_t>(queue.size());
  std::vector<rte_eth_rss_reta_entry64> g = groups(n);
  for (size_t i = 0; i < n; ++i) g[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] = queue[i];
  if (const int rc = rte_eth_dev_rss_reta_update(port, g.data(), n); rc != 0) return *why = err("rss_reta_update", rc), false;
  const std::vector<uint16_t> back = read_reta(port, n, why);
  if (back.empty()) return false;
  if (back != queue) return *why = "the table read back differs from the one written", false;
  return true;
}

}  // namespace ufab::dpdk
