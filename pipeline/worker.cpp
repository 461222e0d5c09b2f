#include "pipeline/worker.hpp"

#include <rte_ethdev.h>
#include <rte_pause.h>

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "pipeline/stages.hpp"

namespace ufab::pipeline {

void run(EdgeState& s, Telemetry& tel, const LoopConfig& cfg, const dpdk::TscClock& clock,
         const volatile std::sig_atomic_t* stop) {
  const Nanos period = s.cfg.token_period_ns;
  Nanos next_tick = 0, last_rx = clock.now();
  Nanos next_stats = last_rx + cfg.stats_interval;
  uint64_t last_rx_count = 0, idle_polls = 0;
  while (*stop == 0) {
    const Nanos now = clock.now();
    uint32_t work = 0;
    for (const uint16_t p : s.vm_ports) work += vm_rx(s, p, now);
    work += fabric_rx(s, now);
    if (now >= next_tick) {
      control_tick(s, now);
      next_tick = now + period;
    }
    work += sched_tx(s, now);
    for (size_t p = 0; p < s.tx.size(); ++p) s.tx[p].flush(s.stats.ports[p]);
    tel.serve(now);
    if (const uint64_t rx = s.stats.rx(); rx != last_rx_count) {
      last_rx_count = rx;
      last_rx = now;
    }
    if (cfg.stats_interval != 0 && now >= next_stats) {
      print_stats(stdout, "stats", now, s.stats, s.queued());
      next_stats = now + cfg.stats_interval;
    }
    if (cfg.exit_after_idle != 0 && now - last_rx >= cfg.exit_after_idle) break;
    if (work != 0) {
      idle_polls = 0;
      continue;
    }
    // Idle: spin briefly, then give the core away (several edges and
    // switches share two cores in the tests). With frames queued behind a
    // window the nap is short: a response may open it.
    if (++idle_polls < 256) {
      rte_pause();
    } else {
      const timespec ts{0, s.queued() != 0 ? 5'000 : 50'000};
      nanosleep(&ts, nullptr);
    }
  }
}

void print_report(const EdgeState& s, Nanos now) {
  print_stats(stdout, "final", now, s.stats, s.queued());
  print_port_stats(stdout, s.stats);
  print_offload(stdout, s.offload, s.stats.marked);
  // What the PMDs counted before a frame reached the edge (no mbuf, ring full).
  for (uint16_t p = 0; p < s.stats.ports.size(); ++p) {
    rte_eth_stats es{};
    if (rte_eth_stats_get(p, &es) == 0)
      std::printf("ufab-edge pmd port=%u ipackets=%" PRIu64 " imissed=%" PRIu64 " rx_nombuf=%" PRIu64 " ierrors=%" PRIu64
                  " oerrors=%" PRIu64 "\n",
                  p, es.ipackets, es.imissed, es.rx_nombuf, es.ierrors, es.oerrors);
  }
  for (uint32_t p = 0; p < s.pairs.size(); ++p) {
    const VmPair& vp = s.pairs[p];
    const VmPair::Counters& c = vp.counters();
    std::printf("ufab-edge pair=0x%08" PRIx32 " vni=%" PRIu32 " state=%d path=%d window=%.0f inflight=%" PRIu64
                " sent=%" PRIu64 " acked=%" PRIu64 " backlog=%" PRIu64 " probes=%" PRIu64 " queries=%" PRIu64
                " responses=%" PRIu64 " probe_losses=%" PRIu64 " finishes=%" PRIu64 " finish_acked=%" PRIu64
                " token_x1000=%.0f\n",
                s.meta[p].wire_id, s.cfg.tenants[s.meta[p].tenant].vni, static_cast<int>(vp.state()), vp.active_path(),
                vp.window(now), vp.inflight(), vp.bytes_sent(), vp.bytes_acked(), s.sched.backlog_bytes(p), c.probes,
                c.queries, c.responses, c.probe_losses, c.finishes, c.finish_acked,
                vp.token() < 1e12 ? vp.token() * 1000 : -1.0);
  }
  for (const Incoming& in : s.incoming)
    std::printf("ufab-edge incoming=0x%08" PRIx32 " vni=%" PRIu32 " probes=%" PRIu64 " requested_x1000=%.0f"
                " admitted_x1000=%.0f\n",
                in.wire_id, in.vni, in.probes, in.requested * 1000,
                in.admitted == kTokenUnbound ? -1.0 : in.admitted * 1000);
  std::fflush(stdout);
}

}  // namespace ufab::pipeline
