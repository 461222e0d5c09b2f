#include "control/vm_pair.hpp"

#include <algorithm>
#include <limits>

#include "control/window.hpp"
#include "probe/units.hpp"

namespace ufab {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint32_t kPathBits = 4;  // low bits of a message seq name the path
constexpr uint32_t kPathMask = (1u << kPathBits) - 1;
static_assert(kMaxCandidatePaths <= (1u << kPathBits));

uint32_t wire_seq(uint32_t seq, size_t path) { return (seq << kPathBits) | static_cast<uint32_t>(path); }

// 0.75^n by squaring (at most 9 multiplications for n <= 256): a late tick
// on a loaded worker (n >= 2) is common, and std::pow was ~1.7% of such a
// worker's time.
double three_quarters_to(Nanos n) {
  double r = 1, b = 0.75;
  for (; n != 0; n >>= 1, b *= b)
    if (n & 1) r *= b;
  return r;
}

}  // namespace

VmPair::VmPair(const EdgeParams& params, uint32_t pair_id, Nanos base_rtt,
               std::span<const uint8_t> path_hops, HostMigrationGate* gate, uint64_t seed)
    : n_paths_(static_cast<uint8_t>(std::min(path_hops.size(), kMaxCandidatePaths))),
      probe_on_window_full_(params.probe_on_window_full),
      history_((base_rtt > 0 ? base_rtt : 1) / 32),
      prm_(params),
      pair_id_(pair_id),
      gate_(gate),
      rng_(seed),
      mon_(params.violation_rtts, params.better_path_hold_ns),
      T_(base_rtt > 0 ? base_rtt : 1) {
  for (uint8_t c = 0; c < 16; ++c) {
    cap_Bps_[c] = prm_.eta * static_cast<double>(wire::capacity_code_bps(c)) / 8.0;
    inv_cap_ns_[c] = cap_Bps_[c] > 0 ? 1e9 / cap_Bps_[c] : 0.0;  // ns per queued byte
  }
  for (size_t i = 0; i < n_paths_; ++i) {
    Path& p = paths_[i];
    p.n_hop = static_cast<uint8_t>(std::min<size_t>(path_hops[i], wire::kMaxHops));
    p.pacer = ProbePacer(prm_.probe_every_bytes, prm_.probe_timeout_rtts, 0, prm_.probe_timeout_max_rtts);
    p.finish = FinishTracker(prm_.probe_timeout_rtts, prm_.finish_max_retries);
  }
}

double VmPair::window(Nanos now) const {
  if (state_ != State::active || now < hold_until_) return 0;
  return adm_.window();
}

void VmPair::fill_probe(int path, wire::MsgType type, uint8_t flags, Nanos now, wire::Message& msg) {
  const Path& p = paths_[static_cast<size_t>(path)];
  // Header fields one by one and only the n_hop records the message carries
  // (encoders ignore the rest): this runs once per probe.
  msg.type = type;
  msg.n_hop = p.n_hop;
  msg.flags = flags;
  msg.hop_index = 0;
  msg.phi = wire::tokens_to_wire(token());
  msg.pair_id = pair_id_;
  msg.seq = 0;
  msg.timestamp_ns = now;
  msg.bytes_sent = sent_;
  // A probe registers the pair's w^l at every hop (App. G: the W field carries
  // w^l until the switch replaces it with W_l); queries and finishes carry none.
  const bool registers = type == wire::MsgType::probe && !(flags & wire::kMsgQuery);
  for (size_t i = 0; i < p.n_hop; ++i)
    msg.hop[i] = wire::HopRecord{registers ? wire::window_to_wire(p.own_w[i]) : 0u, 0, 0, 0, 0, 0, 0};
}

