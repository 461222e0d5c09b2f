// The worker's share of the control work, once per token period (32 us by
// default, §5.1). A VmPair is single-writer state of its worker, so its
// timers run here: probe loss after 8 base RTTs, the migration triggers
// (§3.5), idle finish (VmPair::poll), then its acks and window into the
// scheduler and the control messages that became due. Algorithm 1 itself
// runs on the control lcore (control.cpp) over what publish_tokens() leaves
// in the shares; apply_tokens() takes its phi_S back. ack_sweep() (every
// edge.ack_sweep_ns, when set) only moves the pairs' acks and windows.
//
// Each step works over what changed, not over every pair (issue 4): the
// pairs whose deadline came (EdgeState::timers, VmPair::next_deadline), the
// pairs whose Alg. 1 inputs may have changed (dirty), the pairs the control
// lcore gave a new phi_S (assigned_q), the pairs with bytes in flight.
// Polling a pair before its deadline changes nothing, so this is the old
// poll-every-pair tick minus the pairs that had nothing to do.
#include "pipeline/stages.hpp"

namespace ufab::pipeline {

// A share is written only when its value changed (this worker is its only
// writer, so reading it back is exact), and then the VM's generation is
// bumped after the stores: the control lcore recomputes Alg. 1 for that VM
// only (control.cpp), and a pair whose inputs stand still costs no store to
// a line the control lcore reads.
void publish_tokens(EdgeState& s) {
  for (const uint32_t p : s.dirty) {
    const VmPair& vp = s.pairs[p];
    PairShare& sh = s.share[p];
    // A removed pair (remote_vms.hpp) was unpublished and stays so.
    const bool active = s.live(p) && (s.sched.backlog_bytes(p) != 0 || vp.inflight() != 0);
    const double rate = vp.rate_Bps(), admitted = vp.admitted_token();
    const uint32_t v = s.meta[p].local_vm;
    bool changed = false;
    if (active != static_cast<bool>(s.published_active[p])) {
      sh.active.store(active, std::memory_order_relaxed);
      std::atomic<uint32_t>& n = s.vm_active[v];
      n.store(n.load(std::memory_order_relaxed) + (active ? 1 : -1), std::memory_order_relaxed);
      s.published_active[p] = active;
      changed = true;
    }
    if (sh.rate_Bps.load(std::memory_order_relaxed) != rate || sh.admitted.load(std::memory_order_relaxed) != admitted) {
      sh.rate_Bps.store(rate, std::memory_order_relaxed);
      sh.admitted.store(admitted, std::memory_order_relaxed);
      changed = true;
    }
    if (changed) s.bump(s.vm_inputs_gen[v]);
    s.dirty_flag[p] = 0;
  }
  s.dirty.clear();
}

void apply_tokens(EdgeState& s) {
  s.assigned_q->drain(s.share.get(), [&s](uint32_t p) {
    s.pairs[p].set_assigned_token(s.share[p].assigned.load(std::memory_order_relaxed));
  });
}

void ack_sweep(EdgeState& s, Nanos now) {
  for (size_t k = 0; k < s.in_flight.size();) {
    const uint32_t p = s.in_flight[k];
    if (s.pairs[p].inflight() != 0) {
      refresh_window(s, p, now);
      s.mark_dirty(p);
    }
    if (s.pairs[p].inflight() != 0) {
      ++k;
      continue;
    }
    s.in_flight_flag[p] = 0;  // all acked: off the list until it sends again
    s.in_flight[k] = s.in_flight.back();
    s.in_flight.pop_back();
  }
}

void rearm(EdgeState& s, uint32_t p, Nanos now) {
  const VmPair& vp = s.pairs[p];
  const bool backlogged = !s.stopping && s.sched.backlog_bytes(p) != 0;
  Nanos d = vp.next_deadline(now, backlogged);
  // A ticking pair's history takes a sample every base RTT (the per-RTT tick
  // polls it then anyway); an inactive or parked pair's window, rate and
  // path stay as they are until it is polled (VmPair::rtt_ticking), so its
  // samples would repeat the last one.
  if (vp.rtt_ticking(now, backlogged)) d = std::min(d, std::max(s.sample_at[p], now));
  s.timers.arm(p, d);
}

namespace {

// poll_pairs' software pipeline (hints only, as sched_tx's burst prefetch):
// the due pairs come in no particular order and at 8K pairs their lines are
// cold; polling one after another waited on each miss in turn (perf: the
// history sample's two dependent misses, then the poll's cold line, then the
// path's pacer). kAhead pairs on, what needs no load to find: the VmPair's
// lines poll() reads first (VmPair::prefetch_poll), the scheduler record,
// the next-sample time, the history count and the pair's timer node;
// kAhead / 2 pairs on, what those lead to (VmPair::prefetch_poll_rest, and
// the history slot when a sample is due). Always inlined: GCC 12 drops a
// call whose only effect is a prefetch (see sched/hier_scheduler.hpp). The
// same for publish_tokens' and apply_tokens' sweeps measured within noise
// and was left out.
constexpr size_t kAhead = 8;

[[gnu::always_inline]] inline void prefetch_due(const EdgeState& s, uint32_t p) {
  s.pairs[p].prefetch_poll();
  s.sched.prefetch_pair(p);
  __builtin_prefetch(&s.sample_at[p]);
  s.history[p].prefetch_count();
  s.timers.prefetch(p);  // rearm's arm()
}

[[gnu::always_inline]] inline void prefetch_due_next(const EdgeState& s, uint32_t p, Nanos now) {
  s.pairs[p].prefetch_poll_rest();
  s.pairs[p].prefetch_poll_message(now);  // a lost probe is sent again at this poll
  if (now >= s.sample_at[p]) s.history[p].prefetch_slot();
}

}  // namespace

void poll_pairs(EdgeState& s, Nanos now, const PollLimit& limit) {
  if (!s.due_pending()) {
    s.due.clear();
    s.due_next = 0;
    s.timers.collect(now, s.due);
  }
  // Bounded work per call: thousands of pairs due at once (8K pairs with
  // per-RTT work) would hold the worker for milliseconds, and the frames
  // (responses among them) would overflow the RX rings meanwhile.
  const size_t end = std::min(s.due.size(), s.due_next + s.poll_budget());
  for (size_t i = s.due_next; i < end && i < s.due_next + kAhead; ++i) prefetch_due(s, s.due[i]);
  size_t group = 0;
  for (; s.due_next < end; ++s.due_next) {
    // The share bound (a TSC read per group of pairs, each a few cold lines).
    if (limit.clock != nullptr && ++group > PollLimit::kPollGroup) {
      group = 1;
      if (limit.clock->now() >= limit.until) {
        ++s.stats.pair_poll_cuts;
        break;
      }
    }
    ++s.stats.pair_polls;
    const size_t next = s.due_next + kAhead;
    if (next < s.due.size()) prefetch_due(s, s.due[next]);
    const size_t half = s.due_next + kAhead / 2;
    if (half < s.due.size()) prefetch_due_next(s, s.due[half], now);
    const uint32_t p = s.due[s.due_next];
    VmPair& vp = s.pairs[p];
    // While stopping, a finished pair must not rejoin for what is still queued.
    vp.poll(now, !s.stopping && s.sched.backlog_bytes(p) != 0);
    refresh_window(s, p, now);
    control_tx(s, p, now);
    if (now >= s.sample_at[p]) {  // one history sample per base RTT
      s.history[p].record(now, vp.window(now), vp.rate_Bps() * 8, vp.active_path());
      s.sample_at[p] = now + vp.base_rtt();
    }
    s.mark_dirty(p);
    rearm(s, p, now);
  }
}

}  // namespace ufab::pipeline
