// The link state of ufab-edge's ports, as their PMDs' link status change
// events (RTE_ETH_EVENT_INTR_LSC) report it: a VM's vhost-user or
// virtio-user connection coming and going (the VM restarted, QEMU killed),
// a memif peer leaving, a cable. Each change is logged and counted; a frame
// the PMD refuses while the port's link is down is dropped as link_down
// rather than tx_full, so an operator tells a VM that is gone from one that
// is slow. A port whose PMD raises no such events keeps its start-up state
// here (known_down() is then never true; telemetry reads the link itself).
// The events arrive on DPDK's interrupt thread; the workers only read the
// flags, with relaxed loads, and only for a burst the PMD refused.
#pragma once

#include <rte_ethdev.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ufab::pipeline {

struct PortLink {
  std::atomic<bool> events{false};   // the PMD raises link status change events, and they are watched
  std::atomic<bool> up{false};       // as of the last event (or of watch())
  std::atomic<uint64_t> changes{0};  // up <-> down transitions the events reported since start-up

  bool known_down() const {
    return events.load(std::memory_order_relaxed) && !up.load(std::memory_order_relaxed);
  }
};

class PortLinks {
 public:
  explicit PortLinks(uint16_t n_ports);
  ~PortLinks() { unwatch(); }
  PortLinks(const PortLinks&) = delete;
  PortLinks& operator=(const PortLinks&) = delete;

  // After the port started: records its link now and, with `events` (the
  // PMD raises them: dpdk::PortInfo::lsc_events), follows its changes.
  // `what` names the port in the log lines (e.g. "net_vhost0, VM side").
  void watch(uint16_t port, bool events, std::string what);
  // Stops following the events (before the ports close). Idempotent.
  void unwatch();

  const PortLink& operator[](uint16_t port) const { return links_[port]; }
  uint16_t size() const { return n_; }

 private:
  static int on_event(uint16_t port, rte_eth_event_type type, void* self, void* unused);
  // Reads the port's link now; a change from what was recorded is counted
  // and logged.
  void update(uint16_t port);

  uint16_t n_;
  std::unique_ptr<PortLink[]> links_;
  std::vector<std::string> what_;
  std::vector<bool> registered_;
};

}  // namespace ufab::pipeline
