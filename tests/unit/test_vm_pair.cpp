// VmPair: the edge's per-pair state machine driven by scripted messages.
// Values by hand from Eqn 3 and §3.4 with B_u = 1 Gb/s (1.25e8 B/s), phi = 2,
// T = 24 us, 10 Gb/s links (code 5): C = 0.95 * 1.25e9 = 1.1875e9 B/s,
// C*T = 28,500 B.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "control/vm_pair.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"

using namespace ufab;

namespace {
constexpr Nanos kT = 24 * kUs;

struct Hop {
  double phi_tokens, W_bytes, tx_bps, q_bytes;
  uint8_t cap_code = 5;
};

// The switches' answer: the probe with every hop stamped, reflected by the receiver.
wire::Message respond(wire::Message m, const std::vector<Hop>& hops, uint32_t admitted = kWireUnbound) {
  for (size_t i = 0; i < hops.size(); ++i) {
    m.hop[i].w = wire::window_to_wire(hops[i].W_bytes);
    m.hop[i].phi = wire::tokens_to_wire(hops[i].phi_tokens);
    m.hop[i].tx = wire::tx_to_wire(hops[i].tx_bps);
    m.hop[i].q = wire::queue_to_wire(static_cast<uint64_t>(hops[i].q_bytes));
    m.hop[i].cap_code = hops[i].cap_code;
    m.hop[i].flags = wire::kHopStamped;
  }
  m.hop_index = m.n_hop;
  return wire::reflect(m, admitted);
}

wire::Message finish_ack(wire::Message m, uint16_t ack_mask) {
  for (size_t i = 0; i < m.n_hop; ++i)
    m.hop[i].flags = static_cast<uint8_t>(wire::kHopStamped | ((ack_mask >> i) & 1 ? wire::kHopAck : 0));
  return wire::reflect(m, 0);
}

VmPair single_path(const EdgeParams& prm, uint8_t hops = 2) {
  const std::array<uint8_t, 1> h{hops};
  VmPair p(prm, 9, kT, h, nullptr, 1);
  p.set_assigned_token(2);
  return p;
}
// Idle links: Eqn 3 gives C*T = 28500; r = 2/16 * C = 1.484375e8.
const std::vector<Hop> kIdleHops{{8, 40000, 0, 0}, {16, 40000, 0, 0}};
// Join the single path at t = 0 and take the registering probe it sends.
bool join_and_probe(VmPair& p, wire::Message& m, int& path) {
  p.poll(0, true);
  return p.next_message(0, true, m, path);
}
}  // namespace

TEST(VmPair, JoinSendsABootstrapProbeThatRegistersTheWindow) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  EXPECT_EQ(p.state(), VmPair::State::selecting);
  p.poll(0, true);  // one candidate path: join at once (Scenario 1)
  ASSERT_EQ(p.state(), VmPair::State::active);
  EXPECT_DOUBLE_EQ(p.window(0), 6000.0);  // phi * B_u * T = 2 * 1.25e8 * 24e-6

  wire::Message m;
  int path = -1;
  ASSERT_TRUE(p.next_message(0, true, m, path));
  EXPECT_EQ(path, 0);
  EXPECT_EQ(m.type, wire::MsgType::probe);
  EXPECT_EQ(m.flags, wire::kMsgNewPair);
  EXPECT_EQ(m.n_hop, 2);
  EXPECT_EQ(m.phi, 128u);      // 2 tokens * 64
  EXPECT_EQ(m.pair_id, 9u);
  EXPECT_EQ(m.hop[0].w, 94u);  // ceil(6000 / 64)
  EXPECT_EQ(m.hop[1].w, 94u);
  // One probe outstanding: nothing more is due.
  EXPECT_FALSE(p.next_message(1, true, m, path));
}

TEST(VmPair, ResponseAppliesEqn3AtTheBottleneck) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  // hop0: Phi 8, W 40000, tx 7.6 Gb/s (9.5e8 B/s), q 4992 -> load 22800 + 4992 = 27792
  //   w0 = 2/8 * 40000 * 28500/27792 = 10254.749...
  // hop1: Phi 16, same -> w1 = 5127.374...  (the bottleneck)
  const auto res = p.on_message(respond(m, {{8, 40000, 7.6e9, 4992}, {16, 40000, 7.6e9, 4992}}), 20 * kUs);
  ASSERT_TRUE(res.accepted);
  const double w1 = 2.0 / 16 * 40000 * 28500 / 27792;
  EXPECT_NEAR(p.eqn3_window(), w1, 1e-6);
  // Bootstrap 6000 >= w: the ramp ends at once and Eqn 3 is used.
  EXPECT_EQ(p.admission().stage(), Admission::Stage::steady);
  EXPECT_NEAR(p.window(20 * kUs), w1, 1e-6);
  EXPECT_DOUBLE_EQ(p.token_share_Bps(), 1.1875e9 / 8);  // r = min(2/8, 2/16) * C
  EXPECT_EQ(p.counters().responses, 1u);
}

