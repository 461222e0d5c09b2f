// A port's RSS redirection table and hash key (rte_eth_dev_rss_reta_update /
// _query, rte_eth_dev_rss_hash_conf_get), for any PMD that has them: the
// table as one RX queue per entry, in entry order. The 64-entry groups and
// their masks of rte_eth_rss_reta_entry64 stay in here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ufab::dpdk {

// The port's RSS hash key (dev_info.hash_key_size bytes); empty, with *why,
// when the PMD has none or will not say.
std::vector<uint8_t> rss_key(uint16_t port, std::string* why);

// Writes queue[i] into entry i of the table (queue.size() is the PMD's
// reta_size) and reads the table back; false, with *why, when the PMD
// refuses either step or the table read back is not the one written.
bool write_reta(uint16_t port, const std::vector<uint16_t>& queue, std::string* why);

// The port's table (reta_size entries); empty, with *why, when the PMD
// refuses.
std::vector<uint16_t> read_reta(uint16_t port, uint16_t reta_size, std::string* why);

}  // namespace ufab::dpdk
