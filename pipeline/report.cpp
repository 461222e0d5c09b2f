// ufab-edge's final report (edge/README.md, Counters): the totals over every
// worker and ring, the ports, each VM-pair in configuration order, each
// receiver-side pair, each worker.
#include <algorithm>
#include <rte_ethdev.h>

#include <cinttypes>
#include <cstdio>
#include <utility>
#include <vector>

#include "edge/dpdk/port.hpp"
#include "pipeline/dispatch.hpp"
#include "pipeline/worker.hpp"

namespace ufab::pipeline {

void print_report(Edge& e, Nanos now) {
  const EdgeTotals t = totals(e);
  print_stats(stdout, "final", now, t.stats, t.queued);
  print_port_stats(stdout, t.stats, &e.ports_present());
  print_offload(stdout, e.shards[0]->offload, t.stats.marked);
  // What the PMDs counted before a frame reached the edge (no mbuf, ring
  // full), and each port's link now with the changes its events reported
  // (port_link.hpp). Ports removed at runtime and unused spare ids are not
  // asked (ethdev would log "Invalid port_id").
  for (uint16_t p = 0; p < t.stats.ports.size(); ++p) {
    rte_eth_stats es{};
    if (!e.port_present(p) || rte_eth_stats_get(p, &es) != 0) continue;
    const bool up = dpdk::link_up_now(p).value_or(false);
    const PortLink& l = e.links[p];
    std::printf("ufab-edge pmd port=%u ipackets=%" PRIu64 " imissed=%" PRIu64 " rx_nombuf=%" PRIu64 " ierrors=%" PRIu64
                " oerrors=%" PRIu64 " link=%s link_watch=%s link_changes=%" PRIu64 "\n",
                p, es.ipackets, es.imissed, es.rx_nombuf, es.ierrors, es.oerrors, up ? "up" : "down",
                l.events.load(std::memory_order_relaxed) ? "events" : "polled", l.changes.load(std::memory_order_relaxed));
  }
  // Pairs in configuration order (those added at runtime after), whichever
  // worker owns them; not those removed at runtime.
  std::vector<std::pair<const EdgeState*, uint32_t>> order;
  for (const auto& s : e.shards)
    for (uint32_t p = 0; p < s->pairs.size(); ++p)
      if (s->live(p)) order.emplace_back(s.get(), p);
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first->meta[a.second].global < b.first->meta[b.second].global; });
  for (const auto& [s, p] : order) {
    const VmPair& vp = s->pairs[p];
    const VmPair::Counters& c = vp.counters();
    std::printf("ufab-edge pair=0x%08" PRIx32 " vni=%" PRIu32 " state=%d path=%d window=%.0f inflight=%" PRIu64
                " sent=%" PRIu64 " acked=%" PRIu64 " backlog=%" PRIu64 " probes=%" PRIu64 " queries=%" PRIu64
                " responses=%" PRIu64 " probe_losses=%" PRIu64 " finishes=%" PRIu64 " finish_acked=%" PRIu64
                " token_x1000=%.0f worker=%u\n",
                s->meta[p].wire_id, s->cfg.tenants[s->meta[p].tenant].vni, static_cast<int>(vp.state()),
                vp.active_path(), vp.window(now), vp.inflight(), vp.bytes_sent(), vp.bytes_acked(),
                s->sched.backlog_bytes(p), c.probes, c.queries, c.responses, c.probe_losses, c.finishes, c.finish_acked,
                vp.token() < 1e12 ? vp.token() * 1000 : -1.0, s->worker);
  }
  for (const auto& s : e.shards)
    for (uint32_t i = 0; i < s->incoming.size(); ++i) {
      const Incoming& in = s->incoming[i];
      const double admitted = s->in_share[i].admitted.load(std::memory_order_relaxed);
      std::printf("ufab-edge incoming=0x%08" PRIx32 " vni=%" PRIu32 " probes=%" PRIu64 " requested_x1000=%.0f"
                  " admitted_x1000=%.0f\n",
                  in.wire_id, in.vni, in.probes, s->in_share[i].requested.load(std::memory_order_relaxed) * 1000,
                  admitted == kTokenUnbound || admitted < 0 ? -1.0 : admitted * 1000);
    }
  for (size_t w = 0; w < e.shards.size(); ++w)
    std::printf("ufab-edge worker=%zu lcore=%u pairs=%zu rx=%" PRIu64 " tx=%" PRIu64 " queued=%" PRIu64
                " handed_off=%" PRIu64 " taken_over=%" PRIu64 " rxq_polled=%" PRIu64 " misqueued=%" PRIu64 " busy=%.3f\n",
                w, e.layout.worker_lcores[w], t.worker_pairs[w], t.per_worker[w].rx(), t.per_worker[w].tx(),
                t.worker_queued[w], t.per_worker[w].handed_off, t.per_worker[w].taken_over, t.per_worker[w].rxq_polled,
                t.per_worker[w].misqueued, t.worker_busy[w]);
  print_rx_modes(stdout, e.layout);
  std::fflush(stdout);
}

}  // namespace ufab::pipeline