TEST(VmPair, TwoStageRampAddsTheTokenShareEachRtt) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  const std::vector<Hop>& idle = kIdleHops;  // r*T = 1.484375e8 * 24 us = 3562.5
  ASSERT_TRUE(join_and_probe(p, m, path));
  p.on_message(respond(m, idle), 20 * kUs);
  EXPECT_DOUBLE_EQ(p.window(20 * kUs), 6000.0);  // less than one RTT: no step yet
  p.on_data_sent(6000, 21 * kUs);                 // window full -> a probe is due at once
  ASSERT_TRUE(p.next_message(21 * kUs, true, m, path));
  EXPECT_EQ(m.bytes_sent, 6000u);
  auto res = p.on_message(respond(m, idle), 40 * kUs);
  EXPECT_EQ(res.acked_bytes, 6000u);  // data before the probe has left the network
  EXPECT_DOUBLE_EQ(p.window(40 * kUs), 6000 + 3562.5);
  p.on_data_sent(9563, 41 * kUs);
  ASSERT_TRUE(p.next_message(41 * kUs, true, m, path));
  p.on_message(respond(m, idle), 60 * kUs);
  EXPECT_DOUBLE_EQ(p.window(60 * kUs), 6000 + 2 * 3562.5);
  EXPECT_EQ(p.admission().stage(), Admission::Stage::ramp);
  // The probe registers what the pair uses: min(w^l, w) = 13125 -> 206 units.
  p.on_data_sent(13125, 61 * kUs);
  ASSERT_TRUE(p.next_message(61 * kUs, true, m, path));
  EXPECT_EQ(m.hop[0].w, 206u);
  EXPECT_EQ(m.flags, 0);  // counted now: no longer a new pair
}

TEST(VmPair, AResponseAcksNoMoreThanWasSent) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  p.on_message(respond(m, kIdleHops), 20 * kUs);
  p.on_data_sent(6000, 21 * kUs);  // window full: a probe is due, echoing 6000
  ASSERT_TRUE(p.next_message(21 * kUs, true, m, path));
  ASSERT_EQ(m.bytes_sent, 6000u);
  wire::Message r = respond(m, kIdleHops);
  r.bytes_sent = 1'000'000'000;  // a corrupted echo with the right seq
  const auto res = p.on_message(r, 40 * kUs);
  ASSERT_TRUE(res.accepted);
  EXPECT_EQ(res.acked_bytes, 6000u);  // what was sent, not the echo
  EXPECT_EQ(p.bytes_acked(), 6000u);
  EXPECT_EQ(p.inflight(), 0u);
  p.on_data_sent(1000, 41 * kUs);
  EXPECT_EQ(p.inflight(), 1000u);  // not wrapped below zero
}

TEST(VmPair, ReceiverAdmittedTokenBoundsTheToken) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  p.on_message(respond(m, {{8, 0, 0, 0}, {8, 0, 0, 0}}, wire::tokens_to_wire(1.5)), 20 * kUs);
  EXPECT_DOUBLE_EQ(p.admitted_token(), 1.5);
  EXPECT_DOUBLE_EQ(p.token(), 1.5);  // min(assigned 2, admitted 1.5), design-notes §4.6
  p.on_data_sent(4096, 21 * kUs);
  ASSERT_TRUE(p.next_message(21 * kUs, true, m, path));
  EXPECT_EQ(m.phi, 96u);  // 1.5 * 64
}

TEST(VmPair, StaleAndForeignMessagesAreIgnored) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  wire::Message other = respond(m, {{8, 0, 0, 0}, {8, 0, 0, 0}});
  other.pair_id = 10;
  EXPECT_FALSE(p.on_message(other, 5 * kUs).accepted);
  wire::Message wrong = respond(m, {{8, 0, 0, 0}, {8, 0, 0, 0}});
  wrong.seq += 16;  // a probe never sent
  EXPECT_FALSE(p.on_message(wrong, 5 * kUs).accepted);
  EXPECT_EQ(p.counters().stale, 2u);
  EXPECT_TRUE(p.on_message(respond(m, {{8, 0, 0, 0}, {8, 0, 0, 0}}), 6 * kUs).accepted);
  EXPECT_FALSE(p.on_message(respond(m, {{8, 0, 0, 0}, {8, 0, 0, 0}}), 7 * kUs).accepted);  // duplicate
}

TEST(VmPair, ProbeLostAfterEightBaseRtts) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  p.poll(8 * kT - 1, true);
  EXPECT_EQ(p.counters().probe_losses, 0u);
  p.poll(8 * kT, true);
  EXPECT_EQ(p.counters().probe_losses, 1u);
  ASSERT_TRUE(p.next_message(8 * kT, true, m, path));  // probes again at once
}

