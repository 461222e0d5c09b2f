// VmPair::next_deadline: hand-computed deadlines, and a pair polled only at
// its deadlines behaves exactly as one polled at every token period.
// Values: B_u = 1 Gb/s, phi = 2, T = 24 us, defaults otherwise (probe loss
// 8 T = 192 us, L_w = 4096 B, idle finish 10 ms, candidate refresh 1000 T).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <vector>

#include "control/vm_pair.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"
#include "tests/unit/deadline_twin.hpp"
#include "tests/unit/uniform_response.hpp"

using namespace ufab;

namespace {
constexpr Nanos kT = 24 * kUs;
constexpr Nanos kNever = VmPair::kNever;

// Every hop stamped with Phi = 8 tokens, W = 40000 B, idle, 10 Gb/s.
using test::uniform_response;

VmPair single_path(const EdgeParams& prm) {
  const std::array<uint8_t, 1> h{2};
  VmPair p(prm, 9, kT, h, nullptr, 1);
  p.set_assigned_token(2);
  return p;
}

// Joins p at t = 0, sends its first probe and answers it at 20 us
// (uniform_response); m is left holding that probe.
void answer_first_probe(VmPair& p, wire::Message& m) {
  p.poll(0, true);
  int path;
  ASSERT_TRUE(p.next_message(0, true, m, path));
  ASSERT_TRUE(p.on_message(uniform_response(m), 20 * kUs).accepted);
}
}  // namespace

TEST(PairDeadline, SelectingWaitsForDataThenIsDueAtOnce) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  EXPECT_EQ(p.next_deadline(5 * kUs, false), kNever);  // nothing until data comes
  EXPECT_TRUE(p.wakes_on_backlog(5 * kUs));
  EXPECT_EQ(p.next_deadline(5 * kUs, true), 5 * kUs);  // join now
}

TEST(PairDeadline, ActivePairTicksEveryRttAndProbesAtOnce) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  p.poll(0, true);  // join: next RTT tick at 24 us
  ASSERT_EQ(p.state(), VmPair::State::active);
  EXPECT_EQ(p.next_deadline(0, true), 0u);  // the registering probe is due
  wire::Message m;
  int path;
  ASSERT_TRUE(p.next_message(0, true, m, path));
  // Outstanding probe (lost at 192 us), RTT tick at 24 us.
  EXPECT_EQ(p.next_deadline(0, true), 24 * kUs);
  // Not backlogged, nothing in flight: also the idle finish at 10 ms; the tick first.
  EXPECT_EQ(p.next_deadline(1 * kUs, false), 24 * kUs);
  EXPECT_FALSE(p.wakes_on_backlog(1 * kUs));  // window 6000 B open, nothing in flight, tick not yet due
  p.poll(24 * kUs, true);
  EXPECT_EQ(p.next_deadline(24 * kUs, true), 48 * kUs);
}

TEST(PairDeadline, AcksAtTheOldestSampleOneRttEstimateLater) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  ASSERT_NO_FATAL_FAILURE(answer_first_probe(p, m));  // RTT sample 20 us < T: estimate T = 24 us
  p.poll(24 * kUs, true);  // next tick 48 us
  p.on_data_sent(1000, 30 * kUs);
  // Sample (30 us, 1000 B) acks at 30 + 24 = 54 us; the tick at 48 us comes first.
  EXPECT_EQ(p.next_deadline(30 * kUs, true), 48 * kUs);
  p.poll(48 * kUs, true);  // next tick 72 us
  EXPECT_EQ(p.next_deadline(48 * kUs, true), 54 * kUs);
  EXPECT_EQ(p.advance_acks(54 * kUs - 1), 0u);  // exact: not one ns earlier
  p.poll(54 * kUs, true);
  // poll moved the mark: due at once until the owner takes the bytes.
  EXPECT_EQ(p.next_deadline(54 * kUs, true), 54 * kUs);
  EXPECT_EQ(p.advance_acks(54 * kUs), 1000u);
  EXPECT_EQ(p.next_deadline(54 * kUs, true), 72 * kUs);
}

