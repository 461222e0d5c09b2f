// One VM-pair at the sending edge (paper §3.3-§3.5, §4.1): its token, its
// candidate paths and their telemetry, the two-stage admission window, scalable
// probing, finish with per-hop acknowledgement, and both migration triggers.
//
// The owner (a DPDK worker, the ns-3 edge model, the mini fabric) calls:
//   on_data_sent()    for every data packet the scheduler released;
//   next_message()    to learn which control message (probe, candidate query,
//                     finish) to send now, already encoded as a wire::Message;
//   on_message()      for every response / finish-ack / failure for this pair;
//   poll()            regularly (at least a few times per base RTT).
// window() and inflight() gate the pair in the scheduler.
//
// A message's seq is (pacer or finish seq << 4) | path index, so a response
// names the path it belongs to and the owner keeps no extra state.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "control/admission.hpp"
#include "control/clock.hpp"
#include "control/link_view.hpp"
#include "control/migration.hpp"
#include "control/path_select.hpp"
#include "control/sent_history.hpp"
#include "control/params.hpp"
#include "probe/finish_tracker.hpp"
#include "probe/probe_pacer.hpp"
#include "probe/wire.hpp"

namespace ufab {

inline constexpr size_t kMaxCandidatePaths = 8;

// Receiver-admitted token encoding in a response's phi field (Alg. 1 UNBOUND).
inline constexpr uint32_t kWireUnbound = 0xffffffffu;

// Laid out hot first (issue 4): the fields every frame reads or writes
// (vm_rx, sched_tx, the window gate, may_send_message) fill the first two
// cache lines with the send history's header, its ring follows (a frame
// stores one sample there), then the candidate paths, each with what probes
// and polls read first (pacer, flags, finish); the rest (parameters,
// migration state, counters) last. A frame touches three lines, all within
// the first ~1.1 KB of the pair: no path line (sync_pacer). Moving the paths
// out to their own heap array (1.8 KB pairs) was measured slower (a second
// page per frame).
class alignas(64) VmPair {
 public:
  enum class State : uint8_t { selecting, active, idle };

  struct Counters {
    uint64_t probes = 0, queries = 0, finishes = 0;
    uint64_t responses = 0, stale = 0, probe_losses = 0, query_losses = 0;
    uint64_t finish_acked = 0, finish_gave_up = 0, finish_abandoned = 0, failures = 0;
    uint64_t migrations_violation = 0, migrations_better = 0, migrations_refused = 0;
    uint64_t restarts = 0, unqualified_joins = 0;
  };

  // path_hops[i] = number of switch hops of candidate path i (<= kMaxHops).
  // gate: the host's migration gate (shared by the host's pairs); may be null.
  VmPair(const EdgeParams& params, uint32_t pair_id, Nanos base_rtt,
         std::span<const uint8_t> path_hops, HostMigrationGate* gate, uint64_t seed);

  // ---- token (control thread, Algorithm 1) ----
  void set_assigned_token(double phi_S) { phi_assigned_ = phi_S; }
  double assigned_token() const { return phi_assigned_; }
  // phi_D from the last response; +inf when the receiver left it UNBOUND.
  double admitted_token() const { return phi_admitted_; }
  // The token the pair uses: min(phi_S, phi_D) (design-notes §4.6).
  double token() const { return phi_admitted_ < phi_assigned_ ? phi_admitted_ : phi_assigned_; }

  // ---- data path ----
  State state() const { return state_; }
  int active_path() const { return active_; }
  // Bytes the pair may have in flight now (0 while selecting, idle, or in the
  // probe-only first RTT of a new path with reorder avoidance).
  double window(Nanos now) const;
  // The pace of the pair's data when the owner paces pairs
  // (sched/pair_pacing.hpp): its window over its base RTT, w / T, in B/s
  // (0 when the window is 0). One division, for each window update.
  double pacing_rate_Bps(Nanos now) const { return window(now) * 1e9 / static_cast<double>(T_); }
  uint64_t inflight() const { return sent_ - acked_; }
  uint64_t bytes_sent() const { return sent_; }
  uint64_t bytes_acked() const { return acked_; }
  void on_data_sent(uint32_t bytes, Nanos now);
  // Moves the acknowledged-byte mark forward (control/sent_history.hpp) and
  // returns the bytes newly known to have left the network since the last
  // call from the owner (including what poll() moved the mark over; every
  // acked byte is returned exactly once, here or in on_message's result).
  uint64_t advance_acks(Nanos now);
  // The RTT advance_acks() assumes for data sent now (see there); T when no
  // path is active. last_rtt(): the active path's last probe RTT sample (0: none).
  Nanos rtt_estimate(Nanos now) const;
  Nanos last_rtt() const;