TEST(VmPair, IdlePairFinishesWithPerHopAcksAndRetries) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  p.on_data_sent(3000, 1 * kUs);
  p.on_message(respond(m, {{8, 0, 0, 0}, {8, 0, 0, 0}}), 20 * kUs);
  // The tail probe acknowledges the last 3000 bytes.
  ASSERT_TRUE(p.next_message(21 * kUs, false, m, path));
  p.on_message(respond(m, {{8, 0, 0, 0}, {8, 0, 0, 0}}), 40 * kUs);
  EXPECT_EQ(p.inflight(), 0u);
  // Idle for idle_finish_ns (10 ms) after the last data: finish.
  const Nanos t_idle = 1 * kUs + prm.idle_finish_ns;
  p.poll(t_idle - 1, false);
  EXPECT_EQ(p.state(), VmPair::State::active);
  p.poll(t_idle, false);
  EXPECT_EQ(p.state(), VmPair::State::idle);
  ASSERT_TRUE(p.next_message(t_idle, false, m, path));
  EXPECT_EQ(m.type, wire::MsgType::finish);
  EXPECT_EQ(m.flags, 0);
  // Only hop 0 acks; the retry goes after 8 base RTTs, marked as a retry.
  EXPECT_FALSE(p.on_message(finish_ack(m, 0b01), t_idle + 20 * kUs).accepted);
  EXPECT_FALSE(p.next_message(t_idle + 8 * kT - 1, false, m, path));
  ASSERT_TRUE(p.next_message(t_idle + 8 * kT, false, m, path));
  EXPECT_EQ(m.type, wire::MsgType::finish);
  EXPECT_EQ(m.flags, wire::kMsgRetry);
  EXPECT_TRUE(p.on_message(finish_ack(m, 0b10), t_idle + 8 * kT + 20 * kUs).accepted);  // 01 | 10: all hops
  EXPECT_EQ(p.counters().finish_acked, 1u);
  // New data: the pair rejoins its qualified path (Scenario 1 again).
  p.poll(t_idle + 1 * kMs, true);
  EXPECT_EQ(p.state(), VmPair::State::active);
  EXPECT_DOUBLE_EQ(p.window(t_idle + 1 * kMs), 6000.0);
}

namespace {
// Two candidate paths of two hops each; the host gate lets one migration
// through per freeze window.
struct TwoPaths {
  EdgeParams prm;
  HostMigrationGate gate{10, 5};
  VmPair p;
  explicit TwoPaths(const EdgeParams& e = EdgeParams{}) : prm(e), p(prm, 3, kT, std::array<uint8_t, 2>{2, 2}, &gate, 11) {
    p.set_assigned_token(2);
  }
  // Query both candidates at t = 0, answer with the given Phi on each path's
  // two hops at 20 us, and let the pair choose at 21 us.
  void join(double phi_path0, double phi_path1) {
    p.poll(0, true);
    wire::Message q0, q1;
    int path;
    p.next_message(0, true, q0, path);
    p.next_message(0, true, q1, path);
    p.on_message(respond(q0, {{phi_path0, 0, 0, 0}, {phi_path0, 0, 0, 0}}), 20 * kUs);
    p.on_message(respond(q1, {{phi_path1, 0, 0, 0}, {phi_path1, 0, 0, 0}}), 20 * kUs);
    p.poll(21 * kUs, true);
  }
};
}  // namespace

TEST(VmPair, SelectsAQualifiedPathFromParallelQueries) {
  TwoPaths t;
  t.p.poll(0, true);
  EXPECT_EQ(t.p.state(), VmPair::State::selecting);
  wire::Message q0, q1;
  int path0 = -1, path1 = -1;
  ASSERT_TRUE(t.p.next_message(0, true, q0, path0));
  ASSERT_TRUE(t.p.next_message(0, true, q1, path1));
  EXPECT_EQ(path0, 0);
  EXPECT_EQ(path1, 1);
  // Queries stamp but do not register: flag set, no window carried.
  EXPECT_EQ(q0.flags, wire::kMsgQuery);
  EXPECT_EQ(q0.hop[0].w, 0u);
  // Path 0: (8 + 2) tokens * 1 Gb/s > 9.5 Gb/s -> not qualified. Path 1: (2 + 2) -> qualified.
  t.p.on_message(respond(q0, {{8, 0, 0, 0}, {1, 0, 0, 0}}), 20 * kUs);
  t.p.poll(21 * kUs, true);
  EXPECT_EQ(t.p.state(), VmPair::State::selecting);  // still waiting for path 1
  t.p.on_message(respond(q1, {{2, 0, 0, 0}, {2, 0, 0, 0}}), 22 * kUs);
  t.p.poll(23 * kUs, true);
  ASSERT_EQ(t.p.state(), VmPair::State::active);
  EXPECT_EQ(t.p.active_path(), 1);
}

