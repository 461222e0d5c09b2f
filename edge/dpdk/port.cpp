#include "edge/dpdk/port.hpp"

#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/kernel_mtu.hpp"
#include "edge/dpdk/xdp.hpp"

namespace ufab::dpdk {

namespace {

[[noreturn]] void fail(uint16_t port, const char* step, int rc) {
  throw std::runtime_error("port " + std::to_string(port) + ": " + step + " failed: " + std::strerror(rc < 0 ? -rc : rc));
}

void wait_link(uint16_t port, uint32_t wait_ms, PortInfo& info) {
  rte_eth_link link{};
  for (uint32_t waited = 0;; waited += 10) {
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) break;
    if (waited >= wait_ms) return;  // reported as down; the caller decides
    rte_delay_ms(10);
  }
  info.link_up = true;
  info.link_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
}

// Only virtual devices sit on the vdev bus.
bool virtual_device(const rte_eth_dev_info& dev) {
  const rte_bus* bus = dev.device != nullptr ? rte_dev_bus(dev.device) : nullptr;
  return bus == nullptr || std::string_view(rte_bus_name(bus)) == "vdev";
}

}  // namespace

// The device's numeric devarg `key` (rte_kvargs), or `fallback` when it is
// not given.
static uint32_t devarg_u32(const rte_eth_dev_info& dev, const char* key, uint32_t fallback) {
  const rte_devargs* da = rte_dev_devargs(dev.device);
  rte_kvargs* kv = da != nullptr && da->args != nullptr ? rte_kvargs_parse(da->args, nullptr) : nullptr;
  const char* v = kv != nullptr ? rte_kvargs_get(kv, key) : nullptr;
  const uint32_t n = v != nullptr ? static_cast<uint32_t>(std::strtoul(v, nullptr, 0)) : fallback;
  rte_kvargs_free(kv);
  return n;
}

uint16_t max_mtu(const rte_eth_dev_info& dev) {
  // The overhead rte_eth_dev_configure assumes (ethdev's eth_dev_get_overhead_len).
  const uint32_t overhead = dev.max_mtu != UINT16_MAX && dev.max_rx_pktlen > dev.max_mtu
                                ? dev.max_rx_pktlen - dev.max_mtu
                                : RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;
  const uint64_t by_len = dev.max_rx_pktlen > overhead ? dev.max_rx_pktlen - overhead : 0;
  return static_cast<uint16_t>(std::min<uint64_t>(dev.max_mtu, by_len));
}

