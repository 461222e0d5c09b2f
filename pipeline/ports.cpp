// Ports at start-up and at runtime (ports.hpp).
#include "pipeline/ports.hpp"

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "pipeline/edge.hpp"
#include "pipeline/log.hpp"
#include "pipeline/rss_reta.hpp"
#include "pipeline/stages.hpp"

namespace ufab::pipeline {

PortOpened open_port(Edge& e, uint16_t p, uint32_t link_wait_ms) {
  const size_t workers = e.layout.workers();
  rte_eth_dev_info dev{};
  rte_eth_dev_info_get(p, &dev);
  const std::string driver = dev.driver_name != nullptr ? dev.driver_name : "";
  const bool fabric = e.cfg.is_fabric_port(p);
  // One TX queue per worker where the PMD has them; the others send through
  // the port's TX ring (tx_buffer.hpp). RX: a queue per worker where the
  // port has them (layout.hpp RxMode), else queue 0 polled by one worker.
  // memif connects only when both ends ask for the same number of rings,
  // so it keeps one queue (its peer, e.g. ufab-core, has one).
  dpdk::PortConfig pc;
  const bool one_queue = driver == "net_memif";
  pc.n_txq = static_cast<uint16_t>(one_queue ? 1 : std::max<size_t>(1, std::min<size_t>(workers, dev.max_tx_queues)));
  std::string rx_why;
  pc.n_rxq = rx_queues_for(workers, dev.max_rx_queues, driver, e.rx_queue_per_worker, &rx_why);
  // VM ports hash the source address alone where the PMD can, so that the
  // redirection table can put each VM on its owner's queue (rss_reta.hpp).
  pc.rss_hf = fabric ? RTE_ETH_RSS_IP : RTE_ETH_RSS_IP | RTE_ETH_RSS_L3_SRC_ONLY;
  pc.xdp_udp_port = e.cfg.udp_port;  // host mode: what the XDP program steers to us
  pc.lsc_events = true;              // pipeline/port_link.hpp
  pc.link_wait_ms = link_wait_ms;
  // The fabric's MTU on the fabric ports (edge.fabric_mtu). A VM-side port
  // keeps its driver's MTU unless the edge's mbufs are larger than DPDK's
  // default (a jumbo fabric): then it takes what they hold, so the VMs'
  // jumbo frames come in, and those above the VM MTU are answered
  // (too_big.hpp) rather than lost in the port.
  if (fabric) {
    pc.mtu = e.cfg.fabric_mtu;
    pc.mtu_from = "edge.fabric_mtu";
  } else if (const uint32_t room = rte_pktmbuf_data_room_size(e.pool()); room > RTE_MBUF_DEFAULT_BUF_SIZE) {
    const uint32_t held = room - RTE_PKTMBUF_HEADROOM - RTE_ETHER_HDR_LEN - 2 * RTE_VLAN_HLEN;
    pc.mtu = static_cast<uint16_t>(std::min<uint32_t>(held, dpdk::max_mtu(dev)));
    pc.mtu_from = "the VM side's MTU";
  }
  PortOpened out;
  out.info = dpdk::setup_port(p, e.pool(), pc);
  if (p < e.rss_hf.size()) e.rss_hf[p] = out.info.rss_hf;
  e.attach_port(p, out.info.n_txq, pc.n_rxq, rx_why);
  const char* side = fabric ? "fabric" : "VM side";
  e.links.watch(p, out.info.lsc_events, out.info.name + ", " + side);
  out.line = "ufab-edge port " + std::to_string(p) + " " + out.info.name + " (" + out.info.driver + ") link " +
             (out.info.link_up ? "up" : "down") + ", " + side + ", MTU " + std::to_string(out.info.mtu) +
             (out.info.mtu_note.empty() ? "" : " (" + out.info.mtu_note + ")") + ", link events " +
             (out.info.lsc_events ? "on" : "off (the PMD raises none): polled every 10 ms");
  return out;
}

std::optional<uint16_t> port_by_name(const std::string& name) {
  uint16_t p = 0;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &p) != 0) return std::nullopt;
  return p;
}

namespace {

// The device's name: devargs up to its first comma ("net_vhost3,iface=...").
std::string device_name(const std::string& devargs) { return devargs.substr(0, devargs.find(',')); }

void detach(uint16_t p) {
  rte_eth_dev_info dev{};
  rte_device* d = rte_eth_dev_info_get(p, &dev) == 0 ? dev.device : nullptr;
  dpdk::close_port(p);
  if (d != nullptr) {
    if (const int rc = rte_dev_remove(d); rc != 0) UFAB_LOG(WARNING, "port %u: rte_dev_remove: %s", p, std::strerror(-rc));
  }
}

}  // namespace