TEST(VmPair, FailureNoticeMigratesThroughTheHostGateAndFinishesTheOldPath) {
  EdgeParams prm;
  prm.reorder_avoidance = true;
  TwoPaths t(prm);
  t.join(9, 1);
  wire::Message q0, m;
  int path;
  ASSERT_EQ(t.p.active_path(), 1);
  ASSERT_TRUE(t.p.next_message(21 * kUs, true, m, path));  // the probe on path 1
  EXPECT_EQ(path, 1);

  // A switch on path 1 reports the link down (the failure notice comes back as the probe).
  wire::Message fail = m;
  fail.type = wire::MsgType::failure;
  EXPECT_TRUE(t.p.on_message(fail, 30 * kUs).accepted);
  EXPECT_EQ(t.p.counters().failures, 1u);
  // Candidates are queried again (all but the active path); path 0 is now light.
  ASSERT_TRUE(t.p.next_message(31 * kUs, true, q0, path));
  EXPECT_EQ(path, 0);
  EXPECT_EQ(q0.flags, wire::kMsgQuery);
  t.p.on_message(respond(q0, {{2, 0, 0, 0}, {2, 0, 0, 0}}), 50 * kUs);
  t.p.poll(51 * kUs, true);
  ASSERT_EQ(t.p.active_path(), 0);
  EXPECT_EQ(t.p.counters().migrations_violation, 1u);
  EXPECT_EQ(t.gate.granted(), 1u);
  // Reorder avoidance: probe-only for the first base RTT on the new path.
  EXPECT_EQ(t.p.window(51 * kUs + kT - 1), 0.0);
  EXPECT_DOUBLE_EQ(t.p.window(51 * kUs + kT), 6000.0);
  // The old path is finished first.
  ASSERT_TRUE(t.p.next_message(52 * kUs, true, m, path));
  EXPECT_EQ(m.type, wire::MsgType::finish);
  EXPECT_EQ(path, 1);
}

TEST(VmPair, UnqualifiedPathForFiveRttsTriggersMigration) {
  TwoPaths t;
  t.join(1, 9);
  wire::Message m;
  int path;
  ASSERT_EQ(t.p.active_path(), 0);
  const Nanos join = 21 * kUs;
  // Path 0 now reports Phi = 12 tokens: 12 * 1 Gb/s > 9.5 Gb/s, unqualified.
  ASSERT_TRUE(t.p.next_message(join, true, m, path));
  t.p.on_message(respond(m, {{12, 0, 0, 0}, {12, 0, 0, 0}}), join + 20 * kUs);
  // RTT ticks at join + k*T; the 5th violating one starts the candidate queries.
  for (int k = 1; k <= 4; ++k) {
    t.p.poll(join + k * kT, true);
    EXPECT_FALSE(t.p.next_message(join + k * kT, false, m, path) && m.flags == wire::kMsgQuery) << k;
  }
  t.p.poll(join + 5 * kT, true);
  ASSERT_TRUE(t.p.next_message(join + 5 * kT, true, m, path));
  EXPECT_EQ(m.flags, wire::kMsgQuery);
  EXPECT_EQ(path, 1);
}

TEST(VmPair, BetterPathHeldForTheHoldTimeTriggersMigration) {
  // Trigger (ii) (§3.5): a qualified candidate with a larger R (Eqn 2 with
  // R_l = W_l / T) for better_path_hold_ns. Hold shortened to 2 ms here.
  EdgeParams prm;
  prm.better_path_hold_ns = 2 * kMs;
  prm.candidate_refresh_rtts = 10;
  TwoPaths t(prm);
  t.join(1, 9);
  ASSERT_EQ(t.p.active_path(), 0);
  // Path 0 busy: Phi 8, tx 9.5e8 B/s -> R0 = 2/8 * (40000/24us) * 1.25 = 5.2e8 B/s.
  // Path 1 nearly idle: Phi 2 (+2 for us), tx 1e8 B/s -> R1 capped at C = 1.1875e9 B/s.
  const std::vector<Hop> busy{{8, 40000, 7.6e9, 0}, {8, 40000, 7.6e9, 0}};
  const std::vector<Hop> idle{{2, 40000, 0.8e9, 0}, {2, 40000, 0.8e9, 0}};
  Nanos first_better = 0, moved = 0;
  for (Nanos now = 22 * kUs; now < 5 * kMs && !moved; now += kT) {
    t.p.on_data_sent(4096, now);
    wire::Message m;
    int path;
    while (t.p.next_message(now, true, m, path)) {
      if (m.type != wire::MsgType::probe) continue;
      if (path == 1 && !first_better) first_better = now;
      t.p.on_message(respond(m, path == 0 ? busy : idle), now + 20 * kUs);
    }
    t.p.poll(now + 21 * kUs, true);
    if (t.p.active_path() == 1) moved = now + 21 * kUs;
  }
  ASSERT_GT(moved, 0u) << "never moved to the better path";
  EXPECT_GE(moved - first_better, 2 * kMs);
  EXPECT_LE(moved - first_better, 2 * kMs + 12 * kT);  // + one refresh period and a tick
  EXPECT_EQ(t.p.counters().migrations_better, 1u);
  EXPECT_EQ(t.p.counters().migrations_violation, 0u);
  EXPECT_EQ(t.gate.granted(), 0u);  // (ii) is not an emergency: no freeze window
}