TEST(PairDeadline, AnOutstandingProbeHoldsBackLaterSamples) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_NO_FATAL_FAILURE(answer_first_probe(p, m));
  p.on_data_sent(5000, 22 * kUs);  // >= L_w: a probe is due
  EXPECT_EQ(p.next_deadline(22 * kUs, true), 22 * kUs);
  ASSERT_TRUE(p.next_message(22 * kUs, true, m, path));  // probe sent at 22 us
  p.poll(24 * kUs, true);                                // tick; next at 48 us
  p.on_data_sent(500, 30 * kUs);
  // Oldest sample 22 us (the probe's own time): acks at 22 + 24 = 46 us.
  EXPECT_EQ(p.next_deadline(30 * kUs, true), 46 * kUs);
  p.poll(46 * kUs, true);
  EXPECT_EQ(p.advance_acks(46 * kUs), 5000u);
  // The 30 us sample is newer than the probe still out: the estimate grows
  // with the probe's age (now - 22 us), so only its response or its loss at
  // 22 + 192 = 214 us can move the mark. Left: the RTT ticks.
  EXPECT_EQ(p.next_deadline(46 * kUs, true), 48 * kUs);
  for (Nanos t = 48 * kUs; t < 214 * kUs; t += kT) {
    p.poll(t, true);
    EXPECT_EQ(p.advance_acks(t), 0u);
  }
  EXPECT_EQ(p.bytes_acked(), 5000u);
}

// A pair with nothing queued or in flight parks its per-RTT tick; data wakes
// it, and the tick then weighs the RTTs it skipped: rate EWMA gain
// 1 - (3/4)^n for n whole RTTs since the last tick.
TEST(PairDeadline, TickParksWithoutDemandAndCatchesUpTheRate) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  p.poll(0, true);  // join; tick at 24 us
  wire::Message m;
  int path;
  ASSERT_TRUE(p.next_message(0, true, m, path));  // registering probe
  p.on_data_sent(3000, 1 * kUs);
  p.poll(24 * kUs, true);  // tick 1: nothing acked, rate 0
  EXPECT_EQ(p.rate_Bps(), 0.0);
  p.on_message(uniform_response(m), 40 * kUs);  // acks nothing (probe before the data)
  ASSERT_TRUE(p.next_message(41 * kUs, false, m, path));  // tail probe
  p.on_message(uniform_response(m), 45 * kUs);
  ASSERT_EQ(p.inflight(), 0u);
  p.poll(48 * kUs, true);  // tick 2 (backlogged): 3000 B over 24 us, gain 1/4
  const double r2 = 3000 * 1e9 / (24 * kUs) / 4;
  EXPECT_DOUBLE_EQ(p.rate_Bps(), r2);
  EXPECT_EQ(p.next_deadline(50 * kUs, false), 72 * kUs);  // the first tick after the demand stays armed
  EXPECT_FALSE(p.wakes_on_backlog(60 * kUs));
  p.poll(72 * kUs, false);  // no demand: parked, rate unchanged
  EXPECT_DOUBLE_EQ(p.rate_Bps(), r2);
  EXPECT_FALSE(p.rtt_ticking(72 * kUs, false));
  EXPECT_EQ(p.next_deadline(72 * kUs, false), 1 * kUs + prm.idle_finish_ns);  // only the idle finish
  EXPECT_TRUE(p.rtt_ticking(72 * kUs, true));
  EXPECT_TRUE(p.wakes_on_backlog(100 * kUs));  // parked: data wakes it
  // Data at 312 us: 264 us = 11 RTTs since tick 2, nothing acked.
  p.poll(312 * kUs, true);
  EXPECT_NEAR(p.rate_Bps(), r2 * std::pow(0.75, 11), r2 * 1e-12);
  EXPECT_EQ(p.next_deadline(312 * kUs, true), 336 * kUs);  // ticking again
}

TEST(PairDeadline, IdleFinishThenRetriesAtEightRttsDoubling) {
  EdgeParams prm;
  prm.finish_max_retries = 1;
  VmPair p = single_path(prm);
  p.poll(0, true);
  wire::Message m;
  int path;
  ASSERT_TRUE(p.next_message(0, true, m, path));
  p.on_data_sent(3000, 1 * kUs);
  p.on_message(uniform_response(m), 20 * kUs);  // acks nothing (probe before the data)
  ASSERT_TRUE(p.next_message(21 * kUs, false, m, path));  // tail probe
  p.on_message(uniform_response(m), 40 * kUs);
  ASSERT_EQ(p.inflight(), 0u);
  // Nothing queued or in flight: the tick at 48 us parks (rtt_ticking) and
  // the next deadline is the idle finish at 1 us + 10 ms.
  const Nanos t_idle = 1 * kUs + prm.idle_finish_ns;
  Nanos t = 0;
  int polls = 0;
  for (t = 48 * kUs; t < t_idle; t = p.next_deadline(t, false)) {
    p.poll(t, false);
    ++polls;
  }
  EXPECT_EQ(polls, 1);
  EXPECT_EQ(t, t_idle);
  p.poll(t_idle, false);
  ASSERT_EQ(p.state(), VmPair::State::idle);
  EXPECT_EQ(p.next_deadline(t_idle, false), t_idle);  // the finish goes at once
  ASSERT_TRUE(p.next_message(t_idle, false, m, path));
  EXPECT_EQ(p.next_deadline(t_idle, false), t_idle + 8 * kT);  // retry
  EXPECT_TRUE(p.wakes_on_backlog(t_idle + 8 * kT));              // idle: data wakes it
  p.poll(t_idle + 8 * kT, false);
  ASSERT_TRUE(p.next_message(t_idle + 8 * kT, false, m, path));
  EXPECT_EQ(m.flags, wire::kMsgRetry);
  // Last send (1 + 1 retries): give up after 2 * 8 T.
  EXPECT_EQ(p.next_deadline(t_idle + 8 * kT, false), t_idle + 8 * kT + 16 * kT);
  p.poll(t_idle + 24 * kT, false);
  EXPECT_EQ(p.counters().finish_gave_up, 1u);
  EXPECT_EQ(p.next_deadline(t_idle + 24 * kT, false), kNever);
}