bool VmPair::next_message(Nanos now, bool backlogged, wire::Message& msg, int& path) {
  const PacerSync sync(*this);
  // want_message_ has a path's bit while it has a finish pending or wants a
  // candidate query (note_message): without any, steps 1 and 2 send nothing
  // and read no path's lines.
  // 1. Finishes (and their retries) first: switches must learn the pair left.
  for (size_t i = 0; want_message_ != 0 && i < n_paths_; ++i) {
    Path& p = paths_[i];
    if (!p.finish.send_due(now)) continue;
    const bool retry = p.finish.attempt() > 0;
    fill_probe(static_cast<int>(i), wire::MsgType::finish, retry ? wire::kMsgRetry : 0, now, msg);
    msg.seq = wire_seq(p.finish.on_sent(now), i);
    ++c_.finishes;
    path = static_cast<int>(i);
    return true;
  }
  // 2. Candidate queries: stamp, don't register (§3.5: probe candidates in parallel).
  for (size_t i = 0; want_message_ != 0 && i < n_paths_; ++i) {
    Path& p = paths_[i];
    if (!p.want_query || p.pacer.outstanding()) continue;
    fill_probe(static_cast<int>(i), wire::MsgType::probe, wire::kMsgQuery, now, msg);
    p.sent_seq = p.pacer.on_probe_sent(now, T_);
    msg.seq = wire_seq(p.sent_seq, i);
    p.want_query = false;
    note_message(i);
    p.query = true;
    ++c_.queries;
    path = static_cast<int>(i);
    return true;
  }
  // 3. The active path's probe, one per L_w bytes (§4.1), or at once when the
  //    window is full so a window smaller than L_w cannot stall the pair.
  if (state_ != State::active) return false;
  Path& p = paths_[static_cast<size_t>(active_)];
  // Blocked also covers the tail: no more data but bytes still unacknowledged,
  // so the pair learns they left the network and can go idle.
  const bool blocked = probe_on_window_full_ &&
                       (backlogged ? static_cast<double>(inflight()) >= window(now) : inflight() > 0);
  if (p.pacer.outstanding() || !p.pacer.probe_due(blocked)) return false;
  fill_probe(active_, wire::MsgType::probe, p.registered ? 0 : wire::kMsgNewPair, now, msg);
  p.sent_seq = p.pacer.on_probe_sent(now, T_);
  p.bytes_at_probe = sent_;
  msg.seq = wire_seq(p.sent_seq, static_cast<size_t>(active_));
  p.query = false;
  ++c_.probes;
  path = active_;
  return true;
}

void VmPair::decode_hops(Path& p, const wire::Message& m) {
  const size_t n = std::min<size_t>(m.n_hop, p.n_hop);
  double queued_ns = 0;  // sum of q_l / C_l: the queueing this path reported
  // tx: Mb/s on the wire to bytes/s in one multiplication, bit-identical to
  // wire_to_tx(v) / 8 (for any 32-bit v both products are exact doubles).
  constexpr double kTxWireToBps = static_cast<double>(wire::kTxUnitBps) / 8.0;
  for (size_t i = 0; i < n; ++i) {
    const wire::HopRecord& h = m.hop[i];
    LinkView& l = p.links[i];
    if (!(h.flags & wire::kHopStamped)) {  // a hop without uFAB-C: no information
      l = LinkView{};
      continue;
    }
    const size_t code = h.cap_code & 0xf;
    const double q = wire::wire_to_queue(h.q);
    l.cap_Bps = cap_Bps_[code];
    l.tx_Bps = static_cast<double>(h.tx) * kTxWireToBps;
    l.queue_bytes = q;
    l.phi_tokens = wire::wire_to_tokens(h.phi);
    l.window_bytes = wire::wire_to_window(h.w);
    queued_ns += q * inv_cap_ns_[code];
  }
  p.queue_delay = static_cast<Nanos>(queued_ns);
  p.known = true;
  p.failed = false;
}

PathCandidate VmPair::candidate(size_t i) const {
  const Path& p = paths_[i];
  return PathCandidate{std::span<const LinkView>(p.links.data(), p.n_hop), p.counted, p.known && !p.failed && !p.drained};
}

Nanos VmPair::rtt_estimate(Nanos now) const {
  if (active_ < 0) return T_;
  const Path& p = paths_[static_cast<size_t>(active_)];
  // The RTT data sent now will see, as the largest of: the last sample; the
  // base RTT plus the queueing the last response reported along the path;
  // and the age of the probe still outstanding (it follows the data FIFO, so
  // while it is out the path's RTT is at least that long). A sample taken
  // before a queue built would otherwise ack too early.
  Nanos est = std::max(p.pacer.last_rtt(), T_ + p.queue_delay);
  if (p.pacer.outstanding() && !p.query && now > p.pacer.sent_at()) est = std::max(est, now - p.pacer.sent_at());
  return est;
}

Nanos VmPair::last_rtt() const { return active_ < 0 ? 0 : paths_[static_cast<size_t>(active_)].pacer.last_rtt(); }