TEST(VmPair, DrainedActivePathMigratesWithoutTheHostGate) {
  TwoPaths t;
  t.join(1, 9);  // path 1: (9 + 2) tokens > 9.5 Gb/s, unqualified -> path 0
  ASSERT_EQ(t.p.active_path(), 0);
  t.p.set_path_drained(0, true);
  EXPECT_TRUE(t.p.path_drained(0));
  // The other candidate is queried at once; it is light now.
  wire::Message q1, m;
  int path = -1;
  ASSERT_TRUE(t.p.next_message(30 * kUs, true, q1, path));
  EXPECT_EQ(path, 1);
  EXPECT_EQ(q1.flags, wire::kMsgQuery);
  t.p.on_message(respond(q1, {{2, 0, 0, 0}, {2, 0, 0, 0}}), 50 * kUs);
  t.p.poll(51 * kUs, true);
  ASSERT_EQ(t.p.active_path(), 1);
  // An operator's drain is not a violation: no freeze window is taken.
  EXPECT_EQ(t.p.counters().migrations_better, 1u);
  EXPECT_EQ(t.p.counters().migrations_violation, 0u);
  EXPECT_EQ(t.gate.granted(), 0u);
  // The drained path is finished.
  ASSERT_TRUE(t.p.next_message(52 * kUs, true, m, path));
  EXPECT_EQ(m.type, wire::MsgType::finish);
  EXPECT_EQ(path, 0);
  t.p.set_path_drained(0, false);
  EXPECT_FALSE(t.p.path_drained(0));
}

TEST(VmPair, LeavingAnUnreachablePathAbandonsItsFinish) {
  // The uplink of path 0 lost its link: the edge drains the path and marks
  // it unreachable. The pair moves to path 1 as for a drain, but the finish
  // it starts on path 0 is abandoned, not sent.
  TwoPaths t;
  t.join(1, 9);  // path 1 unqualified -> path 0
  ASSERT_EQ(t.p.active_path(), 0);
  t.p.set_path_drained(0, true);
  t.p.set_path_unreachable(0, true);
  EXPECT_TRUE(t.p.path_unreachable(0));
  EXPECT_FALSE(t.p.path_unreachable(1));
  wire::Message q1, m;
  int path = -1;
  ASSERT_TRUE(t.p.next_message(30 * kUs, true, q1, path));
  ASSERT_EQ(path, 1);
  t.p.on_message(respond(q1, {{2, 0, 0, 0}, {2, 0, 0, 0}}), 50 * kUs);
  t.p.poll(51 * kUs, true);
  ASSERT_EQ(t.p.active_path(), 1);
  EXPECT_EQ(t.p.counters().migrations_better, 1u);
  EXPECT_EQ(t.p.counters().finish_abandoned, 1u);
  EXPECT_FALSE(t.p.finish_pending());
  // Nothing for path 0, now or when its retries would have been due.
  for (const Nanos at : {52 * kUs, 52 * kUs + 8 * kT, 52 * kUs + 800 * kT}) {
    t.p.poll(at, true);
    while (t.p.next_message(at, true, m, path))
      EXPECT_FALSE(path == 0 && m.type == wire::MsgType::finish) << "a finish on unreachable path 0 at " << at;
  }
  EXPECT_EQ(t.p.counters().finish_gave_up, 0u);
  // Back up: a finish on path 0 is sent again, e.g. when the pair leaves
  // path 1 for it.
  t.p.set_path_unreachable(0, false);
  t.p.set_path_drained(0, false);
  EXPECT_FALSE(t.p.path_unreachable(0));
}