TEST(PairDeadline, MultipathQueriesAtOnceAndTheCandidateRefresh) {
  EdgeParams prm;
  prm.candidate_refresh_rtts = 1;  // refresh with every RTT tick
  const std::array<uint8_t, 2> h{2, 2};
  VmPair p(prm, 9, kT, h, nullptr, 1);
  p.set_assigned_token(2);
  p.poll(0, true);  // nothing known: query both paths
  EXPECT_EQ(p.next_deadline(0, true), 0u);
  wire::Message q0, q1;
  int path0, path1;
  ASSERT_TRUE(p.next_message(0, true, q0, path0));
  ASSERT_TRUE(p.next_message(0, true, q1, path1));
  // Both out: their loss at 192 us; nothing else while selecting.
  EXPECT_EQ(p.next_deadline(0, true), 8 * kT);
  p.on_message(uniform_response(q0), 10 * kUs);
  p.on_message(uniform_response(q1, kWireUnbound, 16), 12 * kUs);
  EXPECT_EQ(p.next_deadline(12 * kUs, true), 12 * kUs);  // both known: choose now
  p.poll(12 * kUs, true);
  ASSERT_EQ(p.state(), VmPair::State::active);
  wire::Message m;
  int path;
  ASSERT_TRUE(p.next_message(12 * kUs, true, m, path));
  EXPECT_EQ(p.next_deadline(12 * kUs, true), 36 * kUs);  // tick at join + T
  // The tick and the candidate refresh (trigger ii) at 36 us, which queries
  // the other path at once.
  p.poll(36 * kUs, true);
  EXPECT_EQ(p.next_deadline(36 * kUs, true), 36 * kUs);
  while (p.next_message(36 * kUs, true, m, path)) {
  }
  EXPECT_EQ(p.counters().queries, 3u);  // the other path's refresh query
  EXPECT_EQ(p.next_deadline(36 * kUs, true), 60 * kUs);
}