std::string add_port(Edge& e, const std::string& devargs, uint16_t* port, std::string* line) {
  const std::string name = device_name(devargs);
  if (name.empty()) return "usage: /ufab/port_add,DEVARGS (e.g. net_vhost3,iface=/run/vm3.sock)";
  uint16_t p = 0;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &p) == 0)
    return "a port named " + name + " exists already (port " + std::to_string(p) + ")";
  uint16_t free_ids = 0;
  for (uint16_t q = 0; q < e.port_capacity(); ++q) free_ids += !rte_eth_dev_is_valid_port(q);
  const std::string room = "room for " + std::to_string(e.port_capacity()) + " ports (the start-up ports and --spare-ports)";
  if (free_ids == 0) return "no port id left: " + room;
  if (const int rc = rte_dev_probe(devargs.c_str()); rc != 0)
    return "cannot attach " + devargs + ": " + std::strerror(-rc) + " (the EAL's log names the cause)";
  if (rte_eth_dev_get_port_by_name(name.c_str(), &p) != 0) {
    if (rte_eal_hotplug_remove("vdev", name.c_str()) != 0) rte_eal_hotplug_remove("pci", name.c_str());
    return name + " attached no ethdev port (is it a network PMD?); detached again";
  }
  if (p >= e.port_capacity()) {
    detach(p);
    return name + " took port id " + std::to_string(p) + ", beyond the " + room + "; detached again";
  }
  // Its RX queue 0 to the worker with the fewest ports (dispatch ports; with
  // a queue per worker every worker polls its own).
  e.layout.rx_worker[p] = e.layout.worker_polling_fewest();
  PortOpened o;
  try {
    o = open_port(e, p, 0);
  } catch (const std::exception& x) {
    e.layout.rx_worker[p] = -1;
    e.links.forget(p);
    detach(p);
    return x.what();
  }
  e.set_port_present(p, true);
  // Now each worker polls it (the layout's entries for it are written:
  // the command ring orders them before the worker reads them).
  e.on_workers([p](EdgeState& s) {
    if (std::find(s.vm_ports.begin(), s.vm_ports.end(), p) == s.vm_ports.end()) s.vm_ports.push_back(p);
  });
  steer_vm_ports_by_reta(e.cfg, e.rss_hf, e.layout);
  UFAB_LOG(NOTICE, "port %u attached: %s", p, o.line.c_str());
  *port = p;
  *line = o.line;
  return "";
}

std::string remove_port(Edge& e, uint16_t p) {
  if (!e.port_present(p)) return "port " + std::to_string(p) + " does not exist";
  if (e.cfg.is_fabric_port(p)) return "port " + std::to_string(p) + " is a fabric port (fixed at start-up)";
  std::string vms;
  for (const edge::VmCfg& v : e.cfg.vms)
    if (!v.removed && v.port == p) vms += (vms.empty() ? "" : ", ") + v.name;
  if (!vms.empty())
    return "port " + std::to_string(p) + " has local VM(s) " + vms + ": take them off it (vms:) and reload first";
  // Workers from the last to worker 0: each stops polling the port and sends
  // what it holds for it (a worker without a TX queue into the port's TX
  // ring), then worker 0, which drains that ring, sends the rest. From then
  // the TX buffers are closed.
  for (size_t w = e.shards.size(); w-- > 0;)
    e.on_worker(w, [p](EdgeState& s) {
      s.vm_ports.erase(std::remove(s.vm_ports.begin(), s.vm_ports.end(), p), s.vm_ports.end());
      if (s.worker == 0) drain_tx_rings(s);
      s.tx[p].flush();
      s.tx[p].close();
    });
  e.links.forget(p);
  detach(p);
  e.layout.rx_worker[p] = -1;
  e.layout.rx_queues[p] = 1;
  e.layout.rx_mode[p] = RxMode::dispatch;
  e.layout.rx_why[p].clear();
  if (p < e.layout.rx_reta.size()) e.layout.rx_reta[p].clear();
  if (p < e.rss_hf.size()) e.rss_hf[p] = 0;
  e.set_port_present(p, false);
  UFAB_LOG(NOTICE, "port %u removed", p);
  return "";
}

}  // namespace ufab::pipeline