TEST(VmPair, AFinishPendingOnAPathThatBecomesUnreachableIsAbandoned) {
  TwoPaths t;
  t.join(1, 9);
  ASSERT_EQ(t.p.active_path(), 0);
  t.p.finish_now(40 * kUs);  // as the edge's stop does
  wire::Message m;
  int path = -1;
  ASSERT_TRUE(t.p.next_message(40 * kUs, true, m, path));
  ASSERT_EQ(m.type, wire::MsgType::finish);
  ASSERT_EQ(path, 0);
  EXPECT_TRUE(t.p.finish_pending());
  t.p.set_path_unreachable(1, true);  // another path: the finish stays
  EXPECT_TRUE(t.p.finish_pending());
  EXPECT_EQ(t.p.counters().finish_abandoned, 0u);
  t.p.set_path_unreachable(0, true);
  EXPECT_FALSE(t.p.finish_pending());
  EXPECT_EQ(t.p.counters().finish_abandoned, 1u);
  EXPECT_FALSE(t.p.next_message(40 * kUs + 8 * kT, true, m, path)) << "a retry on path " << path;
  t.p.set_path_unreachable(0, true);  // again: nothing more to abandon
  EXPECT_EQ(t.p.counters().finish_abandoned, 1u);
  EXPECT_EQ(t.p.counters().finish_gave_up, 0u);
}

TEST(VmPair, LeavingADrainedPathQueriesAgainWhileNoCandidateAnswers) {
  TwoPaths t;
  t.join(1, 9);  // path 1 unqualified -> path 0
  ASSERT_EQ(t.p.active_path(), 0);
  t.p.set_path_drained(0, true);
  wire::Message q, m;
  int path = -1;
  ASSERT_TRUE(t.p.next_message(30 * kUs, true, q, path));
  ASSERT_EQ(path, 1);
  // The query is lost: past its timeout the pair queries path 1 again
  // rather than staying on the drained path.
  const Nanos lost = 30 * kUs + static_cast<Nanos>(t.prm.probe_timeout_rtts + 1) * kT;
  t.p.poll(lost, true);
  EXPECT_EQ(t.p.counters().query_losses, 1u);
  EXPECT_EQ(t.p.active_path(), 0);
  bool again = false;
  wire::Message q2;
  while (t.p.next_message(lost, true, m, path))
    if (path == 1 && m.flags == wire::kMsgQuery) again = true, q2 = m;
  ASSERT_TRUE(again) << "no second query on path 1";
  t.p.on_message(respond(q2, {{2, 0, 0, 0}, {2, 0, 0, 0}}), lost + 20 * kUs);
  t.p.poll(lost + 21 * kUs, true);
  EXPECT_EQ(t.p.active_path(), 1);
  EXPECT_EQ(t.p.counters().migrations_better, 1u);
}

TEST(VmPair, DrainedPathsAreNotQueriedWhileAnotherIs) {
  TwoPaths t;
  t.p.set_path_drained(1, true);
  t.p.poll(0, true);
  wire::Message q, m;
  int path = -1;
  ASSERT_TRUE(t.p.next_message(0, true, q, path));
  EXPECT_EQ(path, 0);
  EXPECT_EQ(q.flags, wire::kMsgQuery);
  EXPECT_FALSE(t.p.next_message(0, true, m, path)) << "drained path 1 was queried (path " << path << ")";
  t.p.on_message(respond(q, {{2, 0, 0, 0}, {2, 0, 0, 0}}), 20 * kUs);
  t.p.poll(21 * kUs, true);
  ASSERT_EQ(t.p.active_path(), 0);
  // The candidate refresh (trigger (ii), every candidate_refresh_rtts)
  // leaves the drained path alone, then queries it once undrained.
  const Nanos refresh = 21 * kUs + static_cast<Nanos>(t.prm.candidate_refresh_rtts) * kT;
  t.p.poll(refresh, true);
  while (t.p.next_message(refresh, true, m, path)) EXPECT_NE(path, 1) << "type " << static_cast<int>(m.type);
  t.p.set_path_drained(1, false);
  t.p.poll(2 * refresh, true);
  bool queried = false;
  while (t.p.next_message(2 * refresh, true, m, path)) queried |= path == 1 && m.flags == wire::kMsgQuery;
  EXPECT_TRUE(queried);
}

TEST(VmPair, EveryPathDrainedIsQueriedAnyway) {
  // Nowhere to go: both are queried, and the pair waits for the answers
  // (its next poll is the queries' timeout, not now).
  TwoPaths t;
  t.p.set_path_drained(0, true);
  t.p.set_path_drained(1, true);
  t.p.poll(0, true);
  wire::Message q0, q1, m;
  int path0 = -1, path1 = -1;
  ASSERT_TRUE(t.p.next_message(0, true, q0, path0));
  ASSERT_TRUE(t.p.next_message(0, true, q1, path1));
  EXPECT_EQ(path0, 0);
  EXPECT_EQ(path1, 1);
  EXPECT_GT(t.p.next_deadline(1 * kUs, true), 1 * kUs);
  EXPECT_EQ(t.p.state(), VmPair::State::selecting);
}

