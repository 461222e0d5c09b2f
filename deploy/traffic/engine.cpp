#include "deploy/traffic/engine.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "edge/dpdk/timer_slack.hpp"
#include "probe/wire.hpp"

namespace ufab::traffic {

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

std::vector<uint8_t> frame_template(const FlowSpec& f) {
  wire::OuterAddrs a;
  a.src_mac = f.src_mac;
  a.dst_mac = f.dst_mac;
  a.src_ip = f.src_ip;
  a.dst_ip = f.dst_ip;
  a.src_port = f.src_port;
  a.dst_port = f.dst_port;
  std::vector<uint8_t> t(f.frame_bytes, 0);
  const size_t payload = f.frame_bytes - wire::kOuterBytes;
  wire::encode_outer(a, payload, t);
  write_header(t.data() + wire::kOuterBytes, PayloadHeader{f.tenant, f.flow, 0, 0});
  for (size_t i = wire::kOuterBytes + kPayloadHeaderBytes; i < t.size(); ++i) t[i] = static_cast<uint8_t>(i);
  return t;
}

// The ufab-traffic payload of an Ethernet/IPv4/UDP frame, looking inside a
// uFAB tunnel (outer UDP port 7341, data shim) once. Empty when none.
std::span<const uint8_t> find_payload(std::span<const uint8_t> f, uint32_t& src_ip, int depth = 0) {
  if (f.size() < wire::kOuterBytes || f[12] != 0x08 || f[13] != 0x00) return {};
  const size_t ihl = (f[14] & 0x0f) * 4u;
  if ((f[14] >> 4) != 4 || ihl < 20 || f[23] != 17 || f.size() < 14 + ihl + 8) return {};
  src_ip = static_cast<uint32_t>(get_be(&f[26], 4));
  const size_t udp = 14 + ihl;
  const auto dport = static_cast<uint16_t>(get_be(&f[udp + 2], 2));
  if (dport == wire::kUdpPort && depth == 0) {
    wire::FrameView v;
    if (wire::parse_frame(f, v) != wire::WireError::ok || v.shim.next != wire::kNextData) return {};
    return find_payload(f.subspan(v.payload_offset, v.payload_len), src_ip, 1);
  }
  return f.subspan(udp + 8);
}

}  // namespace

Engine::Engine(const Options& o, rte_mempool* pool, uint16_t n_ports)
    : opt_(o), pool_(pool), tally_(o.interval_ns), ports_(n_ports), pending_(n_ports) {
  for (const FlowSpec& f : o.flows) {
    flows_.push_back(FlowState{f, Pacer(f), frame_template(f), 0, 0});
    tally_.tenant(f.tenant);  // tenants appear in the report even if nothing is sent
  }
  for (auto& p : pending_) p.reserve(kMaxBurst);
}

Engine::~Engine() {
  for (auto& p : pending_)
    for (rte_mbuf* m : p) rte_pktmbuf_free(m);
}

uint32_t Engine::receive(uint16_t port, uint64_t now, uint64_t mono) {
  rte_mbuf* pkts[kMaxBurst];
  const uint16_t n = rte_eth_rx_burst(port, 0, pkts, static_cast<uint16_t>(opt_.burst));
  if (n != 0) {
    // Stamp the burst when it was taken, not when this loop began: a
    // process descheduled in between would otherwise date frames that
    // arrived meanwhile too early (one-way latencies below the fabric's
    // delay were measured under load).
    const uint64_t taken = mono_ns();
    if (taken > mono) {
      now += taken - mono;
      mono = taken;
    }
  }
  PortCounters& pc = ports_[port];
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    const std::span<const uint8_t> f(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
    ++pc.rx;
    pc.rx_bytes += f.size();
    uint32_t src = 0;
    PayloadHeader h;
    if (read_header(find_payload(f, src), h))
      tally_.on_rx(h, src, rte_pktmbuf_pkt_len(m), now, mono);
    else
      tally_.on_foreign();
  }
  rte_pktmbuf_free_bulk(pkts, n);
  return n;
}

