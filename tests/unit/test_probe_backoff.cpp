// The doubling probe-loss timeout (probe/probe_pacer.hpp, docs/design.md
// §14): the first loss at 8 base RTTs exactly as §4.1, then 16, 32, ... up to
// probe_timeout_max_rtts after consecutive losses on a path; an accepted
// response resets it, a stale one does not; a rejoin keeps the streak.
// Hand-computed deadlines; and a pair polled only at VmPair::next_deadline
// behaves as one polled every tick when nothing ever answers.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "control/vm_pair.hpp"
#include "probe/probe_pacer.hpp"
#include "tests/unit/deadline_twin.hpp"
#include "tests/unit/uniform_response.hpp"

using namespace ufab;

namespace {

constexpr uint64_t kLw = 4096;
constexpr Nanos kRtt = 10 * kUs;

// Sends a probe at t, loses it: returns its loss deadline (checked exact).
Nanos send_and_lose(ProbePacer& p, Nanos t) {
  EXPECT_TRUE(p.probe_due(false));
  p.on_probe_sent(t, kRtt);
  const Nanos d = p.deadline();
  EXPECT_FALSE(p.check_timeout(d - 1));
  EXPECT_TRUE(p.check_timeout(d));
  return d;
}

TEST(ProbeBackoff, TimeoutDoublesPerConsecutiveLossUpToTheCap) {
  ProbePacer p(kLw, 8, 0, 64);  // 8 base RTTs, at most 64
  EXPECT_EQ(p.timeout_rtts_now(), 8u);
  // Lost at 80 us (8 T, §4.1), then each re-probe at once with twice the
  // timeout: 80 + 160 = 240, 240 + 320 = 560, 560 + 640 = 1200, then capped
  // at 64 T = 640 us: 1840, 2480.
  const std::array<Nanos, 6> lost_at{80 * kUs, 240 * kUs, 560 * kUs, 1200 * kUs, 1840 * kUs, 2480 * kUs};
  const std::array<uint32_t, 6> next_rtts{16, 32, 64, 64, 64, 64};
  Nanos t = 0;
  for (size_t i = 0; i < lost_at.size(); ++i) {
    t = send_and_lose(p, t);
    EXPECT_EQ(t, lost_at[i]) << "loss " << i;
    EXPECT_EQ(p.loss_streak(), i + 1);
    EXPECT_EQ(p.timeout_rtts_now(), next_rtts[i]);
  }
  EXPECT_EQ(p.losses(), 6u);
  // The path answers: the probe sent at 2480 us (deadline 3120) is accepted
  // at 2500 us; the next probe is lost after 8 T again.
  const uint32_t s = p.on_probe_sent(t, kRtt);
  EXPECT_EQ(p.deadline(), 3120 * kUs);
  ASSERT_EQ(p.on_response(s, 2500 * kUs).kind, ResponseKind::accepted);
  EXPECT_EQ(p.loss_streak(), 0u);
  EXPECT_EQ(p.timeout_rtts_now(), 8u);
  p.on_data_sent(kLw);
  EXPECT_EQ(send_and_lose(p, 2600 * kUs), 2680 * kUs);
}

TEST(ProbeBackoff, WithoutACapAboveTheTimeoutEveryLossIsAtEightRtts) {
  for (const uint32_t cap : {0u, 4u, 8u}) {  // <= timeout_rtts: no doubling (the FPGA's path monitor)
    ProbePacer p(kLw, 8, 0, cap);
    Nanos t = 0;
    for (int i = 1; i <= 5; ++i) {
      t = send_and_lose(p, t);
      EXPECT_EQ(t, static_cast<Nanos>(i) * 80 * kUs) << "cap " << cap;
    }
    EXPECT_EQ(p.timeout_rtts_now(), 8u);
  }
}

TEST(ProbeBackoff, AStaleResponseDoesNotResetTheStreak) {
  ProbePacer p(kLw, 8, 0, 1024);
  const uint32_t s0 = p.on_probe_sent(0, kRtt);
  ASSERT_TRUE(p.check_timeout(80 * kUs));
  // The lost probe's answer, late: the path is slow, not fast enough for 8 T.
  EXPECT_EQ(p.on_response(s0, 90 * kUs).kind, ResponseKind::stale);
  EXPECT_EQ(p.loss_streak(), 1u);
  // The re-probe gets 16 T = 160 us: an answer after 100 us now counts.
  const uint32_t s1 = p.on_probe_sent(90 * kUs, kRtt);
  EXPECT_EQ(p.deadline(), 250 * kUs);
  EXPECT_EQ(p.on_response(s1, 190 * kUs).kind, ResponseKind::accepted);
  EXPECT_EQ(p.last_rtt(), 100 * kUs);
  EXPECT_EQ(p.loss_streak(), 0u);
  // An answer at the deadline itself is a loss, as without backoff.
  p.on_data_sent(kLw);
  const uint32_t s2 = p.on_probe_sent(200 * kUs, kRtt);
  EXPECT_EQ(p.on_response(s2, 280 * kUs).kind, ResponseKind::stale);
  EXPECT_TRUE(p.check_timeout(280 * kUs));
  EXPECT_EQ(p.loss_streak(), 1u);
}

TEST(ProbeBackoff, TheCapBoundsAnyStreakWithoutOverflow) {
  ProbePacer big(kLw, 1000, 0, 1'000'000, 64);  // a carried streak of 64
  EXPECT_EQ(big.timeout_rtts_now(), 1'000'000u);
  ProbePacer huge(kLw, 1, 0, UINT32_MAX, 64);
  EXPECT_EQ(huge.timeout_rtts_now(), UINT32_MAX);
  ProbePacer three(kLw, 8, 0, 1u << 20, 3);  // 8 * 2^3
  EXPECT_EQ(three.timeout_rtts_now(), 64u);
  // The streak saturates at 64 however many losses follow.
  ProbePacer p(kLw, 1, 0, UINT32_MAX);
  for (int i = 0; i < 70; ++i) {
    p.on_probe_sent(0, 1);
    ASSERT_TRUE(p.check_timeout(p.deadline()));
  }
  EXPECT_EQ(p.loss_streak(), 64u);
  EXPECT_EQ(p.timeout_rtts_now(), UINT32_MAX);
}

// ---- VmPair: T = 24 us, defaults (8 T first timeout, cap 1024 T) ----

constexpr Nanos kT = 24 * kUs;

VmPair one_path(const EdgeParams& prm) {
  const std::array<uint8_t, 1> h{2};
  VmPair p(prm, 9, kT, h, nullptr, 1);
  p.set_assigned_token(2);
  return p;
}

// Polls p every 4 us from `from` up to `to` (backlogged, nothing answers),
// sending each message due; returns the times of the probe losses.
std::vector<Nanos> run_unanswered(VmPair& p, Nanos from, Nanos to) {
  std::vector<Nanos> lost;
  wire::Message m;
  int path;
  for (Nanos t = from; t <= to; t += 4 * kUs) {
    const uint64_t before = p.counters().probe_losses;
    p.poll(t, true);
    if (p.counters().probe_losses != before) lost.push_back(t);
    while (p.next_message(t, true, m, path)) {
    }
  }
  return lost;
}

TEST(ProbeBackoff, APairNobodyAnswersProbesAtDoublingIntervals) {
  EdgeParams prm;
  VmPair p = one_path(prm);
  // Join and the registering probe at 0; losses at 8 T, then 8 + 16 = 24 T,
  // 56, 120, 248, 504, 1016, 2040 T (timeouts 8 T * 2^k up to 1024 T), then
  // every 1024 T: 3064, 4088 T. Each loss sends the next probe at once.
  const std::vector<Nanos> lost = run_unanswered(p, 0, 4100 * kT);
  const std::vector<Nanos> expect{8 * kT, 24 * kT, 56 * kT, 120 * kT, 248 * kT, 504 * kT, 1016 * kT, 2040 * kT,
                                  3064 * kT, 4088 * kT};
  EXPECT_EQ(lost, expect);
  EXPECT_EQ(p.counters().probes, 11u);  // vs 4100 / 8 + 1 = 513 at a fixed 8 T
  EXPECT_EQ(p.state(), VmPair::State::active);

  // The same with probe_timeout_max_rtts = probe_timeout_rtts: every 8 T, as §4.1 alone.
  EdgeParams fixed;
  fixed.probe_timeout_max_rtts = fixed.probe_timeout_rtts;
  VmPair q = one_path(fixed);
  const std::vector<Nanos> lost_fixed = run_unanswered(q, 0, 100 * kT);
  ASSERT_EQ(lost_fixed.size(), 12u);
  for (size_t i = 0; i < lost_fixed.size(); ++i) EXPECT_EQ(lost_fixed[i], static_cast<Nanos>(8 * (i + 1)) * kT);
}

TEST(ProbeBackoff, AResponseResetsTheTimeoutToEightRtts) {
  EdgeParams prm;
  VmPair p = one_path(prm);
  // Losses at 8, 24, 56 T; the probe sent at 56 T has 64 T (lost at 120 T).
  wire::Message m, last{};
  int path;
  for (Nanos t = 0; t <= 56 * kT; t += 4 * kUs) {
    p.poll(t, true);
    while (p.next_message(t, true, m, path)) last = m;
  }
  ASSERT_EQ(p.counters().probe_losses, 3u);
  ASSERT_EQ(last.timestamp_ns, 56 * kT);
  // It is answered 20 us later.
  ASSERT_TRUE(p.on_message(test::uniform_response(last), 56 * kT + 20 * kUs).accepted);
  // The next probe, after L_w bytes, is lost 8 T after it left, not 128 T.
  p.on_data_sent(4096, 57 * kT);
  ASSERT_TRUE(p.next_message(57 * kT, true, m, path));
  ASSERT_EQ(m.type, wire::MsgType::probe);
  p.poll(65 * kT - 1, true);
  EXPECT_EQ(p.counters().probe_losses, 3u);
  p.poll(65 * kT, true);
  EXPECT_EQ(p.counters().probe_losses, 4u);
}

TEST(ProbeBackoff, ARejoinKeepsThePathsStreak) {
  EdgeParams prm;
  prm.idle_finish_ns = 100 * kT;  // 2.4 ms
  prm.finish_max_retries = 0;
  VmPair p = one_path(prm);
  // Losses at 8, 24, 56 T (next timeout 64 T), then the queue empties: the
  // pair goes idle at 100 T (no data ever sent, nothing in flight) and
  // finishes; the probe sent at 56 T is still out.
  ASSERT_EQ(run_unanswered(p, 0, 56 * kT).size(), 3u);
  wire::Message m;
  int path;
  p.poll(100 * kT, false);
  ASSERT_EQ(p.state(), VmPair::State::idle);
  while (p.next_message(100 * kT, false, m, path)) {
  }
  // Data again at 110 T: idle -> selecting (the path never answered) -> join.
  p.poll(110 * kT, true);
  p.poll(110 * kT, true);
  ASSERT_EQ(p.state(), VmPair::State::active);
  ASSERT_TRUE(p.next_message(110 * kT, true, m, path));
  ASSERT_EQ(m.type, wire::MsgType::probe);
  EXPECT_EQ(m.flags, wire::kMsgNewPair);
  // Three losses carried over: this probe has 64 T, lost at 174 T.
  const uint64_t before = p.counters().probe_losses;
  p.poll(174 * kT - 1, true);
  EXPECT_EQ(p.counters().probe_losses, before);
  p.poll(174 * kT, true);
  EXPECT_EQ(p.counters().probe_losses, before + 1);
}

// A pair polled only at its deadlines (b) against one polled every 32 us
// tick (a), nothing ever answering, random demand and data, over 1, 2 or 3
// paths (multipath: the candidate queries are lost too and back off the
// same way): the same messages at the same times, the same state.
TEST(ProbeBackoff, PollingOnlyAtDeadlinesChangesNothingWhenNothingAnswers) {
  uint64_t polls_a = 0, polls_b = 0, losses = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    EdgeParams prm;
    prm.probe_timeout_max_rtts = 8u << (seed % 5);  // 8 (no doubling) .. 128 T
    prm.idle_finish_ns = 300 * kUs;
    prm.finish_max_retries = 2;
    prm.candidate_refresh_rtts = 20;
    const std::array<uint8_t, 3> h{2, 3, 2};
    const size_t n_paths = 1 + seed % 3;
    HostMigrationGate ga(4, seed), gb(4, seed);
    VmPair a(prm, 9, kT, std::span<const uint8_t>(h.data(), n_paths), &ga, seed);
    VmPair b(prm, 9, kT, std::span<const uint8_t>(h.data(), n_paths), &gb, seed);
    a.set_assigned_token(2);
    b.set_assigned_token(2);
    Rng rng(seed * 104729);
    bool backlogged = false;
    test::DeadlineTwin tw{a, b};
    const auto sent = [](const wire::Message& ma, const wire::Message& mb) { ASSERT_EQ(ma.flags, mb.flags); };
    Nanos t = 0;
    for (int step = 0; step < 4000; ++step) {
      t += rng.uniform(1, 16) * kUs;
      if (!backlogged && rng.uniform(0, 40) == 0) {
        backlogged = true;
        tw.on_backlog(t);
      }
      if (backlogged && a.window(t) > static_cast<double>(a.inflight())) {
        const auto bytes = static_cast<uint32_t>(rng.uniform(64, 1500));
        a.on_data_sent(bytes, t);
        b.on_data_sent(bytes, t);
        if (rng.uniform(0, 30) == 0) backlogged = false;
        tw.send_all(t, backlogged, seed, sent);  // sched_tx's control_tx
      }
      if (step % 2 == 0) tw.tick(t, backlogged, seed, sent);
      ASSERT_EQ(a.state(), b.state()) << "seed " << seed << " step " << step;
      ASSERT_EQ(a.active_path(), b.active_path());
      ASSERT_EQ(a.bytes_acked(), b.bytes_acked()) << "seed " << seed << " step " << step;
      ASSERT_EQ(a.counters().probe_losses, b.counters().probe_losses) << "seed " << seed << " step " << step;
      ASSERT_EQ(a.counters().query_losses, b.counters().query_losses);
      ASSERT_EQ(a.counters().probes, b.counters().probes);
      ASSERT_EQ(a.counters().finishes, b.counters().finishes);
    }
    losses += a.counters().probe_losses + a.counters().query_losses;
    polls_a += tw.polls_a;
    polls_b += tw.polls_b;
  }
  EXPECT_GT(losses, 0u);
  EXPECT_LT(polls_b, polls_a);
}

}  // namespace