uint64_t VmPair::advance_acks(Nanos now) {
  if (active_ < 0) return 0;
  const Nanos est = rtt_estimate(now);
  // Bytes poll() moved the mark over are reported here, to the owner.
  const uint64_t earlier = unreported_acked_;
  unreported_acked_ = 0;
  if (now < est) return earlier;
  const uint64_t by = history_.bytes_sent_by(now - est);
  if (by <= acked_) return earlier;
  const uint64_t d = by - acked_;
  acked_ = by;
  return earlier + d;
}

VmPair::Result VmPair::on_message(const wire::Message& m, Nanos now) {
  const PacerSync sync(*this);
  Result res;
  const size_t idx = m.seq & kPathMask;
  if (m.pair_id != pair_id_ || idx >= n_paths_) {
    ++c_.stale;
    return res;
  }
  Path& p = paths_[idx];
  switch (m.type) {
    case wire::MsgType::response: {
      if (!p.pacer.outstanding() || wire_seq(p.sent_seq, idx) != m.seq ||
          p.pacer.on_response(p.sent_seq, now).kind != ResponseKind::accepted) {
        ++c_.stale;
        return res;
      }
      ++c_.responses;
      res.accepted = true;
      // Data sent before the probe has left the network. The echo is the
      // probe's sent_ (fill_probe), never more than sent_ now: a response
      // claiming more (corrupted, or forged with the right seq) acks at most
      // what was sent, so inflight() = sent_ - acked_ never wraps.
      const uint64_t echoed = std::min<uint64_t>(m.bytes_sent, sent_);
      if (echoed > acked_) {
        res.acked_bytes = echoed - acked_;
        acked_ = echoed;
      }
      res.acked_bytes += advance_acks(now);
      if (p.query) {
        p.query = false;
        decode_hops(p, m);
        p.counted = false;  // a query does not register: Phi_l excludes us
        // R on a path we are not on: our token is not yet inside Phi_l.
        std::array<LinkView, wire::kMaxHops> with_us = p.links;
        for (size_t i = 0; i < p.n_hop; ++i) with_us[i].phi_tokens += token();
        p.R = path_rate_Bps(token(), {with_us.data(), p.n_hop}, T_);
        return res;
      }
      phi_admitted_ = m.phi == kWireUnbound ? kInf : wire::wire_to_tokens(m.phi);
      decode_hops(p, m);
      p.counted = true;  // this telemetry includes our own token
      p.registered = true;
      if (static_cast<int>(idx) != active_ || state_ != State::active) return res;
      std::array<double, wire::kMaxHops> w_l;  // path_window writes the first n_hop; no zeroing
      const PathWindow pw = path_window(token(), {p.links.data(), p.n_hop},
                                        {p.own_w.data(), p.n_hop}, T_, {w_l.data(), p.n_hop});
      eqn3_w_ = pw.w;
      r_ = pw.r;
      const double w = adm_.update(pw.w, pw.ramp_step, now, T_);
      // Register what the pair actually uses at each hop: min(w^l, w).
      for (size_t i = 0; i < p.n_hop; ++i) p.own_w[i] = std::min(w_l[i], w);
      return res;
    }
    case wire::MsgType::finish_ack: {
      uint16_t mask = 0;
      for (size_t i = 0; i < std::min<size_t>(m.n_hop, p.n_hop); ++i)
        if (m.hop[i].flags & wire::kHopAck) mask = static_cast<uint16_t>(mask | (1u << i));
      res.accepted = p.finish.on_ack(m.seq >> kPathBits, mask);
      note_message(idx);
      if (res.accepted) ++c_.finish_acked;
      return res;
    }
    case wire::MsgType::failure: {
      ++c_.failures;
      res.accepted = true;
      p.failed = true;
      p.known = false;
      if (static_cast<int>(idx) == active_ && state_ == State::active && !migrating_) {
        migrating_ = true;  // the path is gone: look for another one now
        migrate_violation_ = true;
        start_queries(false);
      }
      return res;
    }
    default:
      ++c_.stale;
      return res;
  }
}

void VmPair::start_queries(bool include_active) {
  // A drained path (an operator's drain, or its uplink's link down) is no
  // candidate: it is queried only when every path is drained, so that a
  // pair with nowhere to go still learns when one answers (each round
  // waits out a query timeout, not a poll).
  bool open = false;
  for (size_t i = 0; i < n_paths_; ++i) open |= !paths_[i].drained;
  for (size_t i = 0; i < n_paths_; ++i)
    if ((include_active || static_cast<int>(i) != active_) && !(open && paths_[i].drained)) {
      paths_[i].want_query = true;
      note_message(i);
    }
}