  // ---- control messages ----
  // Fills msg with the next control message due, if any; path receives the
  // candidate index it must travel on. backlogged: the pair has queued data.
  bool next_message(Nanos now, bool backlogged, wire::Message& msg, int& path);
  // False only when next_message would return false (and change nothing
  // but its own bookkeeping) at any time and backlog: no finish pending on
  // any path, no candidate query wanted, and the pair not active, or its
  // probe outstanding, or (probe_on_window_full off: the L_w rule alone,
  // §4.1) fewer than L_w bytes sent since the last response. With the
  // window rule on, that rule needs the backlog and the time, so this is
  // true and next_message decides. A cheap test before next_message for
  // every pair served (ufab-edge's sched_tx): it reads the pair's first
  // line only (probe_out_ and probe_gap_, hot copies of the active path's
  // probe state), as it runs for every frame sent.
  bool may_send_message() const {
    if (want_message_ != 0) return true;
    if (state_ != State::active || probe_out_) return false;
    return probe_on_window_full_ || unsynced_bytes() >= probe_gap_;
  }

  struct Result {
    bool accepted = false;      // the message was for a probe/finish of ours
    uint64_t acked_bytes = 0;   // data bytes newly known to have left the network (incl. advance_acks)
    bool migrated = false;      // the active path changed
  };
  Result on_message(const wire::Message& m, Nanos now);

  // Timers: probe loss (8 base RTTs, doubling per consecutive loss on the
  // path up to probe_timeout_max_rtts), per-RTT migration checks, Scenario 2,
  // idle finish, candidate refresh. A pair that is not sending joins (or
  // selects a path) while it is backlogged or data arrived for it since it
  // last stopped sending (on_data_arrived).
  void poll(Nanos now, bool backlogged);
  // Data for the pair arrived at its owner (queued, or sent at once). A
  // pair that is not sending counts it as demand until it joins, as it
  // counts a queue seen at a poll: where its window does not hold the data
  // back (window gating off) the queue may be empty again by the next poll,
  // and the pair would never join. Ignored by a sending pair (its ticks see
  // the data it sends).
  void on_data_arrived() {
    if (state_ != State::active) arrived_ = true;
  }

  // ---- timers (the owner polls only the pairs with something due) ----
  // The earliest time at or after which poll(t, backlogged), advance_acks(t)
  // or next_message(t, backlogged) may act (change state, move acks, send a
  // message), given that nothing else happens before: no message, no data
  // sent, no change of backlogged, token or drain. now when something is due
  // at once; kNever when only such an event can wake the pair. Exact or
  // earlier, never later: a poll at the deadline may find nothing to do (the
  // owner re-arms), a pair not polled before it would behave as if polled.
  // The deadlines (all computed from the state, no clock read):
  //  - a probe or candidate query outstanding: its loss deadline (8 base
  //    RTTs, §4.1; longer after consecutive losses, ProbePacer);
  //  - a finish pending: its first send at once, then its retry or give-up
  //    time (probe/finish_tracker.hpp);
  //  - acks: the oldest unacknowledged send-history sample plus the RTT
  //    estimate (never while the outstanding probe is older than that sample:
  //    the estimate grows with the probe's age); at once when poll() moved
  //    the mark and the owner has not taken the bytes;
  //  - selecting or idle with data: at once (join, select, queries);
  //  - active: the per-RTT tick (migration trigger (i), Scenario 2, trigger
  //    (ii)), the candidate refresh (multipath), the idle finish once no byte
  //    is queued or in flight (last data + idle_finish_ns), the end of the
  //    reorder-avoidance hold (the window opens), a due probe at once.
  static constexpr Nanos kNever = ~Nanos{0};
  Nanos next_deadline(Nanos now, bool backlogged) const;
  // Whether the pair's queue going from empty to backlogged may make
  // something due (so the owner must poll it): true unless it is active and
  // its window still admits data (then sending it is the data path's work).
  // A pair with nothing in flight whose per-RTT tick has come is parked (see
  // rtt_ticking): its queue starting must wake it for the tick.
  bool wakes_on_backlog(Nanos now) const {
    return state_ != State::active || hold_until_ != 0 || static_cast<double>(inflight()) >= adm_.window() ||
           (inflight() == 0 && now >= next_tick_);
  }
  // Whether an active pair's per-RTT tick is armed (issue 4, scale): only
  // while it has demand (data queued or in flight, or a probe lost since the
  // last tick), plus the first tick after the demand ended. Without demand
  // the tick has nothing to judge: trigger (i) needs a window-limited pair or
  // news from a response or a loss, Scenario 2 a window-limited pair, and
  // trigger (ii) is about a better path for data the pair does not have. A
  // pair with no demand at its tick parks it (next_tick_ stays in the past);
  // its next tick runs when data comes (wakes_on_backlog) and its rate EWMA
  // then decays over every RTT it skipped (rtt_tick). So an edge with many
  // pairs that each send now and then ticks per burst of data, not per RTT
  // per pair (8K pairs at T = 20 us were 410M ticks a second).
  bool rtt_ticking(Nanos now, bool backlogged) const {
    return state_ == State::active && (has_demand(backlogged) || now < next_tick_);
  }
  // Data queued or in flight, or a probe lost since the last tick.
  bool has_demand(bool backlogged) const { return backlogged || inflight() != 0 || lost_this_rtt_; }

