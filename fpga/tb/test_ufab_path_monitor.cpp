// ufab_path_monitor (fpga/rtl/ufab_path_monitor.v) against the golden
// ufab::ProbePacer (probe/probe_pacer.hpp) with timeout_rtts = 8 (§4.1 "we
// detect probe loss by timeout beyond 8 baseRTTs"). Time is the RTL's cycle
// counter; each pair has its own base RTT in cycles. Checked: every response
// verdict (accepted / stale) equals the model's; every reported loss is one
// the model reports (check_timeout true at the detection time), exactly once,
// at most 2*PAIRS + 2 cycles after the deadline; consecutive violations or
// losses reaching VIOL_LIMIT = 3 request a migration.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "Vufab_path_monitor.h"
#include "fpga/tb/vtb.hpp"
#include "probe/probe_pacer.hpp"

namespace {

constexpr uint32_t kPairs = 64;
constexpr uint32_t kViolLimit = 3;

struct Harness {
  ufab::fpga::Clocked<Vufab_path_monitor> d;
  std::vector<ufab::ProbePacer> gold;
  std::vector<uint32_t> rtt;
  std::vector<uint32_t> viol;  // model of the consecutive-violation counter
  uint64_t losses = 0, migrations = 0, expected_migrations = 0;
  bool strict_latency = true;  // the sweep bound holds while the op port is idle

  Harness() : gold(kPairs, ufab::ProbePacer(4096, 8)), rtt(kPairs, 0), viol(kPairs, 0) {
    d.reset();
    while (!d->op_ready) step();
  }
  void bump(uint32_t p) {
    if (++viol[p] >= kViolLimit) {
      viol[p] = 0;
      ++expected_migrations;
    }
  }
  // One cycle; checks the loss/migration events it produced.
  void step() {
    d.tick();
    if (d->loss_valid) {
      const uint32_t p = d->loss_pair;
      const int64_t t = d->loss_time;
      ++losses;
      EXPECT_TRUE(gold[p].outstanding() || gold[p].losses() > 0) << "pair " << p;
      if (gold[p].outstanding()) {
        EXPECT_GE(t, gold[p].deadline()) << "pair " << p << " reported before its deadline";
        if (strict_latency) {
          EXPECT_LE(t, gold[p].deadline() + 2 * kPairs + 2) << "pair " << p << " reported late";
        }
        EXPECT_TRUE(gold[p].check_timeout(t));
        bump(p);
      }
    }
    if (d->mig_valid) ++migrations;
  }
  void op(uint8_t code, uint32_t pair, uint32_t rtt_cycles = 0, bool violation = false) {
    d->eval();
    while (!d->op_ready) step();
    d->op_valid = 1;
    d->op_code = code;
    d->op_pair = static_cast<uint8_t>(pair);
    d->op_rtt = rtt_cycles;
    d->op_viol = violation;
    const int64_t t = d->now;  // the time the operation is accepted at
    step();
    d->op_valid = 0;
    if (code == 1) {
      rtt[pair] = rtt_cycles;
      gold[pair] = ufab::ProbePacer(4096, 8);
      viol[pair] = 0;
    } else if (code == 2) {
      gold[pair].on_probe_sent(t, rtt[pair]);
    }
    step();  // the modify-write stage
    if (code == 3) {
      EXPECT_TRUE(d->rsp_valid);
      const bool was_out = gold[pair].outstanding();
      const auto v = gold[pair].on_response(gold[pair].outstanding_seq(), t);
      const bool acc = v.kind == ufab::ResponseKind::accepted;
      EXPECT_EQ(static_cast<bool>(d->rsp_accepted), acc) << "pair " << pair << " at " << t;
      if (acc) {
        if (violation) bump(pair); else viol[pair] = 0;
      } else if (was_out) {
        EXPECT_TRUE(gold[pair].check_timeout(t));  // lost: reported by the response itself
        bump(pair);
      }
    }
  }
};

TEST(UfabPathMonitor, TimeoutAtEightBaseRtts) {
  Harness h;
  h.op(1, 5, 100);  // base RTT 100 cycles
  const uint32_t sent = h.d->now;
  h.op(2, 5);
  // no response: the loss is detected at or after sent + 800, and by sent + 800 + 2*PAIRS + 2
  uint32_t seen = 0;
  while (h.d->now < sent + 800 + 2 * kPairs + 8) {
    h.step();
    if (h.d->loss_valid) {
      seen = h.d->loss_time;
      EXPECT_EQ(h.d->loss_pair, 5u);
    }
  }
  EXPECT_GE(seen, sent + 800);
  EXPECT_EQ(h.d->cnt_losses, 1u);
  // a response just before the deadline is accepted
  h.op(2, 5);
  const uint32_t sent2 = h.d->now - 2;
  while (h.d->now < sent2 + 790) h.d.tick();
  h.op(3, 5);
  EXPECT_TRUE(h.d->rsp_accepted);
  EXPECT_EQ(h.d->cnt_losses, 1u);
}

TEST(UfabPathMonitor, ConsecutiveViolationsRequestMigration) {
  Harness h;
  h.op(1, 9, 1000);
  for (int i = 0; i < 2; ++i) {
    h.op(2, 9);
    h.op(3, 9, 0, true);
  }
  EXPECT_EQ(h.d->cnt_migrations, 0u);
  h.op(2, 9);
  h.op(3, 9, 0, false);  // a good response clears the count
  for (int i = 0; i < 3; ++i) {
    h.op(2, 9);
    h.op(3, 9, 0, true);
  }
  EXPECT_EQ(h.d->cnt_migrations, 1u);
}

TEST(UfabPathMonitor, RandomEventsMatchProbePacer) {
  std::mt19937 rng(11);
  Harness h;
  h.strict_latency = false;  // operations pause the sweep
  for (uint32_t p = 0; p < kPairs; ++p) h.op(1, p, 20 + rng() % 200);
  for (int i = 0; i < 20000; ++i) {
    const uint32_t p = rng() % kPairs;
    const uint32_t r = rng() % 100;
    if (r < 30) {
      if (!h.gold[p].outstanding()) h.op(2, p);
    } else if (r < 55) {
      h.op(3, p, 0, rng() % 4 == 0);
    } else {
      for (uint32_t k = rng() % 40; k > 0; --k) h.step();
    }
    if (::testing::Test::HasFailure()) return;
  }
  for (int i = 0; i < 4000; ++i) h.step();  // drain: every pending loss is reported
  uint64_t gold_losses = 0;
  for (uint32_t p = 0; p < kPairs; ++p) {
    EXPECT_FALSE(h.gold[p].outstanding() && h.d->now >= h.gold[p].deadline() + 2 * kPairs + 2) << p;
    gold_losses += h.gold[p].losses();
  }
  EXPECT_EQ(h.d->cnt_losses, gold_losses);
  EXPECT_GT(gold_losses, 100u);
  EXPECT_EQ(h.d->cnt_migrations, h.expected_migrations);
  EXPECT_EQ(h.migrations, h.expected_migrations);
}

}  // namespace
