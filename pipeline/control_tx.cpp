// A VM-pair's control messages (§3.4-§3.6, §4.1): VmPair::next_message says
// which is due (finish and its retries, candidate-path queries, the active
// path's probe every L_w bytes) already encoded as a wire::Message; here it
// gets a fresh mbuf and the outer headers and source route of the path it
// must travel on. And the other direction into the scheduler: the bytes the
// pair knows left the network and its current window (Eqn 3 / two-stage
// admission).
#include <rte_mbuf.h>

#include "pipeline/encap.hpp"
#include "pipeline/stages.hpp"

namespace ufab::pipeline {

void control_tx(EdgeState& s, uint32_t pair, Nanos now) {
  VmPair& vp = s.pairs[pair];
  const PairMeta& pm = s.meta[pair];
  const HostRoutes& h = s.hosts[pm.host];
  const bool backlogged = s.sched.backlog_bytes(pair) != 0;
  // The worker's scratch message: next_message fills every field the
  // encoder reads when it returns true (a fresh wire::Message per call, ~350
  // zeroed bytes, was most of this function's time: it runs for every pair
  // served in a burst).
  wire::Message& msg = s.ctl_msg;
  for (size_t k = 0; k < vp.n_paths() + 1; ++k) {
    int path = 0;
    if (!vp.next_message(now, backlogged, msg, path)) break;
    ++s.stats.generated;
    const auto p = static_cast<size_t>(path);
    const uint16_t fp = h.data_encap[p].port;  // the path's uplink: probes follow its data
    rte_mbuf* m = rte_pktmbuf_alloc(s.pool);
    if (unlikely(m == nullptr)) {  // the pair sees a lost probe and retries (§4.1)
      s.stats.drop(fp, Drop::mbuf_exhausted);
      s.wake(pair);  // as the next tick would have: look again then
      continue;
    }
    if (unlikely(!write_control(m, h.outer, h.src_ports[p], h.routes[p], s.cfg.tenants[pm.tenant].vni, msg))) {
      s.stats.drop(fp, Drop::no_headroom);
      rte_pktmbuf_free(m);
      s.wake(pair);
      continue;
    }
    s.tx[fp].push(m);
  }
}

void refresh_window(EdgeState& s, uint32_t pair, Nanos now) {
  VmPair& vp = s.pairs[pair];
  if (const uint64_t acked = vp.advance_acks(now); acked != 0) s.sched.on_acked(pair, acked);
  const double w = vp.window(now);
  if (unlikely(!s.cfg.window_gating)) {  // benchmarks only (edge/config.hpp): the window stays open
    s.sched.on_acked(pair, UINT64_MAX);
    s.sched.set_window(pair, HierScheduler<rte_mbuf*>::kMaxWindow);
    return;
  }
  // Whole bytes as the scheduler's gate counts them (HierScheduler::
  // window_bytes: a window below one byte is 1, +inf is kMaxWindow; both
  // once held a pair back for good, found by test_ufab_edge_fuzz).
  s.sched.set_window(pair, HierScheduler<rte_mbuf*>::window_bytes(w));
  // Pair pacing (edge/config.hpp): the window spread over one base RTT.
  if (s.cfg.pair_pacing) s.sched.set_pair_rate(pair, vp.pacing_rate_Bps(now));
}

}  // namespace ufab::pipeline