PortInfo setup_port(uint16_t port_id, rte_mempool* pool, const PortConfig& cfg) {
  if (!rte_eth_dev_is_valid_port(port_id)) throw std::runtime_error("port " + std::to_string(port_id) + " does not exist");
  PortInfo info;
  info.port_id = port_id;
  char name[RTE_ETH_NAME_MAX_LEN] = {};
  if (rte_eth_dev_get_name_by_port(port_id, name) == 0) info.name = name;

  rte_eth_dev_info dev{};
  if (const int rc = rte_eth_dev_info_get(port_id, &dev); rc != 0) fail(port_id, "dev_info_get", rc);
  info.driver = dev.driver_name != nullptr ? dev.driver_name : "";
  if (cfg.n_rxq > dev.max_rx_queues || cfg.n_txq > dev.max_tx_queues)
    throw std::runtime_error("port " + std::to_string(port_id) + " (" + info.driver + "): wants " +
                             std::to_string(cfg.n_rxq) + " rx / " + std::to_string(cfg.n_txq) +
                             " tx queues, driver has " + std::to_string(dev.max_rx_queues) + " / " +
                             std::to_string(dev.max_tx_queues));

  rte_eth_conf conf{};
  // Modifiers (RTE_ETH_RSS_L3_SRC_ONLY and the like) mean nothing without a
  // flow type.
  constexpr uint64_t kModifiers =
      RTE_ETH_RSS_L3_SRC_ONLY | RTE_ETH_RSS_L3_DST_ONLY | RTE_ETH_RSS_L4_SRC_ONLY | RTE_ETH_RSS_L4_DST_ONLY;
  if (cfg.n_rxq > 1 && (cfg.rss_hf & dev.flow_type_rss_offloads & ~kModifiers) != 0) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = info.rss_hf = cfg.rss_hf & dev.flow_type_rss_offloads;
  }
  if (cfg.lsc_events && dev.dev_flags != nullptr && (*dev.dev_flags & RTE_ETH_DEV_INTR_LSC) != 0)
    conf.intr_conf.lsc = 1;
  info.lsc_events = conf.intr_conf.lsc == 1;
  bool kernel_mtu = false;  // net_af_packet: its kernel interface's MTU to be set to cfg.mtu
  if (cfg.mtu != 0) {
    const uint16_t most = max_mtu(dev);
    if (cfg.mtu >= dev.min_mtu && cfg.mtu <= most) {
      conf.rxmode.mtu = cfg.mtu;
    } else if (info.driver == "net_af_packet" && dev.if_index != 0 && cfg.mtu > most) {
      // The PMD reports 1500 whatever its interface takes, and ethdev
      // refuses more before the PMD's mtu_set (SIOCSIFMTU) can run: the
      // interface's MTU is set below as that mtu_set would, within the
      // PMD's ring frames.
      const uint32_t frames = af_packet_frame_mtu(devarg_u32(dev, "framesz", kAfPacketFrameSize));
      kernel_mtu = cfg.mtu <= frames;
      if (!kernel_mtu) {
        const AfPacketRing ring = af_packet_ring_for(cfg.mtu);
        info.mtu_note = "net_af_packet's ring frames hold an MTU of " + std::to_string(frames) + ", below " +
                        cfg.mtu_from + " " + std::to_string(cfg.mtu) + ": give it framesz=" +
                        std::to_string(ring.frame_size) + ",blocksz=" + std::to_string(ring.block_size);
      }
    } else if (!virtual_device(dev)) {
      throw std::runtime_error("port " + std::to_string(port_id) + " (" + info.driver + "): " + cfg.mtu_from + " " +
                               std::to_string(cfg.mtu) + " is outside the MTUs the driver takes, " +
                               std::to_string(dev.min_mtu) + ".." + std::to_string(most));
    } else {
      info.mtu_note = "the driver's largest, below " + cfg.mtu_from + " " + std::to_string(cfg.mtu) +
                      ": larger frames pass where the device carries them";
    }
  }
  info.n_txq = cfg.n_txq;
  if (int rc = rte_eth_dev_configure(port_id, cfg.n_rxq, cfg.n_txq, &conf); rc != 0) {
    // Some PMDs (net_tap) want as many RX as TX queues: fall back to one TX
    // queue, which the caller shares between its lcores (e.g. ufab-edge's
    // TX rings).
    if (cfg.n_txq <= cfg.n_rxq || (rc = rte_eth_dev_configure(port_id, cfg.n_rxq, 1, &conf)) != 0)
      fail(port_id, "configure", rc);
    info.note = "the driver refused " + std::to_string(cfg.n_txq) + " TX queues with " + std::to_string(cfg.n_rxq) +
                " RX queue(s): one TX queue";
    info.n_txq = 1;
  }
  if (conf.rxmode.mtu != 0) {
    // rte_eth_dev_configure records the MTU for the driver to apply at
    // start; a driver with mtu_set applies it here (for net_af_xdp and
    // net_tap, and net_af_packet up to the 1500 it reports: the kernel
    // interface's MTU; above that, kernel_mtu below).
    if (const int rc = rte_eth_dev_set_mtu(port_id, conf.rxmode.mtu); rc != 0 && rc != -ENOTSUP) {
      if (!virtual_device(dev)) fail(port_id, ("set_mtu " + std::to_string(conf.rxmode.mtu)).c_str(), rc);
      info.mtu_note = std::string("the driver refused it: ") + std::strerror(-rc);
    }
  }
  info.rx_desc = cfg.rx_desc;
  info.tx_desc = cfg.tx_desc;
  if (const int rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &info.rx_desc, &info.tx_desc); rc != 0)
    fail(port_id, "adjust descriptors", rc);

  const int socket = rte_eth_dev_socket_id(port_id);
  const unsigned sock = socket < 0 ? 0u : static_cast<unsigned>(socket);  // SOCKET_ID_ANY for virtual devices
  for (uint16_t q = 0; q < cfg.n_rxq; ++q)
    if (const int rc = rte_eth_rx_queue_setup(port_id, q, info.rx_desc, sock, nullptr, pool); rc != 0)
      fail(port_id, "rx_queue_setup", rc);
  for (uint16_t q = 0; q < info.n_txq; ++q)
    if (const int rc = rte_eth_tx_queue_setup(port_id, q, info.tx_desc, sock, nullptr); rc != 0)
      fail(port_id, "tx_queue_setup", rc);
  if (std::string why; kernel_mtu && !set_kernel_mtu(dev.if_index, cfg.mtu, why)) {
    kernel_mtu = false;
    info.mtu_note = "its kernel interface refused it (" + why + ")";
  }
  if (const int rc = rte_eth_dev_start(port_id); rc != 0) fail(port_id, "start", rc);
  if (rte_eth_dev_get_mtu(port_id, &info.mtu) != 0) info.mtu = 0;
  if (kernel_mtu) info.mtu = kernel_mtu_of(dev.if_index);  // ethdev still says the PMD's 1500

  if (cfg.promiscuous) {
    const int rc = rte_eth_promiscuous_enable(port_id);
    if (rc != 0 && rc != -ENOTSUP) fail(port_id, "promiscuous_enable", rc);
    info.promiscuous = rte_eth_promiscuous_get(port_id) == 1;
  }
  wait_link(port_id, cfg.link_wait_ms, info);
  if (info.driver == "net_af_xdp" && cfg.xdp_udp_port != 0) {
    std::string why;
    if (!set_xdp_steer_port(dev.if_index, cfg.xdp_udp_port, why))
      info.note = "no uFAB steering on this interface (" + why +
                  "): every frame goes to the AF_XDP socket; give xdp_prog=<build>/edge/ufab_steer.bpf.o to share it with "
                  "the kernel";
  }
  return info;
}

std::optional<bool> link_up_now(uint16_t port_id) {
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_id, &link) != 0) return std::nullopt;
  return link.link_status == RTE_ETH_LINK_UP;
}

namespace {

void stop_and_close(void* port) {
  const uint16_t p = *static_cast<const uint16_t*>(port);
  rte_eth_dev_stop(p);
  rte_eth_dev_close(p);
}

}  // namespace

void close_port(uint16_t port_id) {
  // net_memif handles its peer's messages (a disconnect) on the interrupt
  // thread and races a close made beside it (eal.hpp,
  // run_on_interrupt_thread): closed there, the two are one after the other.
  rte_eth_dev_info dev{};
  if (rte_eth_dev_info_get(port_id, &dev) == 0 && dev.driver_name != nullptr &&
      std::string_view(dev.driver_name) == "net_memif" && run_on_interrupt_thread(&stop_and_close, &port_id))
    return;
  stop_and_close(&port_id);
}

}  // namespace ufab::dpdk
