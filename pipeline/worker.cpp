#include "pipeline/worker.hpp"

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "edge/dpdk/timer_slack.hpp"
#include "pipeline/log.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/stop.hpp"

namespace ufab::pipeline {

namespace {

struct WorkerCtx {
  Edge* e;
  EdgeState* s;
  const dpdk::TscClock* clock;
  Nanos next_tick = 0;
  // Mixed layout (control on this lcore): Alg. 1 rounds in steps.
  Nanos next_round = 0;    // the next round's start (token_round_max_share)
  bool round_open = false;  // a round is under way: one step per iteration
  Nanos round_start = 0, round_spent = 0;
  Nanos next_ack_sweep = 0;
  PollCredit poll_credit = {};  // params.pair_poll_max_share (run_polls)
  uint64_t idle_polls = 0;
  Nanos idle_nap = 0, queued_nap = 0;  // LoopConfig's (nap())
};

// The pairs' timer work within params.pair_poll_max_share s of the worker
// while frames arrive (PollCredit, stages.hpp): timers take at most s and
// the data path at least 1 - s. 8K pairs with demand at T =
// 20 us are 410M per-RTT ticks a second, far more than a core does:
// unbounded, the timers took ~70% of the worker (bench edge, 64 B, 32 us:
// 2.1 Mpps against 7.7 with the timers idle). In an iteration that received
// nothing only poll_budget() bounds them: frames queued behind windows or
// the fabric pacer do not need the worker, and a worker with nothing else
// to do should not leave due pairs waiting.
void run_polls(WorkerCtx& w, Nanos now, bool frames_arrived) {
  PollCredit& c = w.poll_credit;
  if (!frames_arrived || !c.bounded()) {
    poll_pairs(*w.s, now);
    return;
  }
  const Nanos t0 = w.clock->now();
  c.grow(t0);
  if (!c.may_poll()) {
    ++w.s->stats.pair_poll_cuts;  // owed: the due pairs wait for the next call
    return;
  }
  poll_pairs(*w.s, now, c.limit(w.clock, t0));
  c.spend(w.clock->now() - t0);
}

// One step of the open Alg. 1 round on a mixed lcore. A round over many
// active pairs takes longer than the period (8K pairs: about 100 us here),
// so it goes in steps of kTokenStepPairs pairs, one per iteration (RX and the
// responses keep flowing in between), and rounds come as often as keeps them
// within token_round_max_share of the lcore: the next starts
// max(period, spent / share) after this one started.
constexpr size_t kTokenStepPairs = 128;
void token_step(WorkerCtx& w) {
  Edge& e = *w.e;
  const edge::EdgeConfig& cfg = w.s->cfg;
  const Nanos t0 = w.clock->now();
  const bool done = e.control.token_round_step(kTokenStepPairs);
  w.round_spent += w.clock->now() - t0;
  if (!done) return;
  w.round_open = false;
  const auto gap = static_cast<Nanos>(static_cast<double>(w.round_spent) / cfg.token_round_max_share);
  w.next_round = w.round_start + std::max<Nanos>(cfg.token_period_ns, gap);
  if (gap > cfg.token_period_ns) ++e.control.stretched;
}

// One iteration of a worker; the frames it handled.
uint32_t worker_step(WorkerCtx& w, Nanos now) {
  Edge& e = *w.e;
  EdgeState& s = *w.s;
  const Phase ph = e.phase.load(std::memory_order_relaxed);
  uint32_t work = 0;
  // Each stage reads the clock afresh (one TSC read): frames and responses
  // are dated when they are taken, not when the iteration began, so a worker
  // descheduled mid-iteration does not date them early (RTT samples, send
  // times). ufab-core and ufab-traffic do the same.
  if (ph == Phase::running)
    for (const uint16_t p : s.vm_ports)
      if (e.layout.polls(p, s.worker)) work += poll_port(s, p, w.clock->now());
  for (const uint16_t p : s.cfg.fabric_ports)
    if (e.layout.polls(p, s.worker)) work += poll_port(s, p, w.clock->now());
  work += poll_ring(s, w.clock->now());
  now = std::max(now, w.clock->now());
  const bool frames_arrived = work != 0;  // VM, fabric or ring frames this iteration
  if (now >= w.next_tick) {
    if (e.mixed() && !w.round_open && now >= w.next_round) {  // Alg. 1 inline, on this tick's inputs
      publish_tokens(s);
      w.round_open = true;
      w.round_start = now;
      w.round_spent = 0;
    }
    // A round of up to one step's pairs ends here, before its phi_S are
    // applied and the pairs polled (as a whole round always did).
    if (w.round_open) token_step(w);
    apply_tokens(s);
    run_polls(w, now, frames_arrived);
    if (!e.mixed()) publish_tokens(s);
    w.next_tick = now + s.cfg.token_period_ns;
  } else {
    if (s.due_pending()) run_polls(w, now, frames_arrived);  // what the last tick's poll budget left
    if (w.round_open) token_step(w);          // the rest of a round, one step per iteration
  }
  if (s.cfg.ack_sweep_ns != 0 && now >= w.next_ack_sweep) {
    ack_sweep(s, now);
    w.next_ack_sweep = now + s.cfg.ack_sweep_ns;
  }
  work += sched_tx(s, now);
  work += drain_tx_rings(s);
  for (TxBuffer& t : s.tx) t.flush();
  e.serve_commands(s);
  if (work != 0) s.rx_seen.store(s.stats.rx(), std::memory_order_relaxed);
  return work;
}

// Idle: spin briefly, then give the core away (several edges and switches
// share two cores in the tests) for LoopConfig's nap (--idle-nap-us). With
// frames queued behind a window it is queued_nap (--queued-nap-us, 5 us by
// default against 50): a response may open the window. A nap of 0
// busy-polls. The control lcore of a layout with workers sleeps between
// its rounds instead (run()).
void nap(WorkerCtx& w) {
  // The queue count is read only when a nap is due (after 256 empty polls).
  const Nanos n = ++w.idle_polls < 256 ? 0 : w.s->queued() != 0 ? w.queued_nap : w.idle_nap;
  if (n == 0) {
    rte_pause();
    return;
  }
  const timespec ts{static_cast<time_t>(n / kSec), static_cast<long>(n % kSec)};
  nanosleep(&ts, nullptr);
}

void account(EdgeState& s, Nanos start, Nanos end, uint32_t work) {
  s.loop_ns += end - start;
  if (work != 0) s.busy_ns += end - start;
}

int worker_main(void* arg) {
  WorkerCtx& w = *static_cast<WorkerCtx*>(arg);
  UFAB_LOG(DEBUG, "worker %u on lcore %u: %zu pairs", w.s->worker, rte_lcore_id(), w.s->pairs.size());
  // Its naps are microseconds (nap()): 1 us of timer slack, not Linux's 50.
  (void)dpdk::set_fine_timer_slack();
  while (w.e->phase.load(std::memory_order_acquire) != Phase::exit) {
    const Nanos now = w.clock->now();
    const uint32_t work = worker_step(w, now);
    account(*w.s, now, w.clock->now(), work);
    if (work != 0)
      w.idle_polls = 0;
    else
      nap(w);
  }
  for (TxBuffer& t : w.s->tx) t.flush();
  return 0;
}

struct ControlState {
  Nanos next_round = 0, next_stats = 0, last_rx = 0;
  uint64_t last_rx_count = 0;
};

uint64_t rx_seen(Edge& e) {
  uint64_t n = 0;
  for (const auto& s : e.shards) n += s->rx_seen.load(std::memory_order_relaxed);
  return n;
}

// One iteration of the control work. False when the run is over.
bool control_step(Edge& e, Telemetry& tel, const LoopConfig& cfg, ControlState& cs, StopSequence& stop, Nanos now) {
  if (!e.mixed() && now >= cs.next_round) {
    e.control.token_round();
    // On the period's grid: a round that starts late does not push the
    // later ones back (rounds/s stays 1 / period while a round fits in
    // it); one that ran past the next start is followed at once, with no
    // burst of catch-up rounds.
    cs.next_round = std::max(cs.next_round + e.cfg.token_period_ns, now);
  }
  tel.serve(now);
  e.links.poll(now);  // the links of ports whose PMD raises no link events (port_link.hpp)
  e.control.follow_uplinks();  // an uplink's paths drained while its link is down (uplinks.cpp)
  if (cfg.reload != nullptr && *cfg.reload != 0) {
    *cfg.reload = 0;
    // As /ufab/reload: nothing changes once the stop sequence began.
    const Control::ReloadResult r =
        stop.started() ? Control::ReloadResult{false, {}, "the edge is stopping"} : e.control.reload(now);
    std::printf("ufab-edge reload %s", r.ok ? "ok" : "rejected: ");
    if (!r.ok) std::printf("%s", r.error.c_str());
    for (const std::string& c : r.changes) std::printf(" [%s]", c.c_str());
    std::printf("\n");
    std::fflush(stdout);
  }
  if (cfg.stats_interval != 0 && now >= cs.next_stats) {
    const EdgeTotals t = totals(e);
    print_stats(stdout, "stats", now, t.stats, t.queued);
    cs.next_stats = now + cfg.stats_interval;
  }
  if (const uint64_t rx = rx_seen(e); rx != cs.last_rx_count) {
    cs.last_rx_count = rx;
    cs.last_rx = now;
  }
  if (cfg.exit_after_idle != 0 && now - cs.last_rx >= cfg.exit_after_idle && !stop.started()) {
    e.phase.store(Phase::exit, std::memory_order_release);
    return false;
  }
  const int signals = cfg.stop != nullptr ? *cfg.stop : 0;
  if (signals >= 2) {  // a second signal: at once
    e.phase.store(Phase::exit, std::memory_order_release);
    return false;
  }
  if (signals == 1 && !stop.started()) stop.start(e, now);
  if (stop.started() && stop.step(e, now)) return false;
  return true;
}

}  // namespace

void run(Edge& e, Telemetry& tel, const LoopConfig& cfg, const dpdk::TscClock& clock) {
  ControlState cs;
  cs.last_rx = clock.now();
  cs.next_stats = cs.last_rx + cfg.stats_interval;
  StopSequence stop(cfg.stop_timeout);
  std::vector<WorkerCtx> ctx;
  for (auto& s : e.shards) {
    ctx.push_back(WorkerCtx{&e, s.get(), &clock});
    ctx.back().poll_credit = PollCredit(s->cfg.pair_poll_max_share, s->cfg.token_period_ns);
    ctx.back().idle_nap = cfg.idle_nap;
    ctx.back().queued_nap = cfg.queued_nap;
  }
  // The main lcore (control, and in the mixed layout the worker) naps for
  // microseconds too (edge/dpdk/timer_slack.hpp).
  (void)dpdk::set_fine_timer_slack();

  if (e.mixed()) {
    WorkerCtx& w = ctx[0];
    for (;;) {
      const Nanos now = clock.now();
      const uint32_t work = worker_step(w, now);
      if (!control_step(e, tel, cfg, cs, stop, now)) break;
      account(*w.s, now, clock.now(), work);
      if (work != 0)
        w.idle_polls = 0;
      else
        nap(w);
    }
    return;
  }

  e.workers_running.store(true, std::memory_order_release);
  for (size_t i = 0; i < ctx.size(); ++i)
    if (rte_eal_remote_launch(worker_main, &ctx[i], e.layout.worker_lcores[i]) != 0)
      throw std::runtime_error("cannot launch worker " + std::to_string(i) + " on lcore " +
                               std::to_string(e.layout.worker_lcores[i]));
  // Between rounds the control lcore sleeps (edges and switches share two
  // cores in the tests), waking kWakeEarly before the next round and
  // polling the rest (with the default timer slack rounds came about every
  // 90 us instead of every 32 us: bench edge 10-11K of 31.25K/s).
  constexpr Nanos kWakeEarly = 5 * kUs;
  cs.next_round = clock.now();
  for (;;) {
    const Nanos now = clock.now();
    if (!control_step(e, tel, cfg, cs, stop, now)) break;
    const Nanos t = clock.now();
    const Nanos wait = cs.next_round > t ? cs.next_round - t : 0;
    if (wait > kWakeEarly + 2 * kUs) {
      const Nanos nap = std::min<Nanos>(wait - kWakeEarly, 20 * kUs);
      const timespec ts{0, static_cast<long>(nap)};
      nanosleep(&ts, nullptr);
    } else {
      rte_pause();
    }
  }
  e.phase.store(Phase::exit, std::memory_order_release);
  for (const unsigned l : e.layout.worker_lcores) rte_eal_wait_lcore(l);
  e.workers_running.store(false, std::memory_order_release);
}

}  // namespace ufab::pipeline