bool VmPair::queries_pending() const {
  for (size_t i = 0; i < n_paths_; ++i) {
    const Path& p = paths_[i];
    if (p.want_query || (p.query && p.pacer.outstanding())) return true;
  }
  return false;
}

void VmPair::join(int path, Nanos now, bool after_migration) {
  Path& p = paths_[static_cast<size_t>(path)];
  active_ = path;
  state_ = State::active;
  arrived_ = false;
  p.registered = false;
  // A fresh pacer: the registering probe goes with the first data (§3.5
  // bootstrap). Its seqs continue the old ones so a late response is stale,
  // and so does its loss streak: the path has not answered since (the
  // doubling loss timeout, probe_pacer.hpp).
  p.pacer = ProbePacer(prm_.probe_every_bytes, prm_.probe_timeout_rtts, p.pacer.outstanding_seq() + 1,
                       prm_.probe_timeout_max_rtts, p.pacer.loss_streak());
  p.finish = FinishTracker(prm_.probe_timeout_rtts, prm_.finish_max_retries);  // a rejoin cancels a finish
  note_message(static_cast<size_t>(path));
  adm_.join(token(), prm_.unit_bw_Bps, T_, now);  // Scenario 1
  for (size_t i = 0; i < p.n_hop; ++i) p.own_w[i] = adm_.window();
  hold_until_ = after_migration && prm_.reorder_avoidance ? now + T_ : 0;
  mon_.reset();
  next_tick_ = now + T_;
  last_tick_ = now;
  acked_at_tick_ = acked_;
  rate_init_ = false;
  next_refresh_ = now + static_cast<Nanos>(prm_.candidate_refresh_rtts) * T_;
}

void VmPair::start_finish(int path, Nanos now) {
  Path& p = paths_[static_cast<size_t>(path)];
  p.finish.start(now, T_, p.n_hop);
  if (p.unreachable && p.finish.abandon()) ++c_.finish_abandoned;  // nothing to send it on
  note_message(static_cast<size_t>(path));
  p.registered = false;
}

bool VmPair::choose_and_move(Nanos now, bool violation) {
  std::array<PathCandidate, kMaxCandidatePaths> cands;
  for (size_t i = 0; i < n_paths_; ++i) cands[i] = candidate(i);
  const std::span<const PathCandidate> cs(cands.data(), n_paths_);
  if (state_ != State::active) {  // initial selection
    int idx = select_path(cs, token(), prm_.unit_bw_Bps, rng_);
    if (idx < 0) {
      // Nothing qualifies: take the least subscribed usable path (the paper
      // assumes feasible placement; this is counted, and trigger (i) keeps looking).
      double best = kInf;
      for (size_t i = 0; i < n_paths_; ++i) {
        if (!cands[i].usable) continue;
        const double s = path_subscription(cands[i], token(), prm_.unit_bw_Bps);
        if (s < best) best = s, idx = static_cast<int>(i);
      }
      if (idx < 0) return false;
      ++c_.unqualified_joins;
    }
    join(idx, now, false);
    return true;
  }
  const int idx = select_path(cs, token(), prm_.unit_bw_Bps, rng_, active_);
  if (idx < 0) return false;
  if (violation && gate_ && !gate_->try_acquire(now, T_)) {
    ++c_.migrations_refused;
    return false;
  }
  start_finish(active_, now);
  join(idx, now, true);
  ++(violation ? c_.migrations_violation : c_.migrations_better);
  return true;
}

