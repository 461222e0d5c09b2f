#include "pipeline/port_link.hpp"

#include <rte_pause.h>

#include <cerrno>

#include "edge/dpdk/port.hpp"
#include "pipeline/log.hpp"

namespace ufab::pipeline {

PortLinks::PortLinks(uint16_t n_ports)
    : n_(n_ports), links_(std::make_unique<PortLink[]>(n_ports)), what_(n_ports), registered_(n_ports, false) {}

void PortLinks::watch(uint16_t port, bool events, std::string what) {
  what_[port] = std::move(what);
  PortLink& l = links_[port];
  l.gone.store(false, std::memory_order_relaxed);
  l.up.store(dpdk::link_up_now(port).value_or(false), std::memory_order_release);
  l.tracked.store(true, std::memory_order_release);
  if (!events) return;  // polled
  if (const int rc = rte_eth_dev_callback_register(port, RTE_ETH_EVENT_INTR_LSC, &PortLinks::on_event, this); rc != 0) {
    UFAB_LOG(WARNING, "port %u (%s): no link events (callback: %d); its link is polled", port, what_[port].c_str(), rc);
    return;
  }
  registered_[port] = true;
  l.events.store(true, std::memory_order_release);
  update(port);  // a change between the first read and the registration, which raised no event for us
}

void PortLinks::poll(Nanos now) {
  if (now < next_poll_) return;
  next_poll_ = now + kPollInterval;
  for (uint16_t p = 0; p < n_; ++p)
    if (links_[p].tracked.load(std::memory_order_relaxed) && !links_[p].events.load(std::memory_order_relaxed) &&
        !links_[p].gone.load(std::memory_order_relaxed))
      update(p);
}

void PortLinks::unwatch() {
  for (uint16_t p = 0; p < n_; ++p) unregister(p);
}

void PortLinks::unregister(uint16_t p) {
  if (!registered_[p]) return;
  // -EAGAIN: the callback is running on the interrupt thread right now.
  while (rte_eth_dev_callback_unregister(p, RTE_ETH_EVENT_INTR_LSC, &PortLinks::on_event, this) == -EAGAIN) rte_pause();
  registered_[p] = false;
  links_[p].events.store(false, std::memory_order_relaxed);  // polled from here on, if at all
}

void PortLinks::forget(uint16_t port) {
  unregister(port);
  PortLink& l = links_[port];
  l.gone.store(true, std::memory_order_relaxed);  // poll() leaves it
  if (l.up.exchange(false, std::memory_order_acq_rel)) l.changes.fetch_add(1, std::memory_order_relaxed);
  l.tracked.store(true, std::memory_order_release);  // known down
}

int PortLinks::on_event(uint16_t port, rte_eth_event_type type, void* self, void*) {
  auto* links = static_cast<PortLinks*>(self);
  if (type == RTE_ETH_EVENT_INTR_LSC && port < links->n_) links->update(port);
  return 0;
}

void PortLinks::update(uint16_t port) {
  const std::optional<bool> now = dpdk::link_up_now(port);
  if (!now) return;
  const bool up = *now;
  PortLink& l = links_[port];
  if (l.up.exchange(up, std::memory_order_acq_rel) == up) return;  // an event that changed nothing
  l.changes.fetch_add(1, std::memory_order_relaxed);
  if (up)
    UFAB_LOG(NOTICE, "port %u (%s): link up", port, what_[port].c_str());
  else
    UFAB_LOG(NOTICE, "port %u (%s): link down; frames the PMD refuses count as link_down until it is up", port,
             what_[port].c_str());
}

}  // namespace ufab::pipeline
