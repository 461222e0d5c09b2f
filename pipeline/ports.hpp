// The edge's DPDK ports: brought up at start-up, and VM-side ports attached
// and removed while the edge runs (/ufab/port_add, /ufab/port_remove), as
// OVS-DPDK's add-port: a VM boots with a new vhost-user socket, or a memif
// or tap for a container, without restarting the edge and losing every
// pair's queued frames and learned windows.
//
//  - open_port: one port brought up as at start-up: a TX queue per worker
//    where the PMD has them (the rest send through the port's TX ring), an
//    RX queue per worker where it has them and --rx-queues allows (else one,
//    polled by one worker: layout.hpp RxMode), VM ports hashing by source
//    address (rss_reta.hpp), link status events where the PMD raises them.
//  - add_port(devargs): the control lcore attaches the device
//    (rte_dev_probe, the EAL's hotplug: e.g. "net_vhost3,iface=/run/vm3.sock"),
//    brings it up with open_port (without waiting for its link: a vhost-user
//    VM connects when it boots), gives its RX queue 0 to the worker polling
//    the fewest ports, then each worker adds it to the ports it polls in a
//    command between two bursts. From then a reload may put VMs on it
//    (local_vms.hpp). Fabric ports are fixed at start-up.
//  - remove_port(port): refused while a VM of the running configuration
//    names it; else each worker stops polling it and sends what it holds for
//    it (a command), its TX buffers are closed (what still comes for it, e.g.
//    an ARP answer handed over from a worker, is dropped as link_down), and
//    the port is stopped, closed and detached (rte_dev_remove). Its counters
//    stay (the conservation sums them); a port attached later may take its id
//    and counts on.
//
// Room: every per-port array is sized at start-up for the ports the EAL
// found plus --spare-ports (Edge), so nothing a worker indexes moves. The
// EAL gives an attached port the lowest free id; one beyond that room is
// detached again and refused. Both run on the control lcore for the
// telemetry commands, which are refused once the edge stops (telemetry.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "edge/dpdk/port.hpp"

namespace ufab::pipeline {

class Edge;

struct PortOpened {
  dpdk::PortInfo info;
  std::string line;  // "ufab-edge port 2 net_vhost1 (net_vhost) link down, VM side, link events on"
};

// Brings up port p of e (start-up: link_wait_ms as configured; at runtime
// 0), attaches it to the workers (Edge::attach_port), records its RSS
// fields in e.rss_hf and follows its link. Throws std::runtime_error naming
// the port and the step that failed.
PortOpened open_port(Edge& e, uint16_t p, uint32_t link_wait_ms);

// The DPDK port of device `name` (rte_eth_dev_get_port_by_name), for
// edge::resolve_ports: a VM's `port:` may name its device.
std::optional<uint16_t> port_by_name(const std::string& name);

// Control lcore. "" and *port, *line set, or why nothing was attached.
std::string add_port(Edge& e, const std::string& devargs, uint16_t* port, std::string* line);
// Control lcore. "" or why the port stays.
std::string remove_port(Edge& e, uint16_t port);

}  // namespace ufab::pipeline