// Sends what is pending on a port; returns frames sent.
uint32_t Engine::flush(uint16_t port) {
  auto& p = pending_[port];
  if (p.empty()) return 0;
  const uint16_t sent = rte_eth_tx_burst(port, 0, p.data(), static_cast<uint16_t>(p.size()));
  for (uint16_t i = 0; i < sent; ++i) ports_[port].tx_bytes += rte_pktmbuf_pkt_len(p[i]);
  ports_[port].tx += sent;
  if (sent < p.size()) ++ports_[port].tx_retries;
  p.erase(p.begin(), p.begin() + sent);
  return sent;
}

uint32_t Engine::generate(uint64_t now, uint64_t mono) {
  uint32_t made = 0;
  for (FlowState& f : flows_) {
    auto& pend = pending_[f.spec.port];
    // A full vNIC ring holds the flow back (the VM cannot send faster than
    // the edge takes frames); its pacer then forgets the debt beyond a burst.
    while (pend.size() < opt_.burst && f.pacer.due(now)) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      if (m == nullptr) {
        ++f.alloc_fail;
        break;
      }
      uint8_t* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(f.tmpl.size())));
      std::memcpy(d, f.tmpl.data(), f.tmpl.size());
      write_seq_ts(d + wire::kOuterBytes, f.seq++, mono);
      pend.push_back(m);
      f.pacer.sent();
      tally_.on_tx(f.spec.tenant, static_cast<uint32_t>(f.tmpl.size()), now);
      ++made;
    }
  }
  return made;
}

uint64_t Engine::next_due(uint64_t now) const {
  uint64_t next = UINT64_MAX;
  for (const FlowState& f : flows_) next = std::min(next, f.pacer.next_due(now));
  return next;
}

void Engine::run(uint64_t t0, const volatile std::sig_atomic_t* stop) {
  const auto n_ports = static_cast<uint16_t>(ports_.size());
  uint64_t last_rx = 0, idle_polls = 0;
  (void)dpdk::set_fine_timer_slack();  // its naps wait for a flow's next send (edge/dpdk/timer_slack.hpp)
  while (*stop == 0) {
    const uint64_t mono = mono_ns();
    const uint64_t now = mono > t0 ? mono - t0 : 0;  // scenario time; before t0 only the sink runs
    if (opt_.duration_ns != 0 && mono >= t0 && now >= opt_.duration_ns) break;
    uint32_t work = 0;
    for (uint16_t p = 0; p < n_ports; ++p) {
      const uint32_t r = receive(p, now, mono);
      if (r != 0) last_rx = now;
      work += r;
    }
    if (mono >= t0) {
      for (uint16_t p = 0; p < n_ports; ++p) work += flush(p);
      generate(now, mono);
      for (uint16_t p = 0; p < n_ports; ++p) work += flush(p);
    }
    const uint64_t due = mono >= t0 ? next_due(now) : UINT64_MAX;
    bool pending = false;
    for (const auto& p : pending_) pending |= !p.empty();
    if (opt_.exit_after_idle_ns != 0 && mono >= t0 && due == UINT64_MAX && !pending &&
        now - last_rx >= opt_.exit_after_idle_ns)
      break;
    if (work != 0 || pending) {
      idle_polls = 0;
      if (pending) rte_pause();
      continue;
    }
    // Idle: spin a little, then sleep until the next departure (at most
    // 1 ms; the pacer sends a short catch-up burst if the sleep overshoots).
    if (++idle_polls < 128) {
      rte_pause();
      continue;
    }
    uint64_t sleep_ns = 50'000;
    if (mono < t0) sleep_ns = std::min<uint64_t>(t0 - mono, 1'000'000);
    else if (due != UINT64_MAX && due > now) sleep_ns = std::clamp<uint64_t>(due - now, 0, 50'000);
    else if (due != UINT64_MAX) sleep_ns = 0;
    if (sleep_ns > 2'000) {
      const timespec ts{0, static_cast<long>(sleep_ns)};
      nanosleep(&ts, nullptr);
    }
  }
  const uint64_t mono = mono_ns();
  elapsed_ = mono > t0 ? mono - t0 : 0;
}

}  // namespace ufab::traffic
