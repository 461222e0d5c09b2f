#include "p4/softswitch/dataplane.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <optional>

#include "edge/dpdk/port.hpp"
#include "edge/dpdk/timer_slack.hpp"

namespace ufab::core {

namespace {

// The frame's Ethernet payload: its length less the header and up to two
// VLAN tags (802.1Q, 802.1ad), which a port's MTU does not count.
uint32_t ethernet_payload(const uint8_t* d, uint32_t len) {
  uint32_t head = 14;
  for (int tags = 0; tags < 2 && len >= head + 4; ++tags) {
    const uint16_t tpid = static_cast<uint16_t>(d[head - 2] << 8 | d[head - 1]);
    if (tpid != 0x8100 && tpid != 0x88a8) break;
    head += 4;
  }
  return len > head ? len - head : 0;
}

}  // namespace

Dataplane::Dataplane(swmodel::SwitchModel& model, std::vector<EgressPort>& ports, uint32_t burst, uint16_t mtu)
    : model_(model), ports_(ports), burst_(static_cast<uint16_t>(std::min<size_t>(burst, kMaxBurst))), mtu_(mtu) {
  frame_.reserve(kFrameCap);
  stats_.ports.resize(ports_.size());
  capture_.assign(ports_.size(), nullptr);
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
  if (unlikely(ethernet_payload(data, len) > mtu_)) {  // a giant: the port's MAC drops it
    stats_.drop(CoreDrop::too_big);
    rte_pktmbuf_free(m);
    return;
  }
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
  eps.interval_peak_queue_bytes = std::max(eps.interval_peak_queue_bytes, e.queue_bytes);
}

uint32_t Dataplane::receive(uint16_t port, Nanos now) {
  rte_mbuf* pkts[kMaxBurst];
  const uint16_t n = rte_eth_rx_burst(port, 0, pkts, burst_);
  // Frames are dated when the burst was taken (live clock): a loop that was
  // descheduled after reading its time would otherwise date frames that
  // arrived meanwhile too early, and the delay line would release them early.
  if (n != 0 && live_clock_ != nullptr) now = std::max(now, live_clock_->now());
  if (PortCapture* const cap = capture_[port]; unlikely(cap != nullptr))
    for (uint16_t i = 0; i < n; ++i)
      cap->write(rte_pktmbuf_mtod(pkts[i], const uint8_t*), rte_pktmbuf_data_len(pkts[i]), rte_pktmbuf_pkt_len(pkts[i]), now);
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
  if (unlikely(sent < n)) {
    // Refused: its link, read only now, tells a gone peer (a memif peer
    // that exited, a VM that left) from a full ring.
    const CoreDrop why = dpdk::link_up_now(port) == false ? CoreDrop::link_down : CoreDrop::tx_full;
    for (uint16_t i = sent; i < n; ++i) {
      bytes -= rte_pktmbuf_pkt_len(pkts[i]);
      stats_.drop(why);
      rte_pktmbuf_free(pkts[i]);
    }
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
  if (work != 0 && live_clock_ != nullptr) now = std::max(now, live_clock_->now());  // as receive()
  for (uint16_t p = 0; p < n_ports; ++p) {
    dequeue(p, now);
    work += transmit(p, now);
  }
  return work;
}

Nanos Dataplane::next_departure(Nanos now) const {
  Nanos next = UINT64_MAX;
  for (const EgressPort& e : ports_) {
    if (!e.line.empty()) next = std::min(next, e.line.front().release > now ? e.line.front().release - now : 0);
    if (!e.queue.empty() && !e.line.full()) next = std::min(next, e.shaper.ready_in());
  }
  return next;
}

void Dataplane::scenario_step(const LoopConfig& cfg, Nanos now, size_t& next_event, Nanos& next_sample,
                              Nanos& next_link_check) {
  while (next_event < cfg.events.size() && now >= cfg.events[next_event].at) {
    const PortEvent& ev = cfg.events[next_event++];
    model_.set_port_up(ev.port, ev.up);
    std::printf("ufab-core event t=%.6fs port=%u %s (--event)\n", static_cast<double>(now) / 1e9, ev.port,
                ev.up ? "up" : "down");
    std::fflush(stdout);
  }
  if (cfg.watch_links && now >= next_link_check) {
    next_link_check = now + kMs;
    for (uint16_t p = 0; p < ports_.size(); ++p) {
      const std::optional<bool> now_up = dpdk::link_up_now(p);
      if (!now_up) continue;
      const int8_t up = *now_up ? 1 : 0;
      // Follow changes only once the link was up: a peer that has not
      // connected yet is not a failure.
      if (link_[p] == 1 && up == 0) {
        model_.set_port_up(p, false);
        std::printf("ufab-core event t=%.6fs port=%u down (link lost)\n", static_cast<double>(now) / 1e9, p);
        std::fflush(stdout);
      } else if (link_[p] == 0 && up == 1) {
        model_.set_port_up(p, true);
        std::printf("ufab-core event t=%.6fs port=%u up (link back)\n", static_cast<double>(now) / 1e9, p);
        std::fflush(stdout);
      }
      if (up == 1 || link_[p] == 1) link_[p] = up;
    }
  }
  if (cfg.sample_ns != 0 && now >= next_sample) {
    if (last_tx_bytes_.empty()) last_tx_bytes_.assign(ports_.size(), 0);
    for (uint16_t p = 0; p < ports_.size(); ++p) {
      PortStats& ps = stats_.ports[p];
      samples_.push_back({next_sample, p, ps.interval_peak_queue_bytes, ps.tx_bytes - last_tx_bytes_[p]});
      last_tx_bytes_[p] = ps.tx_bytes;
      ps.interval_peak_queue_bytes = ports_[p].queue_bytes;
    }
    next_sample += cfg.sample_ns;
    if (next_sample <= now) next_sample = now - now % cfg.sample_ns + cfg.sample_ns;  // skip missed samples
  }
}

void Dataplane::run(const LoopConfig& cfg, const dpdk::TscClock& clock, const volatile std::sig_atomic_t* stop) {
  uint64_t polls = 0, idle_polls = 0;
  Nanos last_rx = clock.now();
  Nanos next_stats = last_rx + cfg.stats_interval;
  uint64_t last_rx_count = 0;
  const bool scenario = !cfg.events.empty() || cfg.watch_links || cfg.sample_ns != 0;
  size_t next_event = 0;
  Nanos next_sample = cfg.sample_ns, next_link_check = 0;
  link_.assign(ports_.size(), -1);
  live_clock_ = cfg.fake_clock_ns != 0 ? nullptr : &clock;
  (void)dpdk::set_fine_timer_slack();  // its naps wait for a departure time (edge/dpdk/timer_slack.hpp)
  while (*stop == 0) {
    const Nanos wall = clock.now();
    const Nanos now = cfg.fake_clock_ns != 0 ? ++polls * cfg.fake_clock_ns : wall;
    model_.tick(now);  // aging epoch (§4.2): a sweep only when the epoch advances
    if (scenario) {
      const int64_t sc = static_cast<int64_t>(wall) + cfg.scenario_offset;
      if (sc >= 0) scenario_step(cfg, static_cast<Nanos>(sc), next_event, next_sample, next_link_check);
    }
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
    // can share two cores (cfg.idle_nap; 0 busy-polls). With frames queued
    // (behind the shaper or in the delay line) sleep only until the first
    // can leave, and only when that is more than cfg.min_nap away (a late
    // wake-up within the shaper's depth costs no capacity; run with a small
    // timer slack, see README).
    if (++idle_polls < 256 || cfg.idle_nap == 0) {
      rte_pause();
      continue;
    }
    Nanos nap = cfg.idle_nap;  // nothing queued: the whole nap, however short
    if (stats_.queued != 0) {
      const Nanos wait = cfg.fake_clock_ns != 0 ? 0 : next_departure(now);
      nap = wait == UINT64_MAX || wait <= cfg.min_nap ? 0 : std::min<Nanos>(wait, cfg.idle_nap);
    }
    if (nap != 0) {
      const timespec ts{0, static_cast<long>(nap)};
      nanosleep(&ts, nullptr);
    } else {
      rte_pause();
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
