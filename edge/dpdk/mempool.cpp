#include "edge/dpdk/mempool.hpp"

#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace ufab::dpdk {

uint16_t data_room_for_mtu(uint32_t mtu) {
  const uint32_t frame = (RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN + mtu + 63) / 64 * 64;
  return static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + std::max<uint32_t>(RTE_MBUF_DEFAULT_DATAROOM, frame));
}

rte_mempool* create_pktmbuf_pool(const PoolConfig& cfg) {
  // The mempool refuses a per-lcore cache above 2/3 of the pool (EINVAL):
  // a small pool gets a smaller cache instead of no pool.
  const uint32_t cache = std::min<uint32_t>(cfg.cache, cfg.n_mbufs * 2 / 3);
  rte_mempool* mp = rte_pktmbuf_pool_create(cfg.name.c_str(), cfg.n_mbufs, cache, 0, cfg.data_room,
                                            static_cast<int>(rte_socket_id()));
  if (mp != nullptr) return mp;
  const int err = rte_errno;
  std::string msg = "cannot create mbuf pool '" + cfg.name + "' (" + std::to_string(cfg.n_mbufs) + " mbufs of " +
                    std::to_string(cfg.data_room) + " B): " + rte_strerror(err);
  if (err == ENOMEM || err == ENOSPC || err == ENOBUFS)
    msg += "; give the EAL more memory (-m 256 or more, with --no-huge when there are no hugepages) "
           "or ask for fewer mbufs";
  throw std::runtime_error(msg);
}

}  // namespace ufab::dpdk