TEST(VmPair, FinishNowFinishesAnActivePairUntilEveryHopAcks) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  p.finish_now(0);  // selecting: nothing registered, nothing to finish
  EXPECT_EQ(p.state(), VmPair::State::selecting);
  EXPECT_FALSE(p.finish_pending());
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  p.finish_now(5 * kUs);
  EXPECT_EQ(p.state(), VmPair::State::idle);
  EXPECT_TRUE(p.finish_pending());
  ASSERT_TRUE(p.next_message(5 * kUs, false, m, path));
  EXPECT_EQ(m.type, wire::MsgType::finish);
  EXPECT_FALSE(p.on_message(finish_ack(m, 0b01), 30 * kUs).accepted);
  EXPECT_TRUE(p.finish_pending());
  ASSERT_TRUE(p.next_message(5 * kUs + 8 * kT, false, m, path));
  EXPECT_TRUE(p.on_message(finish_ack(m, 0b10), 5 * kUs + 9 * kT).accepted);
  EXPECT_FALSE(p.finish_pending());
}

// Data that arrived while the pair was not sending (on_data_arrived) is
// demand until the pair joins, as a queue seen at a poll is: with window
// gating off the edge's frames may all have left before the poll.
TEST(VmPair, DataArrivedJoinsAtTheNextPollWithAnEmptyQueue) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  p.poll(0, false);
  EXPECT_EQ(p.state(), VmPair::State::selecting);
  EXPECT_EQ(p.next_deadline(1 * kUs, false), VmPair::kNever);
  p.on_data_arrived();
  EXPECT_EQ(p.next_deadline(1 * kUs, false), 1 * kUs);  // due at once, queue empty
  p.poll(1 * kUs, false);
  ASSERT_EQ(p.state(), VmPair::State::active);  // one path: Scenario 1 at once
  EXPECT_DOUBLE_EQ(p.window(1 * kUs), 6000.0);  // phi = 2 units of 1 Gb/s over T = 24 us
  wire::Message m;
  int path;
  EXPECT_TRUE(p.next_message(1 * kUs, false, m, path));  // the registering probe
  // Sending: an arrival is not kept (its ticks see the data it sends), so
  // once idle the pair does not rejoin for data that came before.
  p.on_data_arrived();
  p.finish_now(2 * kUs);
  ASSERT_EQ(p.state(), VmPair::State::idle);
  p.poll(3 * kUs, false);
  EXPECT_EQ(p.state(), VmPair::State::idle);
  // Idle: a new arrival wakes it. Its path never answered (not known), so
  // the first poll sends it back to selecting; the demand stays, and the
  // next poll joins the one path.
  p.on_data_arrived();
  EXPECT_EQ(p.next_deadline(4 * kUs, false), 4 * kUs);
  p.poll(4 * kUs, false);
  EXPECT_EQ(p.state(), VmPair::State::selecting);
  EXPECT_EQ(p.next_deadline(5 * kUs, false), 5 * kUs);
  p.poll(5 * kUs, false);
  EXPECT_EQ(p.state(), VmPair::State::active);
}

// With candidates to query the arrival stays demand over the polls that
// wait for the answers (cleared only by the join), and finish_now (the
// edge's stop) forgets it.
TEST(VmPair, DataArrivedLastsUntilTheJoinAndFinishNowForgetsIt) {
  const EdgeParams prm;
  HostMigrationGate gate{10, 5};
  VmPair p(prm, 3, kT, std::array<uint8_t, 2>{2, 2}, &gate, 11);
  p.set_assigned_token(2);
  p.on_data_arrived();
  p.poll(0, false);
  wire::Message q0, q1;
  int path0 = -1, path1 = -1;
  ASSERT_TRUE(p.next_message(0, false, q0, path0));
  ASSERT_TRUE(p.next_message(0, false, q1, path1));
  EXPECT_EQ(q0.flags, wire::kMsgQuery);
  p.on_message(respond(q0, {{2, 0, 0, 0}, {2, 0, 0, 0}}), 20 * kUs);
  p.on_message(respond(q1, {{8, 0, 0, 0}, {8, 0, 0, 0}}), 20 * kUs);
  EXPECT_EQ(p.next_deadline(21 * kUs, false), 21 * kUs);
  p.poll(21 * kUs, false);
  ASSERT_EQ(p.state(), VmPair::State::active);
  EXPECT_EQ(p.active_path(), 0);  // (2 + 2) tokens qualify, (8 + 2) do not

  VmPair q = single_path(prm);
  q.on_data_arrived();
  q.finish_now(0);
  EXPECT_EQ(q.next_deadline(1 * kUs, false), VmPair::kNever);
  q.poll(1 * kUs, false);
  EXPECT_EQ(q.state(), VmPair::State::selecting);
}