// The edge's rule (pipeline/control_tick.cpp): poll a pair only when its
// deadline has come, when its queue starts while wakes_on_backlog(), and
// recompute the deadline after each poll and each message. Against a pair
// polled at every 32 us tick, over a random run: the same messages at the
// same times and the same state after every tick.
TEST(PairDeadline, PollingOnlyAtDeadlinesChangesNothing) {
  uint64_t polls_a = 0, polls_b = 0, migrations = 0, losses = 0, finishes = 0, restarts = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    EdgeParams prm;
    prm.reorder_avoidance = seed % 2 == 0;
    prm.probe_every_bytes = 2048;
    prm.idle_finish_ns = 300 * kUs;
    prm.candidate_refresh_rtts = 20;
    prm.better_path_hold_ns = 200 * kUs;
    prm.probe_on_window_full = seed % 4 != 0;  // off as with window gating off, where data also goes past the window
    const std::array<uint8_t, 3> h{2, 3, 2};
    const size_t n_paths = 1 + seed % 3;
    HostMigrationGate ga(4, seed), gb(4, seed);
    VmPair a(prm, 9, kT, std::span<const uint8_t>(h.data(), n_paths), &ga, seed);
    VmPair b(prm, 9, kT, std::span<const uint8_t>(h.data(), n_paths), &gb, seed);
    Rng rng(seed * 7919);
    struct InFlight {
      Nanos at;
      wire::Message m;
    };
    std::deque<InFlight> net;  // messages of a (b's must be the same), answered later
    bool backlogged = false;
    test::DeadlineTwin tw{a, b};
    Nanos t = 0;
    const auto sent = [&](const wire::Message& ma, const wire::Message& mb) {
      ASSERT_EQ(ma.bytes_sent, mb.bytes_sent);
      ASSERT_EQ(ma.phi, mb.phi);
      if (rng.uniform(0, 9) != 0) net.push_back({t + rng.uniform(5, 60) * kUs, ma});  // 10% lost
    };
    const auto send_all = [&](Nanos at, bool bl) { tw.send_all(at, bl, seed, sent); };
    for (int step = 0; step < 3000; ++step) {
      t += rng.uniform(1, 16) * kUs;
      // Events at t: responses, demand, data, tokens.
      while (!net.empty() && net.front().at <= t) {
        wire::Message m = net.front().m;
        net.pop_front();
        const double phi = static_cast<double>(rng.uniform(2, 40));
        const wire::Message r = m.type == wire::MsgType::finish
                                    ? [&] {
                                        for (size_t i = 0; i < m.n_hop; ++i)
                                          m.hop[i].flags = static_cast<uint8_t>(wire::kHopStamped |
                                                                                (rng.uniform(0, 1) ? wire::kHopAck : 0));
                                        return wire::reflect(m, 0);
                                      }()
                                    : uniform_response(m, rng.uniform(0, 3) == 0 ? wire::tokens_to_wire(1.5) : kWireUnbound, phi,
                                              static_cast<double>(rng.uniform(0, 20000)));
        const auto ra = a.on_message(r, t);
        const auto rb = b.on_message(r, t);
        ASSERT_EQ(ra.accepted, rb.accepted);
        tw.acked_a += ra.acked_bytes;
        tw.acked_b += rb.acked_bytes;
        send_all(t, backlogged);
        tw.due_b = b.next_deadline(t, backlogged);
      }
      if (!backlogged && rng.uniform(0, 3) == 0) {
        backlogged = true;
        tw.on_backlog(t);
      }
      if (rng.uniform(0, 9) == 0) {
        const double tok = static_cast<double>(rng.uniform(1, 6));
        a.set_assigned_token(tok);
        b.set_assigned_token(tok);
      }
      // Past a full window too, sometimes, where nothing probes on it (as
      // window gating off sends).
      if (backlogged && (a.window(t) > static_cast<double>(a.inflight()) ||
                         (!prm.probe_on_window_full && rng.uniform(0, 1) == 0))) {
        const auto bytes = static_cast<uint32_t>(rng.uniform(64, 1500));
        a.on_data_sent(bytes, t);
        b.on_data_sent(bytes, t);
        if (rng.uniform(0, 2) == 0) backlogged = false;
        send_all(t, backlogged);  // sched_tx's control_tx
      }
      if (step % 2 == 0) tw.tick(t, backlogged, seed, sent);
      ASSERT_EQ(a.state(), b.state()) << "seed " << seed << " step " << step;
      ASSERT_EQ(a.active_path(), b.active_path());
      ASSERT_EQ(a.bytes_acked(), b.bytes_acked()) << "seed " << seed << " step " << step;
      ASSERT_EQ(tw.acked_a, tw.acked_b);
      ASSERT_EQ(a.window(t), b.window(t));
      ASSERT_EQ(a.rate_Bps(), b.rate_Bps()) << "seed " << seed << " step " << step;
      ASSERT_EQ(a.counters().probe_losses, b.counters().probe_losses);
      ASSERT_EQ(a.counters().restarts, b.counters().restarts);
      ASSERT_EQ(a.counters().migrations_violation + a.counters().migrations_better,
                b.counters().migrations_violation + b.counters().migrations_better);
      ASSERT_EQ(a.counters().finish_gave_up, b.counters().finish_gave_up);
    }
    EXPECT_GT(a.counters().responses, 10u) << "seed " << seed;
    polls_a += tw.polls_a;
    polls_b += tw.polls_b;
    migrations += a.counters().migrations_violation + a.counters().migrations_better;
    losses += a.counters().probe_losses + a.counters().query_losses;
    finishes += a.counters().finishes;
    restarts += a.counters().restarts;
  }
  // The run exercised the timers, and b skipped polls.
  std::printf("polls every tick %llu, at deadlines %llu; migrations %llu, losses %llu, finishes %llu, restarts %llu\n",
              static_cast<unsigned long long>(polls_a), static_cast<unsigned long long>(polls_b),
              static_cast<unsigned long long>(migrations), static_cast<unsigned long long>(losses),
              static_cast<unsigned long long>(finishes), static_cast<unsigned long long>(restarts));
  EXPECT_GT(migrations, 0u);
  EXPECT_GT(losses, 0u);
  EXPECT_GT(finishes, 0u);
  EXPECT_LT(polls_b, polls_a);
}
