#include "p4/softswitch/dataplane.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <algorithm>
#include <cstring>
#include <ctime>

namespace ufab::core {

Dataplane::Dataplane(swmodel::SwitchModel& model, std::vector<EgressPort>& ports, uint32_t burst)
    : model_(model), ports_(ports), burst_(static_cast<uint16_t>(std::min<size_t>(burst, kMaxBurst))) {
  frame_.reserve(kFrameCap);
  stats_.ports.resize(ports_.size());
}

// Ingress pipeline on a copy of the frame (the model may rewrite it: the
// consumed route label, or a failure notice of another length, App. G), then
// the copy goes back into the mbuf and the mbuf into the egress queue.
void Dataplane::ingress_one(rte_mbuf* m, uint16_t in_port, Nanos now) {
  PortStats& ps = stats_.ports[in_port];
  ++ps.rx;
  ps.rx_bytes += rte_pktmbuf_pkt_len(m);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (unlikely(m->nb_segs != 1 || len > kFrameCap)) {
    stats_.drop(CoreDrop::oversize);
    rte_pktmbuf_free(m);
    return;
  }
  const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
  frame_.assign(data, data + len);
  const swmodel::Decision d = model_.ingress(frame_, in_port, now);
  if (!d.forward) {  // counted by the model, by reason
    rte_pktmbuf_free(m);
    return;
  }
  const size_t out_len = frame_.size();
  if (unlikely(out_len != len)) {
    const bool ok = out_len > len ? rte_pktmbuf_append(m, static_cast<uint16_t>(out_len - len)) != nullptr
                                  : rte_pktmbuf_trim(m, static_cast<uint16_t>(len - out_len)) == 0;
    if (frame_.capacity() < kFrameCap) frame_.reserve(kFrameCap);  // the model replaced the buffer
    if (!ok) {
      stats_.drop(CoreDrop::no_room);
      rte_pktmbuf_free(m);
      return;
    }
  }
  std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame_.data(), out_len);
  EgressPort& e = ports_[d.port];
  if (unlikely(!e.enqueue(m, static_cast<uint32_t>(out_len), in_port))) {
    stats_.drop(CoreDrop::queue_full);
    ++stats_.ports[d.port].queue_full;
    rte_pktmbuf_free(m);
    return;
  }
  ++stats_.queued;
  PortStats& eps = stats_.ports[d.port];
  eps.peak_queue_bytes = std::max(eps.peak_queue_bytes, e.queue_bytes);
}

uint32_t Dataplane::receive(uint16_t port, Nanos now) {
  rte_mbuf* pkts[kMaxBurst];
  const uint16_t n = rte_eth_rx_burst(port, 0, pkts, burst_);
  for (uint16_t i = 0; i < n; ++i) ingress_one(pkts[i], port, now);
  return n;
}

// Traffic manager: the head of the queue leaves when the shaper has credit;
// the egress pipeline stamps it with the depth it leaves behind (App. G:
// q_l is read in egress), then it enters the delay line.
void Dataplane::dequeue(uint16_t port, Nanos now) {
  EgressPort& e = ports_[port];
  for (uint16_t n = 0; n < burst_ && !e.queue.empty() && !e.line.full() && e.shaper.ready(now); ++n) {
    const QueuedPkt q = e.queue.pop();
    e.queue_bytes -= q.len;
    e.shaper.pay(q.len);
    const std::span<uint8_t> frame(rte_pktmbuf_mtod(q.m, uint8_t*), q.len);
    if (!model_.egress(frame, port, q.in_port, now, e.queue_bytes).forward) {  // counted by the model
      --stats_.queued;
      rte_pktmbuf_free(q.m);
      continue;
    }
    e.line.push({q.m, now + e.delay});
  }
}

uint32_t Dataplane::transmit(uint16_t port, Nanos now) {
  EgressPort& e = ports_[port];
  rte_mbuf* pkts[kMaxBurst];
  uint16_t n = 0;
  while (n < burst_ && !e.line.empty() && e.line.front().release <= now) pkts[n++] = e.line.pop().m;
  if (n == 0) return 0;
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) bytes += rte_pktmbuf_pkt_len(pkts[i]);
  const uint16_t sent = rte_eth_tx_burst(port, 0, pkts, n);
  for (uint16_t i = sent; i < n; ++i) {
    bytes -= rte_pktmbuf_pkt_len(pkts[i]);
    stats_.drop(CoreDrop::tx_full);
    rte_pktmbuf_free(pkts[i]);
  }
  PortStats& ps = stats_.ports[port];
  ps.tx += sent;
  ps.tx_bytes += bytes;
  stats_.queued -= n;
  return sent;
}

uint32_t Dataplane::poll(Nanos now) {
  uint32_t work = 0;
  const auto n_ports = static_cast<uint16_t>(ports_.size());
  for (uint16_t p = 0; p < n_ports; ++p) work += receive(p, now);
  for (uint16_t p = 0; p < n_ports; ++p) {
    dequeue(p, now);
    work += transmit(p, now);
  }
  return work;
}

void Dataplane::run(const LoopConfig& cfg, const dpdk::TscClock& clock, const volatile std::sig_atomic_t* stop) {
  uint64_t polls = 0, idle_polls = 0;
  Nanos last_rx = clock.now();
  Nanos next_stats = last_rx + cfg.stats_interval;
  uint64_t last_rx_count = 0;
  while (*stop == 0) {
    const Nanos wall = clock.now();
    const Nanos now = cfg.fake_clock_ns != 0 ? ++polls * cfg.fake_clock_ns : wall;
    model_.tick(now);  // aging epoch (§4.2): a sweep only when the epoch advances
    const uint32_t work = poll(now);
    if (const uint64_t rx = stats_.rx(); rx != last_rx_count) {
      last_rx_count = rx;
      last_rx = wall;
    }
    if (cfg.stats_interval != 0 && wall >= next_stats) {
      print_stats(stdout, "stats", wall, stats_, model_);
      next_stats = wall + cfg.stats_interval;
    }
    if (cfg.exit_after_idle != 0 && stats_.queued == 0 && wall - last_rx >= cfg.exit_after_idle) break;
    if (work != 0) {
      idle_polls = 0;
      continue;
    }
    // Idle: spin briefly, then yield the core so several switches and edges
    // can share two cores. Sleep only with empty queues, so a shaped or
    // delayed frame is never held back by a sleep.
    if (++idle_polls < 256 || stats_.queued != 0) {
      rte_pause();
    } else {
      const timespec ts{0, 50'000};
      nanosleep(&ts, nullptr);
    }
  }
  print_stats(stdout, "final", clock.now(), stats_, model_);
  print_port_stats(stdout, stats_, model_);
}

void Dataplane::flush() {
  for (EgressPort& e : ports_) {
    while (!e.queue.empty()) rte_pktmbuf_free(e.queue.pop().m);
    while (!e.line.empty()) rte_pktmbuf_free(e.line.pop().m);
    e.queue_bytes = 0;
  }
  stats_.queued = 0;
}

}  // namespace ufab::core