// Every acknowledged byte reaches the owner exactly once, also when poll()
// moved the mark: the edge's scheduler keeps its own in-flight count from
// these reports, and a byte acked only inside poll() left it blocked forever
// with the pair's in-flight at 0 (found by the emulated fabric, issue 5).
TEST(VmPair, AcksMovedByPollAreReportedToTheOwner) {
  EdgeParams prm;
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  uint64_t reported = p.on_message(respond(m, {{2, 8000, 0, 0}, {2, 8000, 0, 0}}), 20 * kUs).acked_bytes;
  ASSERT_EQ(p.state(), VmPair::State::active);
  for (Nanos t : {30 * kUs, 31 * kUs, 32 * kUs}) p.on_data_sent(1000, t);
  EXPECT_EQ(p.inflight(), 3000u);
  // One RTT estimate (max(sample 20 us, T + 0 queue) = 24 us) later all 3000
  // bytes are known delivered; poll() moves the mark ...
  p.poll(200 * kUs, false);
  EXPECT_EQ(p.inflight(), 0u);
  // ... and the owner still learns the 3000 bytes, once.
  reported += p.advance_acks(201 * kUs);
  EXPECT_EQ(reported, 3000u);
  EXPECT_EQ(p.advance_acks(202 * kUs), 0u);
  EXPECT_EQ(p.bytes_acked(), 3000u);
}

// The probe rule with and without probe_on_window_full. Eqn 3 at Phi 32:
// w = 2/32 * 40000 * 28500/27792 = 2563.7 B < L_w = 4096 B. 3000 B sent since
// the response fill the window: with the rule a probe goes at once; without
// it (§4.1 alone) only after L_w = 4096 B since the response.
TEST(VmPair, ProbeOnWindowFullIsOptional) {
  for (const bool on_full : {true, false}) {
    EdgeParams prm;
    prm.probe_on_window_full = on_full;
    VmPair p = single_path(prm);
    wire::Message m;
    int path;
    ASSERT_TRUE(join_and_probe(p, m, path));
    p.on_message(respond(m, {{32, 40000, 7.6e9, 4992}, {32, 40000, 7.6e9, 4992}}), 20 * kUs);
    ASSERT_NEAR(p.window(21 * kUs), 2.0 / 32 * 40000 * 28500 / 27792, 1e-6);
    for (Nanos t : {21 * kUs, 22 * kUs, 23 * kUs}) p.on_data_sent(1000, t);
    EXPECT_EQ(p.next_message(23 * kUs, true, m, path), on_full) << "on_full=" << on_full;
    if (on_full) continue;
    p.on_data_sent(1095, 24 * kUs);  // 4095 B since the response: not yet
    EXPECT_FALSE(p.next_message(24 * kUs, true, m, path));
    p.on_data_sent(1, 25 * kUs);     // 4096 B: the §4.1 probe
    ASSERT_TRUE(p.next_message(25 * kUs, true, m, path));
    EXPECT_EQ(m.type, wire::MsgType::probe);
    EXPECT_EQ(m.bytes_sent, 4096u);
  }
}

// The active path's pacer learns of the data bytes lazily (VmPair::sync_pacer):
// only bytes sent after the last response count towards L_w = 4096, those
// sent while the probe was out do not, and next_deadline (const, with no
// call between the frames and it) sees the bytes the pacer was not told of.
TEST(VmPair, LwCountsTheBytesSentAfterTheResponse) {
  EdgeParams prm;
  prm.probe_on_window_full = false;  // L_w alone
  VmPair p = single_path(prm);
  wire::Message m;
  int path;
  ASSERT_TRUE(join_and_probe(p, m, path));
  EXPECT_FALSE(p.may_send_message());  // the bootstrap probe is out
  p.on_data_sent(3000, 1 * kUs);       // while it is out: not counted after its response
  ASSERT_TRUE(p.on_message(respond(m, {{32, 40000, 7.6e9, 4992}, {32, 40000, 7.6e9, 4992}}), 20 * kUs).accepted);
  // With the L_w rule alone may_send_message counts the bytes on the pair's
  // first line (probe_gap_): 0 and 4095 B since the response are not L_w.
  EXPECT_FALSE(p.may_send_message());
  p.on_data_sent(4095, 21 * kUs);      // 4095 B since the response
  EXPECT_FALSE(p.may_send_message());
  // Due next: the per-RTT tick at T = 24 us (the ack mark comes later: the
  // oldest sample, 1 us, plus at least T).
  EXPECT_EQ(p.next_deadline(21 * kUs, true), kT);
  EXPECT_FALSE(p.next_message(21 * kUs, true, m, path));
  p.on_data_sent(1, 22 * kUs);  // 4096 B: the §4.1 probe is due now
  EXPECT_TRUE(p.may_send_message());
  EXPECT_EQ(p.next_deadline(22 * kUs, true), 22 * kUs);
  ASSERT_TRUE(p.next_message(22 * kUs, true, m, path));
  EXPECT_EQ(m.type, wire::MsgType::probe);
  EXPECT_EQ(m.bytes_sent, 3000u + 4095u + 1u);
  EXPECT_FALSE(p.may_send_message());
}
