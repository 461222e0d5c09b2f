// Packet-buffer pool creation with an error that says what to change.
#pragma once

#include <cstdint>
#include <string>

struct rte_mempool;

namespace ufab::dpdk {

struct PoolConfig {
  std::string name = "ufab_mbufs";
  uint32_t n_mbufs = 8191;          // 2^k - 1 is the mempool's sweet spot
  uint32_t cache = 256;             // per-lcore cache
  uint16_t data_room = 2048 + 128;  // RTE_MBUF_DEFAULT_BUF_SIZE: one 2 KB frame + headroom
};

// The data room that holds a frame of `mtu` (with two VLAN tags) in one
// segment behind the headroom, never less than the 2 KB default: ufab-edge
// and ufab-core drop multi-segment frames, and PMDs chain only frames
// their mbufs cannot hold.
uint16_t data_room_for_mtu(uint32_t mtu);

// rte_pktmbuf_pool_create on the caller's socket. Throws std::runtime_error;
// ENOMEM/ENOSPC name the EAL memory options (-m, --no-huge) and the mbuf count.
rte_mempool* create_pktmbuf_pool(const PoolConfig& cfg);

}  // namespace ufab::dpdk
