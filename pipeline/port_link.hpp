// The link state of ufab-edge's ports, as their PMDs' link status change
// events (RTE_ETH_EVENT_INTR_LSC) report it: a VM's vhost-user or
// virtio-user connection coming and going (the VM restarted, QEMU killed),
// a memif peer leaving, a cable. Each change is logged and counted; a frame
// the PMD refuses while the port's link is down is dropped as link_down
// rather than tx_full, so an operator tells a VM that is gone from one that
// is slow. A port whose PMD raises no such events (net_memif, net_pcap) has
// its link read by the control lcore every kPollInterval instead (poll()),
// as ufab-core's --watch-links does. The events arrive on DPDK's interrupt
// thread; the workers only read the flags, with relaxed loads, and only for
// a burst the PMD refused.
#pragma once

#include <rte_ethdev.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "control/clock.hpp"

namespace ufab::pipeline {

struct PortLink {
  std::atomic<bool> tracked{false};  // `up` follows the link (PortLinks::watch): by events, or polled
  std::atomic<bool> events{false};   // by the PMD's link status change events (else polled)
  std::atomic<bool> up{false};       // as of the last event or poll
  std::atomic<uint64_t> changes{0};  // up <-> down transitions seen since start-up
  std::atomic<bool> gone{false};     // the port was removed at runtime (PortLinks::forget): down, not polled

  bool known_down() const {
    return tracked.load(std::memory_order_relaxed) && !up.load(std::memory_order_relaxed);
  }
};

class PortLinks {
 public:
  explicit PortLinks(uint16_t n_ports);
  ~PortLinks() { unwatch(); }
  PortLinks(const PortLinks&) = delete;
  PortLinks& operator=(const PortLinks&) = delete;

  static constexpr Nanos kPollInterval = 10 * kMs;

  // After the port started: records its link now and follows its changes,
  // by the PMD's events with `events` (it raises them:
  // dpdk::PortInfo::lsc_events), else by poll(). `what` names the port in
  // the log lines (e.g. "net_vhost0, VM side").
  void watch(uint16_t port, bool events, std::string what);
  // The control lcore, every iteration: reads the links of the ports
  // without events once per kPollInterval.
  void poll(Nanos now);
  // Stops following the events (before the ports close). Idempotent.
  void unwatch();
  // One port stops being followed (it is removed at runtime, ports.hpp):
  // its events unregistered, its link down from here on, as the TX buffers
  // count what is still sent to it (link_down).
  void forget(uint16_t port);

  const PortLink& operator[](uint16_t port) const { return links_[port]; }
  uint16_t size() const { return n_; }

 private:
  static int on_event(uint16_t port, rte_eth_event_type type, void* self, void* unused);
  void unregister(uint16_t port);
  // Reads the port's link now; a change from what was recorded is counted
  // and logged.
  void update(uint16_t port);

  uint16_t n_;
  std::unique_ptr<PortLink[]> links_;
  std::vector<std::string> what_;
  std::vector<bool> registered_;
  Nanos next_poll_ = 0;
};

}  // namespace ufab::pipeline
