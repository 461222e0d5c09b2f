// RSS redirection by VM for a VM port with an RX queue per worker
// (layout.hpp RxMode::spread). Sharding is by local VM, so a port whose NIC
// hashes the source address alone (RTE_ETH_RSS_L3_SRC_ONLY) lands every
// frame of a VM on its owner's queue when entry (Toeplitz(key, source
// address) mod reta_size) of the redirection table names that queue: the
// NIC does what the software handover (dispatch.cpp, counted misqueued)
// would otherwise do. Two VMs of different owners whose addresses fall on
// one entry clash: the entry keeps the first VM's owner (configuration
// order) and the other's frames are handed over as before. Entries no VM
// uses keep the default spread, entry i -> queue i mod queues. Non-IP
// frames (ARP) are not hashed and land on queue 0, as before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/layout.hpp"

namespace ufab::pipeline {

// Toeplitz hash of a source address alone, as a NIC hashes it under
// RTE_ETH_RSS_L3_SRC_ONLY (rte_softrss over the address's 32-bit words in
// host order). ip: host order; ip6: network order.
uint32_t src_hash4(uint32_t ip, const std::vector<uint8_t>& key);
uint32_t src_hash6(const edge::Ip6& ip6, const std::vector<uint8_t>& key);

struct RetaVm {
  std::string name;
  uint32_t ip = 0;      // host order
  edge::Ip6 ip6{};      // all zero: none
  uint16_t owner = 0;   // worker, and so its RX queue
};

struct RetaPlan {
  std::vector<uint16_t> queue;       // entry -> RX queue (reta_size entries)
  size_t addresses = 0;              // the VMs' addresses hashed
  size_t steered = 0;                // of them, those whose entry names their owner
  std::vector<std::string> clashes;  // e.g. "a2 192.168.0.3 on entry 17 of a1 (worker 0)"
};

// The table for vms (in configuration order) on a port with n_queues RX
// queues; ipv6: the port hashes IPv6 frames too (their source addresses
// claim entries as well). reta_size > 0, key at least 20 bytes.
RetaPlan plan_reta(const std::vector<RetaVm>& vms, const std::vector<uint8_t>& key, uint16_t reta_size, uint16_t n_queues,
                   bool ipv6);

// For each VM port of the layout in spread mode: programs its redirection
// table by plan_reta when the port hashes by source address alone (rss_hf,
// what setup_port enabled, per port), and says in layout.rx_reta[port] what
// it did or why it did not. At start-up, and again after a reload that
// added, removed or moved local VMs (local_vms.hpp; VMs marked removed
// claim nothing).
void steer_vm_ports_by_reta(const edge::EdgeConfig& cfg, const std::vector<uint64_t>& rss_hf, Layout& layout);

}  // namespace ufab::pipeline