  // ---- operator actions (ufab-edge runtime reconfiguration, graceful stop) ----
  // A drained path is not usable for selection; the pair leaves it if it is
  // active on it (a migration as after a failure notice, without the host
  // gate: the operator asked for it). Undraining makes it a candidate again.
  void set_path_drained(size_t path, bool drained);
  bool path_drained(size_t path) const { return paths_[path].drained; }
  // The path cannot be reached (the edge's uplink for it lost its link;
  // the edge drains it too): a finish pending on it, or started on it while
  // it is unreachable (leaving it, going idle, the stop), is abandoned at
  // once (FinishTracker::abandon, counted as finish_abandoned) instead of
  // being sent into a dead link and retried for up to 1 + finish_max_retries
  // timeouts. The switches behind it release the pair by aging (§4.2).
  void set_path_unreachable(size_t path, bool unreachable);
  bool path_unreachable(size_t path) const { return paths_[path].unreachable; }
  // Finish now (§3.6) as an idle pair would: the switches subtract the pair.
  // Only an active pair sends a finish; any pair forgets the data that
  // arrived while it was not sending (on_data_arrived), so it does not join
  // for it (the edge's stop).
  void finish_now(Nanos now);
  // A finish is out and not every hop has acked yet.
  bool finish_pending() const;

  // ---- latency hiding (hints only; nothing depends on them) ----
  // A VmPair is several KB and the edge touches a random one per packet, so
  // an owner working on a burst prefetches in two passes (as DPDK's
  // lib/sched does): prefetch_state() for every pair of the burst (the
  // lines on_data_sent, window and may_send_message read: state, active
  // path, byte counters, admission, the sent history's head), then
  // prefetch_history() (the sent history's newest slot, which needs the
  // state lines to find). A frame reads no path's lines: the active path's
  // pacer is credited lazily (sync_pacer) and may_send_message reads hot
  // copies (want_message_, probe_out_).
  void prefetch_state() const {
    const char* hot = reinterpret_cast<const char*>(this);  // 64-byte aligned
    __builtin_prefetch(hot);       // hot line 1
    __builtin_prefetch(hot + 64);  // hot line 2 (the send history's header)
  }
  // For a caller sweeping many pairs' poll() (the edge's poll_pairs), in
  // two stages some pairs apart. First what needs no load to find: the hot
  // lines (prefetch_state), the poll's line in the cold part (base RTT, tick
  // times, acks not yet reported, delivered rate) and the first path's
  // pacer and finish (probe timeouts).
  void prefetch_poll() const {
    prefetch_state();
    __builtin_prefetch(&T_);
    __builtin_prefetch(&paths_[0].pacer);
    __builtin_prefetch(&paths_[0].finish);
  }
  // Then, once the hot lines are in: the other paths' pacers and finishes
  // and the sent history's oldest sample (advance_acks, next_deadline).
  void prefetch_poll_rest() const {
    for (size_t i = 1; i < n_paths_; ++i) {
      __builtin_prefetch(&paths_[i].pacer);
      __builtin_prefetch(&paths_[i].finish);
    }
    history_.prefetch_head();
  }
  void prefetch_history() const { history_.prefetch_tail(); }
  // What next_message and its probe (fill_probe) read beyond the lines
  // above, for a pair that may send a message (may_send_message): the
  // active path's flags (n_hop) and the w^l it registers at each hop, the
  // pair's id and tokens, the counters (the poll's line). At 8K pairs each
  // is a miss; the load of own_w was ~85% of fill_probe's samples (perf,
  // bench edge per worker core at 32 us).
  [[gnu::always_inline]] void prefetch_message() const {
    if (active_ >= 0) {
      const Path& p = paths_[static_cast<size_t>(active_)];
      __builtin_prefetch(&p.query);
      __builtin_prefetch(p.own_w.data());
    }
    __builtin_prefetch(&pair_id_);
    __builtin_prefetch(&c_);
  }
  // In a sweep of polls, once prefetch_poll's lines are in: prefetch_message
  // for a pair whose poll may send a probe (the active path's probe not out,
  // or its loss deadline passed).
  [[gnu::always_inline]] void prefetch_poll_message(Nanos now) const {
    if (active_ < 0) return;
    const ProbePacer& pc = paths_[static_cast<size_t>(active_)].pacer;
    if (!pc.outstanding() || now >= pc.deadline()) prefetch_message();
  }