void VmPair::rtt_tick(Nanos now, bool backlogged) {
  const Nanos dt = now - last_tick_;
  // Delivered rate over this RTT, smoothed over ~4 RTTs (EWMA, gain 1/4):
  // acks arrive in bursts, and one short RTT must not look like a violation.
  // After a parked stretch (rtt_ticking) of n = dt / T whole RTTs the
  // sample spans them all and weighs as n ticks would: gain 1 - (3/4)^n
  // (1/4 for the usual tick, dt < 2T).
  const double sample = dt ? static_cast<double>(acked_ - acked_at_tick_) * 1e9 / static_cast<double>(dt) : 0;
  const Nanos n = T_ != 0 ? dt / T_ : 1;
  const double gain = n < 2 ? 0.25 : 1 - three_quarters_to(std::min<Nanos>(n, 256));
  rate_Bps_ = rate_init_ ? rate_Bps_ + (sample - rate_Bps_) * gain : sample;
  rate_init_ = true;
  acked_at_tick_ = acked_;
  last_tick_ = now;
  const Path& p = paths_[static_cast<size_t>(active_)];

  // Trigger (i): the path no longer qualifies, the probe was lost, or a
  // window-limited pair with demand gets less than its guarantee.
  const double guarantee = token() * prm_.unit_bw_Bps;
  const bool window_limited = backlogged && static_cast<double>(inflight()) >= window(now);
  const bool violated = lost_this_rtt_ ||
                        (p.known && !path_qualified(candidate(static_cast<size_t>(active_)), token(), prm_.unit_bw_Bps)) ||
                        (p.registered && window_limited && rate_Bps_ < (1 - prm_.violation_tolerance) * guarantee);
  lost_this_rtt_ = false;
  if (mon_.on_rtt(violated) && n_paths_ > 1 && !migrating_) {
    migrating_ = true;
    migrate_violation_ = true;
    start_queries(false);
  }

  // Scenario 2: an existing pair whose rate fell below r restarts at r*T.
  if (p.registered && adm_.should_restart(rate_Bps_, r_, window_limited)) {
    adm_.restart(r_, T_, now);
    ++c_.restarts;
  }

  // Trigger (ii): a qualified candidate with a larger R for 30 s.
  if (n_paths_ > 1 && !migrating_) {
    std::array<PathCandidate, kMaxCandidatePaths> cands;
    std::array<double, kMaxCandidatePaths> rates{};
    paths_[static_cast<size_t>(active_)].R = path_rate_Bps(token(), path_links(static_cast<size_t>(active_)), T_);
    for (size_t i = 0; i < n_paths_; ++i) {
      cands[i] = candidate(i);
      rates[i] = paths_[i].R;
    }
    int best = best_rate_path({cands.data(), n_paths_}, {rates.data(), n_paths_}, token(), prm_.unit_bw_Bps);
    if (best == active_ || (best >= 0 && rates[static_cast<size_t>(best)] <= p.R)) best = -1;
    if (mon_.on_better(best, now)) {
      migrating_ = true;
      migrate_violation_ = false;
      if (!choose_and_move(now, false)) migrating_ = false;
      migrating_ = false;
    }
  }
}

void VmPair::poll(Nanos now, bool backlogged) {
  const PacerSync sync(*this);
  // Keep what the mark moved by for the owner's next advance_acks(): a
  // scheduler gating on its own in-flight count must learn these bytes too,
  // or it stays blocked with the pair's in-flight at 0.
  unreported_acked_ += advance_acks(now);
  for (size_t i = 0; i < n_paths_; ++i) {
    Path& p = paths_[i];
    if (p.pacer.check_timeout(now)) {  // no response within 8 base RTTs (§4.1)
      if (p.query) {
        ++c_.query_losses;
        p.query = false;
        p.known = false;
      } else {
        ++c_.probe_losses;
        if (static_cast<int>(i) == active_) lost_this_rtt_ = true;
      }
    }
    if (p.finish.check_give_up(now)) {
      ++c_.finish_gave_up;  // aging at the switches cleans up
      note_message(i);
    }
  }

  // Demand of a pair not sending: its queue, or data that arrived since it
  // stopped sending (on_data_arrived; join() clears it).
  const bool demand = backlogged || arrived_;
  switch (state_) {
    case State::selecting:
      if (!demand) return;
      if (n_paths_ == 1) {  // nothing to choose: join at once (Scenario 1)
        join(0, now, false);
        return;
      }
      if (!queries_pending()) {
        bool any_known = false;
        for (size_t i = 0; i < n_paths_; ++i) any_known |= paths_[i].known;
        if (!any_known || !choose_and_move(now, false)) start_queries(true);
      }
      return;
    case State::idle:
      if (!demand) return;
      if (active_ >= 0 && paths_[static_cast<size_t>(active_)].known &&
          path_qualified(candidate(static_cast<size_t>(active_)), token(), prm_.unit_bw_Bps)) {
        join(active_, now, false);
      } else {
        state_ = State::selecting;
        active_ = -1;
      }
      return;
    case State::active:
      break;
  }

  if (migrating_ && !queries_pending()) {
    // Off a drained path (set_path_drained) the pair must go: while no
    // candidate qualifies (its query lost, e.g. the far edge's reply
    // uplink down too) it queries again, each round a query timeout.
    if (!choose_and_move(now, migrate_violation_) && paths_[static_cast<size_t>(active_)].drained)
      start_queries(false);
    else
      migrating_ = false;
  }
  if (now >= next_tick_ && has_demand(backlogged)) {  // else parked (rtt_ticking)
    rtt_tick(now, backlogged);
    next_tick_ = now + T_;
  }
  if (n_paths_ > 1 && now >= next_refresh_ && !migrating_) {
    start_queries(false);
    next_refresh_ = now + static_cast<Nanos>(prm_.candidate_refresh_rtts) * T_;
  }
  if (!backlogged && inflight() == 0 && now >= last_data_ + prm_.idle_finish_ns) {
    start_finish(active_, now);  // idle: tell the switches we left (§3.6)
    state_ = State::idle;
  }
}

