// The worker's share of the control work, once per token period (32 us by
// default, §5.1). A VmPair is single-writer state of its worker, so its
// timers run here: probe loss after 8 base RTTs, the migration triggers
// (§3.5), idle finish (VmPair::poll), then its acks and window into the
// scheduler and the control messages that became due. Algorithm 1 itself
// runs on the control lcore (control.cpp) over what publish_tokens() leaves
// in the shares; apply_tokens() takes its phi_S back. ack_sweep() (every
// edge.ack_sweep_ns, when set) only moves the pairs' acks and windows.
#include "pipeline/stages.hpp"

namespace ufab::pipeline {

void publish_tokens(EdgeState& s) {
  for (uint32_t p = 0; p < s.pairs.size(); ++p) {
    const VmPair& vp = s.pairs[p];
    PairShare& sh = s.share[p];
    sh.active.store(s.sched.backlog_bytes(p) != 0 || vp.inflight() != 0, std::memory_order_relaxed);
    sh.rate_Bps.store(vp.rate_Bps(), std::memory_order_relaxed);
    sh.admitted.store(vp.admitted_token(), std::memory_order_relaxed);
  }
}

void apply_tokens(EdgeState& s) {
  for (uint32_t p = 0; p < s.pairs.size(); ++p)
    s.pairs[p].set_assigned_token(s.share[p].assigned.load(std::memory_order_relaxed));
}

void ack_sweep(EdgeState& s, Nanos now) {
  for (uint32_t p = 0; p < s.pairs.size(); ++p)
    if (s.pairs[p].inflight() != 0) refresh_window(s, p, now);
}

void poll_pairs(EdgeState& s, Nanos now) {
  for (uint32_t p = 0; p < s.pairs.size(); ++p) {
    VmPair& vp = s.pairs[p];
    // While stopping, a finished pair must not rejoin for what is still queued.
    vp.poll(now, !s.stopping && s.sched.backlog_bytes(p) != 0);
    refresh_window(s, p, now);
    control_tx(s, p, now);
    s.history[p].maybe_record(now, vp.base_rtt(), vp.window(now), vp.rate_Bps() * 8, vp.active_path());
  }
}

}  // namespace ufab::pipeline