  // ---- observability ----
  const Counters& counters() const { return c_; }
  Nanos base_rtt() const { return T_; }
  double rate_Bps() const { return rate_Bps_; }       // delivered rate (EWMA over ~4 RTTs)
  double eqn3_window() const { return eqn3_w_; }      // w of Eqn 3 on the active path
  double token_share_Bps() const { return r_; }       // r on the active path
  const Admission& admission() const { return adm_; }
  size_t n_paths() const { return n_paths_; }
  bool path_known(size_t i) const { return paths_[i].known; }
  std::span<const LinkView> path_links(size_t i) const {
    return {paths_[i].links.data(), paths_[i].n_hop};
  }

 private:
  // Line aligned, so that a prefetch of &pacer fetches the pacer's first 64
  // bytes (its flags, deadline and byte counts) and not the line before
  // them: unaligned (968 bytes, 1136 into the object) the pacer began 16
  // bytes before its flags' line.
  struct alignas(64) Path {
    // What next_message and on_data_sent read first: the pacer, the flags, the finish.
    ProbePacer pacer{4096, 8};      // probes and queries on this path (§4.1)
    bool query = false;             // the outstanding probe is a candidate query
    bool want_query = false;        // a candidate query should go out
    uint8_t n_hop = 0;
    bool known = false, failed = false;
    bool drained = false;     // operator drain (set_path_drained)
    bool unreachable = false;  // its uplink is down (set_path_unreachable)
    bool counted = false;     // the last telemetry includes our token (a probe, not a query)
    bool registered = false;  // a probe since the last join was answered (no kMsgNewPair)
    uint32_t sent_seq = 0;          // pacer seq of the outstanding probe
    FinishTracker finish{8, 8};     // finish with per-hop ACKs (design-notes §4.3)
    uint64_t bytes_at_probe = 0;    // sent_ when that probe left
    Nanos queue_delay = 0;          // sum of q_l / C_l in the last response
    double R = 0;  // Eqn 2 rate on this path (migration trigger ii)
    std::array<LinkView, wire::kMaxHops> links{};
    std::array<double, wire::kMaxHops> own_w{};  // w^l we registered at each hop
  };

  void join(int path, Nanos now, bool after_migration);
  void start_finish(int path, Nanos now);
  void start_queries(bool include_active);
  bool queries_pending() const;
  PathCandidate candidate(size_t i) const;
  void decode_hops(Path& p, const wire::Message& m);
  Result on_response(int path, const wire::Message& m, Nanos now);
  void on_query_response(int path, const wire::Message& m);
  void on_finish_ack(int path, const wire::Message& m);
  bool choose_and_move(Nanos now, bool violation);
  void rtt_tick(Nanos now, bool backlogged);
  void fill_probe(int path, wire::MsgType type, uint8_t flags, Nanos now, wire::Message& msg);
  void note_message(size_t i) {
    static_assert(kMaxCandidatePaths <= 8, "want_message_ has a bit per path");
    const bool want = paths_[i].finish.state() == FinishState::pending || paths_[i].want_query;
    const auto bit = static_cast<uint8_t>(1u << i);
    want_message_ = static_cast<uint8_t>(want ? want_message_ | bit : want_message_ & ~bit);
  }