Nanos VmPair::next_deadline(Nanos now, bool backlogged) const {
  Nanos d = kNever;
  const auto at = [&d, now](Nanos t) { d = std::min(d, std::max(t, now)); };
  for (size_t i = 0; i < n_paths_; ++i) {
    const Path& p = paths_[i];
    if (p.pacer.outstanding()) at(p.pacer.deadline());   // probe or query loss
    if (p.want_query && !p.pacer.outstanding()) return now;  // next_message sends the query
    if (p.finish.state() == FinishState::pending)             // first send, retry, give-up
      at(p.finish.attempt() == 0 ? now : p.finish.retry_at());
  }
  if (active_ >= 0) {  // advance_acks() (it does nothing without an active path)
    if (unreported_acked_ != 0) return now;
    if (!history_.empty()) {
      const Path& p = paths_[static_cast<size_t>(active_)];
      const Nanos base = std::max(p.pacer.last_rtt(), T_ + p.queue_delay);
      // rtt_estimate(t) = max(base, t - sent_at) while a probe is out, so the
      // mark t - estimate stays <= sent_at: an older sample waits for it.
      const bool probe_out = p.pacer.outstanding() && !p.query;
      if (!probe_out || p.pacer.sent_at() >= history_.oldest_time()) at(history_.oldest_time() + base);
    }
  }
  switch (state_) {  // demand as poll() has it
    case State::selecting:
      if ((backlogged || arrived_) && (n_paths_ == 1 || !queries_pending())) return now;
      return d;
    case State::idle:
      return backlogged || arrived_ ? now : d;
    case State::active:
      break;
  }
  if (migrating_ && !queries_pending()) return now;
  if (rtt_ticking(now, backlogged)) at(next_tick_);
  if (n_paths_ > 1 && !migrating_) at(next_refresh_);
  if (!backlogged && inflight() == 0) at(last_data_ + prm_.idle_finish_ns);
  if (now < hold_until_) at(hold_until_);  // window(t) opens: the probe rule may change
  const Path& p = paths_[static_cast<size_t>(active_)];
  // The hot copy of prm_.probe_on_window_full (as next_message reads it):
  // prm_ is in the pair's cold part, a miss per poll at 8K pairs (perf:
  // ~70% of next_deadline's samples on that load).
  const bool blocked = probe_on_window_full_ &&
                       (backlogged ? static_cast<double>(inflight()) >= window(now) : inflight() > 0);
  if (!p.pacer.outstanding() && p.pacer.probe_due(blocked, unsynced_bytes())) return now;
  return d;
}

void VmPair::set_path_drained(size_t path, bool drained) {
  if (path >= n_paths_) return;
  paths_[path].drained = drained;
  if (drained && static_cast<int>(path) == active_ && state_ == State::active && !migrating_ && n_paths_ > 1) {
    migrating_ = true;
    migrate_violation_ = false;  // not a violation: the host gate does not apply
    start_queries(false);
  }
}

void VmPair::set_path_unreachable(size_t path, bool unreachable) {
  if (path >= n_paths_) return;
  Path& p = paths_[path];
  p.unreachable = unreachable;
  if (unreachable && p.finish.abandon()) {
    ++c_.finish_abandoned;
    note_message(path);
  }
}

void VmPair::finish_now(Nanos now) {
  arrived_ = false;
  if (state_ != State::active) return;
  start_finish(active_, now);
  state_ = State::idle;
}

bool VmPair::finish_pending() const {
  for (size_t i = 0; i < n_paths_; ++i)
    if (paths_[i].finish.state() == FinishState::pending) return true;
  return false;
}

}  // namespace ufab
