// Ethernet port bring-up for any PMD (physical NIC, net_pcap, net_memif,
// virtio-user, net_ring, ...): queue counts, descriptor rings, promiscuous
// mode where the driver has it, and a bounded wait for link up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct rte_mempool;
struct rte_eth_dev_info;

namespace ufab::dpdk {

struct PortConfig {
  uint16_t n_rxq = 1;
  uint16_t n_txq = 1;
  // With n_rxq > 1: RSS over these rte_eth RSS fields, those the PMD offers
  // (RTE_ETH_RSS_IP: source and destination IP; with RTE_ETH_RSS_L3_SRC_ONLY,
  // where the PMD offers it, the source alone); 0: no RSS.
  uint64_t rss_hf = 0;
  uint16_t rx_desc = 1024;  // adjusted to the driver's limits
  uint16_t tx_desc = 1024;
  bool promiscuous = true;  // ignored (reported) when the PMD does not support it
  uint32_t link_wait_ms = 2000;
  // net_af_xdp only: the outer UDP port the XDP steering program
  // (edge/xdp/ufab_steer.bpf.o, given with xdp_prog=) sends to the socket;
  // 0 leaves the program's default (7341).
  uint16_t xdp_udp_port = 0;
  // Ask the PMD for link status change events (RTE_ETH_EVENT_INTR_LSC, the
  // ethdev configuration's intr_conf.lsc) where it raises them (its
  // dev_flags has RTE_ETH_DEV_INTR_LSC: net_vhost, virtio-user, most NICs;
  // not net_memif), as testpmd does. The caller registers the callback.
  bool lsc_events = false;
  // The port's MTU (bytes of IP packet a frame carries), set at configure
  // time (rxmode.mtu) where the driver allows it; 0 leaves the driver's.
  // Above the driver's largest (its max_mtu, and max_rx_pktlen less the
  // Ethernet overhead): an error naming mtu_from for a device on a real bus
  // (PCI, auxiliary, ...), where the NIC would drop the larger frames; a
  // virtual device (the vdev bus: memif, tap, ring, ...) is left at its own
  // MTU and PortInfo::mtu_note says so, since its limit is often nominal
  // (net_memif says 1500 and carries any frame).
  uint16_t mtu = 0;
  std::string mtu_from = "mtu";  // the setting that asked for it (e.g. edge.fabric_mtu)
};

struct PortInfo {
  uint16_t port_id = 0;
  std::string name;       // device name, e.g. net_pcap0
  std::string driver;     // e.g. net_pcap
  bool link_up = false;
  uint32_t link_mbps = 0;  // 0 when unknown (virtual devices report what they like)
  bool promiscuous = false;
  uint16_t rx_desc = 0, tx_desc = 0;
  uint64_t rss_hf = 0;  // RSS fields in use (0: none)
  uint16_t n_txq = 0;  // TX queues configured: cfg.n_txq, or 1 where the PMD refused more TX than RX queues
  bool lsc_events = false;  // link status change events on (cfg.lsc_events and the PMD raises them)
  std::string note;  // what the operator should know about this port (e.g. no XDP steering)
  uint16_t mtu = 0;       // the port's MTU once configured (rte_eth_dev_get_mtu; 0: unknown)
  std::string mtu_note;   // cfg.mtu not applied, and why ("" when it was, or none was asked)
};

// The largest MTU port_id's driver takes (rte_eth_dev_info: max_mtu, and
// max_rx_pktlen less the Ethernet overhead the driver counts, as
// rte_eth_dev_configure checks them).
uint16_t max_mtu(const rte_eth_dev_info& dev);

// Configures and starts port_id with every rx queue fed from pool. Throws
// std::runtime_error naming the port and the failed step.
PortInfo setup_port(uint16_t port_id, rte_mempool* pool, const PortConfig& cfg);

// The port's link now, without waiting (rte_eth_link_get_nowait): up or
// down, or nullopt when the PMD cannot tell.
std::optional<bool> link_up_now(uint16_t port_id);

// Stops and closes a port (flushes drivers such as net_pcap's tx file); a
// memif port on DPDK's interrupt thread (eal.hpp, run_on_interrupt_thread).
void close_port(uint16_t port_id);

}  // namespace ufab::dpdk