  // The active path's pacer learns of the data bytes sent since it was last
  // told (unsynced_bytes(); while no path is active they are nobody's) at
  // the start of every public call that may read its bytes, change a
  // pacer's probe state or change the active path (next_message,
  // on_message, poll), and probe_out_ is refreshed at its end (PacerSync),
  // so a data frame touches no path line: at 8K pairs that line was a miss
  // per frame. next_deadline, which is const, counts the unsynced bytes
  // itself.
  uint64_t unsynced_bytes() const { return sent_ - pacer_synced_; }
  void sync_pacer() {
    if (active_ >= 0) paths_[static_cast<size_t>(active_)].pacer.on_data_sent(unsynced_bytes());
    pacer_synced_ = sent_;
  }
  class PacerSync {
   public:
    explicit PacerSync(VmPair& p) : p_(p) { p_.sync_pacer(); }
    ~PacerSync() {
      if (p_.active_ < 0) {
        p_.probe_out_ = false;
        p_.probe_gap_ = 0;
        return;
      }
      const ProbePacer& pacer = p_.paths_[static_cast<size_t>(p_.active_)].pacer;
      p_.probe_out_ = pacer.outstanding();
      // Bytes already sent count as unsynced from here (sent_ - pacer_synced_).
      p_.probe_gap_ = static_cast<uint32_t>(pacer.bytes_until_due());
    }
    PacerSync(const PacerSync&) = delete;
    PacerSync& operator=(const PacerSync&) = delete;

   private:
    VmPair& p_;
  };

  // ---- hot: every frame (cache lines 1-2) ----
  State state_ = State::selecting;
  uint8_t n_paths_ = 0;          // <= kMaxCandidatePaths
  bool probe_on_window_full_;    // prm_.probe_on_window_full
  bool arrived_ = false;         // on_data_arrived() while not sending (until join or finish_now)
  // Bit i: path i has a finish pending or wants a candidate query, kept by
  // note_message() wherever either changes; may_send_message reads it
  // instead of every path's finish and query lines, per frame.
  uint8_t want_message_ = 0;
  bool probe_out_ = false;       // the active path's pacer has a probe out (PacerSync)
  int active_ = -1;
  // The active path's pacer comes due by its L_w rule once this many data
  // bytes have been sent since pacer_synced_ (ProbePacer::bytes_until_due,
  // kept by PacerSync; L_w < 2^32): may_send_message tests it on the pair's
  // first line instead of next_message reading the path's lines per frame.
  uint32_t probe_gap_ = 0;
  Nanos hold_until_ = 0;         // reorder avoidance: probe-only until then
  uint64_t sent_ = 0, acked_ = 0;
  Nanos last_data_ = 0;
  uint64_t pacer_synced_ = 0;    // sent_ when the active path's pacer was last told (sync_pacer)
  Admission adm_;
  SentHistory history_;  // its header here (line 2), its ring after

  // ---- the candidate paths: the active one's pacer and finish every frame ----
  std::array<Path, kMaxCandidatePaths> paths_{};

  // ---- cold: responses, ticks, timers, telemetry ----
  EdgeParams prm_;
  std::array<double, 16> cap_Bps_{};     // target C_l = eta * C'_l by capacity code
  std::array<double, 16> inv_cap_ns_{};  // 1e9 / C_l: queueing delay per byte
  uint32_t pair_id_;
  // Beside pair_id_: every probe reads the three (fill_probe; prefetch_message).
  double phi_assigned_ = 1.0;
  double phi_admitted_ = 1e300;
  HostMigrationGate* gate_;
  Rng rng_;
  MigrationMonitor mon_;

  bool migrating_ = false;       // candidate queries out after a trigger
  bool migrate_violation_ = false;
  Nanos next_refresh_ = 0;       // candidate refresh for trigger (ii)

  double eqn3_w_ = 0, r_ = 0;

  // ---- the poll's line (prefetch_poll): what every poll() and per-RTT
  // tick, and the owner's history sample, read and write ----
  alignas(64) Nanos T_;
  Nanos next_tick_ = 0;
  Nanos last_tick_ = 0;
  uint64_t acked_at_tick_ = 0;
  uint64_t unreported_acked_ = 0;  // acked by poll(), not yet returned by advance_acks()
  double rate_Bps_ = 0;
  bool rate_init_ = false;
  bool lost_this_rtt_ = false;

  Counters c_;
};

// Per data frame, so inline: the edge's send loop writes frame bytes through
// char pointers and an opaque call here made it reload everything else too.
// The active path's pacer is told later (sync_pacer).
inline void VmPair::on_data_sent(uint32_t bytes, Nanos now) {
  sent_ += bytes;
  last_data_ = now;
  history_.record(now, sent_);
}

}  // namespace ufab
