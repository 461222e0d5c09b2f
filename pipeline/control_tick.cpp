// The control work, run on the worker lcore once per token period (32 us by
// default, §5.1) in this version (one lcore runs RX, worker, TX and control,
// like qos_sched's mixed thread; the work below touches only this lcore's
// state, so it needs no locks):
//  - Algorithm 1 (App. E) for every local VM: TokenAssignment over its active
//    sending pairs (demand = their delivered rate, phi_D = the receiver's last
//    answer), TokenAdmission over the pairs sending to it (phi_S = what their
//    probes requested);
//  - every pair's timers (VmPair::poll: probe loss after 8 base RTTs,
//    migration triggers §3.5, idle finish), its acks and window into the
//    scheduler, and the control messages that became due.
#include "pipeline/stages.hpp"

namespace ufab::pipeline {

namespace {

void token_round(EdgeState& s) {
  const double unit = s.cfg.params.unit_bw_Bps;
  for (size_t v = 0; v < s.vm_pairs.size(); ++v) {
    std::vector<uint32_t>& active = s.scratch;
    active.clear();
    for (const uint32_t p : s.vm_pairs[v])
      if (s.sched.backlog_bytes(p) != 0 || s.pairs[p].inflight() != 0) active.push_back(p);
    VmTokens& snd = s.senders[v];
    snd.resize(active.size());
    auto pt = snd.pairs();
    for (size_t k = 0; k < active.size(); ++k)
      pt[k] = PairToken{s.pairs[active[k]].rate_Bps(), 0, s.pairs[active[k]].admitted_token()};
    if (!active.empty()) snd.assign(unit);
    for (size_t k = 0; k < active.size(); ++k) s.pairs[active[k]].set_assigned_token(pt[k].phi_S);

    active.clear();
    for (uint32_t i = 0; i < s.incoming.size(); ++i)
      if (s.incoming[i].local_vm == v && s.incoming[i].requested > 0) active.push_back(i);
    VmTokens& rcv = s.receivers[v];
    rcv.resize(active.size());
    auto rt = rcv.pairs();
    for (size_t k = 0; k < active.size(); ++k) rt[k] = PairToken{0, s.incoming[active[k]].requested, kTokenUnbound};
    if (!active.empty()) rcv.admit();
    for (size_t k = 0; k < active.size(); ++k) s.incoming[active[k]].admitted = rt[k].phi_D;
  }
  ++s.stats.token_rounds;
}

}  // namespace

void control_tick(EdgeState& s, Nanos now) {
  token_round(s);
  for (uint32_t p = 0; p < s.pairs.size(); ++p) {
    // poll() advances the pair's acks by time too (VmPair::advance_acks):
    // hand those bytes to the scheduler, or its in-flight count stays above
    // the pair's and the pair stalls under a window it has room in.
    const uint64_t acked = s.pairs[p].bytes_acked();
    s.pairs[p].poll(now, s.sched.backlog_bytes(p) != 0);
    if (const uint64_t d = s.pairs[p].bytes_acked() - acked; d != 0) s.sched.on_acked(p, d);
    refresh_window(s, p, now);
    control_tx(s, p, now);
  }
}

}  // namespace ufab::pipeline
