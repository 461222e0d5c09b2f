// VmPair::may_send_message, the cheap test ufab-edge's sched_tx runs before
// next_message for every pair it served: whenever it is false, next_message
// returns false and changes nothing (the same message follows), over random
// runs with responses, losses, finish acks, migrations (several paths), data
// and polls; and it is false in the common states (selecting without a
// message due, active with its probe outstanding, idle with its finish
// acked: VmPair::want_message_ follows the finish and the queries).
#include <gtest/gtest.h>

#include <array>
#include <deque>

#include "control/vm_pair.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"
#include "tests/unit/uniform_response.hpp"

using namespace ufab;

namespace {
constexpr Nanos kT = 24 * kUs;

// Every hop stamped with Phi = phi tokens, W = 40000 B, idle, 10 Gb/s, queue q.
wire::Message respond(wire::Message m, double phi, double q) { return test::uniform_response(m, kWireUnbound, phi, q); }
}  // namespace

TEST(PairMaySend, FalseInTheCommonStates) {
  EdgeParams prm;
  const std::array<uint8_t, 1> h{2};
  VmPair p(prm, 9, kT, h, nullptr, 1);
  p.set_assigned_token(2);
  EXPECT_FALSE(p.may_send_message());  // selecting, nothing due
  p.poll(0, true);                     // joins its one path
  ASSERT_EQ(p.state(), VmPair::State::active);
  EXPECT_TRUE(p.may_send_message());   // the bootstrap probe
  wire::Message m;
  int path = -1;
  ASSERT_TRUE(p.next_message(0, true, m, path));
  EXPECT_FALSE(p.may_send_message());  // its probe is out
  p.on_data_sent(100000, 1 * kUs);
  EXPECT_FALSE(p.may_send_message());  // still out, however many bytes
  ASSERT_TRUE(p.on_message(respond(m, 8, 0), 20 * kUs).accepted);
  EXPECT_TRUE(p.may_send_message());   // answered: the next probe may be due (L_w bytes)
  // Idle: the finish is due until both hops acked it, then nothing is.
  p.finish_now(30 * kUs);
  ASSERT_EQ(p.state(), VmPair::State::idle);
  EXPECT_TRUE(p.may_send_message());
  ASSERT_TRUE(p.next_message(30 * kUs, false, m, path));
  ASSERT_EQ(m.type, wire::MsgType::finish);
  EXPECT_TRUE(p.may_send_message());  // pending: a retry may be due
  wire::Message ack = wire::reflect(m, kWireUnbound);
  for (size_t i = 0; i < ack.n_hop; ++i) ack.hop[i].flags = static_cast<uint8_t>(wire::kHopStamped | wire::kHopAck);
  ASSERT_TRUE(p.on_message(ack, 50 * kUs).accepted);
  EXPECT_FALSE(p.may_send_message());  // acked at both hops: nothing left
  EXPECT_FALSE(p.next_message(60 * kUs, false, m, path));
}

// With probe_on_window_full on (the default) and off (the L_w rule alone,
// where may_send_message tests the byte count on the pair's first line). Off,
// with one path (no candidate queries), it is also exact the other way: true
// only when next_message sends, or while a finish waits for its retry.
class PairMaySendRandom : public ::testing::TestWithParam<bool> {};

TEST_P(PairMaySendRandom, FalseImpliesNextMessageSendsNothing) {
  const bool probe_on_window_full = GetParam();
  uint64_t skipped = 0, asked = 0, sent = 0, exact = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    EdgeParams prm;
    prm.probe_on_window_full = probe_on_window_full;
    prm.probe_every_bytes = 2048;
    prm.idle_finish_ns = 300 * kUs;
    prm.candidate_refresh_rtts = 20;
    prm.better_path_hold_ns = 200 * kUs;
    const std::array<uint8_t, 3> h{2, 3, 2};
    HostMigrationGate gate(4, seed);
    const size_t n_paths = 1 + seed % 3;
    VmPair p(prm, 9, kT, std::span<const uint8_t>(h.data(), n_paths), &gate, seed);
    p.set_assigned_token(2);
    Rng rng(seed * 31);
    std::deque<std::pair<Nanos, wire::Message>> net;
    bool backlogged = false;
    const auto send_all = [&](Nanos t) {
      for (;;) {
        const bool may = p.may_send_message();
        wire::Message m;
        int path = -1;
        const bool s = p.next_message(t, backlogged, m, path);
        ++asked;
        if (!may) {
          ++skipped;
          ASSERT_FALSE(s) << "seed " << seed << " t " << t;
          return;
        }
        if (!probe_on_window_full && n_paths == 1) {
          ASSERT_TRUE(s || p.finish_pending()) << "seed " << seed << " t " << t;
          ++exact;
        }
        if (!s) return;
        ++sent;
        if (rng.uniform(0, 9) != 0) net.emplace_back(t + rng.uniform(5, 60) * kUs, m);  // 10% lost
      }
    };
    Nanos t = 0;
    for (int step = 0; step < 3000; ++step) {
      t += rng.uniform(1, 16) * kUs;
      while (!net.empty() && net.front().first <= t) {
        wire::Message m = net.front().second;
        net.pop_front();
        if (m.type == wire::MsgType::finish) {
          for (size_t i = 0; i < m.n_hop; ++i)
            m.hop[i].flags = static_cast<uint8_t>(wire::kHopStamped | (rng.uniform(0, 1) ? wire::kHopAck : 0));
          p.on_message(wire::reflect(m, 0), t);
        } else {
          p.on_message(respond(m, static_cast<double>(rng.uniform(2, 40)), static_cast<double>(rng.uniform(0, 20000))),
                       t);
        }
        send_all(t);
      }
      if (!backlogged && rng.uniform(0, 3) == 0) backlogged = true;
      if (backlogged && p.window(t) > static_cast<double>(p.inflight())) {
        p.on_data_sent(static_cast<uint32_t>(rng.uniform(64, 1500)), t);
        if (rng.uniform(0, 2) == 0) backlogged = false;
        send_all(t);
      }
      if (step % 2 == 0) {
        p.poll(t, backlogged);
        p.advance_acks(t);
        send_all(t);
      }
    }
  }
  // Both answers occur, and messages were sent throughout.
  EXPECT_GT(skipped, asked / 10);
  EXPECT_LT(skipped, asked);
  EXPECT_GT(sent, 1000u);
  if (!probe_on_window_full) {
    EXPECT_GT(exact, 1000u);
  }
}

INSTANTIATE_TEST_SUITE_P(ProbeOnWindowFull, PairMaySendRandom, ::testing::Bool());
