// ufab_sched (fpga/rtl/ufab_sched.v) against the golden model
// ufab::HierScheduler (sched/hier_scheduler.hpp): the same operations are
// applied to both and every result must be identical: each operation's
// success, each dequeued packet (tag, length, pair), each pair's window and
// in-flight bytes. Paper §4.1, Figure 8. CI parameters: 64 pairs, 16 tenants,
// 4 flows per pair, 8 packets per flow, a 2048-descriptor pool.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include "Vufab_sched.h"
#include "fpga/tb/sched_golden.hpp"
#include "fpga/tb/vtb.hpp"
#include "sched/hier_scheduler.hpp"

namespace {

using ufab::HierScheduler;
using ufab::HierSchedulerConfig;

constexpr uint32_t kPairs = 64, kTenants = 16, kFlows = 4, kQcap = 8;

using ufab::fpga::SchedOp;
using ufab::fpga::SchedRsp;
using namespace ufab::fpga;  // op codes

// The RTL behind its operation port. Two drivers:
//  - op(): one operation at a time (issue, wait for its result);
//  - issue(): pipelined; the operation is presented as soon as op_ready is
//    high and the call returns in the cycle after its acceptance, so
//    successive calls present operations back to back. Results are collected
//    by every tick into results().
class SchedDut {
 public:
  SchedDut() {
    d_.reset();
    while (!d_->op_ready) d_.tick();
  }
  SchedRsp op(const SchedOp& o) {
    issue(o);
    for (int latency = 1; results_.empty() && latency < 64; ++latency) tick();
    EXPECT_EQ(results_.size(), 1u) << "no result (or more than one) for op " << int(o.code);
    if (results_.empty()) return {};
    const SchedRsp r = results_.front();
    results_.pop_front();
    codes_.pop_front();
    return r;
  }
  // Returns the cycle in which o was accepted.
  uint64_t issue(const SchedOp& o) {
    d_->eval();
    while (!d_->op_ready) tick();
    d_->op_valid = 1;
    d_->op_code = o.code;
    d_->op_pair = static_cast<uint16_t>(o.pair);
    d_->op_tenant = static_cast<uint16_t>(o.tenant);
    d_->op_cls = static_cast<uint8_t>(o.cls);
    d_->op_flow = static_cast<uint8_t>(o.flow);
    d_->op_len = static_cast<uint16_t>(o.len);
    d_->op_tag = o.tag;
    d_->op_value = o.value;
    d_->eval();
    const uint64_t at = d_.cycles();
    tick();
    d_->op_valid = 0;
    d_->eval();
    return at;
  }
  void tick() {
    d_.tick();
    d_->eval();
    if (d_->rsp_valid) {
      results_.push_back(SchedRsp{d_->rsp_ok != 0, d_->rsp_tag, d_->rsp_len, d_->rsp_pair, d_->rsp_window,
                                  d_->rsp_inflight});
      codes_.push_back(d_->rsp_code);
    }
  }
  std::deque<SchedRsp>& results() { return results_; }
  std::deque<uint8_t>& codes() { return codes_; }
  ufab::fpga::Clocked<Vufab_sched>& raw() { return d_; }

 private:
  ufab::fpga::Clocked<Vufab_sched> d_;
  std::deque<SchedRsp> results_;
  std::deque<uint8_t> codes_;
};

HierSchedulerConfig golden_cfg() {
  HierSchedulerConfig c;
  c.max_tenants = kTenants;
  c.max_pairs = kPairs;
  c.flows_per_pair = kFlows;
  c.queue_capacity = kQcap;
  return c;  // pool: 64 * 4 * 8 = 2048 descriptors, as the RTL's POOL
}

// Both sides, operation by operation, compared by ufab::fpga::expect_same
// (sched_golden.hpp, shared with the top-level test). Pipelined: operations
// go back to back (SchedDut::issue), the model takes each one at its
// acceptance, and each result is compared when the RTL outputs it (in
// acceptance order). Pipelined runs also check every DEQUEUE's cycles
// (acceptance to the next acceptance) against the hand-derived figure: 1 when
// its class was decided since a removal from one of the class's rings (a
// pair leaving its tenant's ring, a tenant moving to another class), 3 when
// the prefetch must be read first, 1 for an empty poll.
struct Both {
  explicit Both(bool pipelined = false) : pipelined_(pipelined) {}
  ~Both() { drain(); }
  SchedDut rtl;
  HierScheduler<uint32_t> gold{golden_cfg()};
  uint64_t ops = 0;
  uint64_t dequeues = 0;
  uint64_t removed_ok = 0;     // successful remove_pair / remove_tenant
  uint64_t reclass_moves = 0;  // set_class of an active tenant to another class
  // pipelined DEQUEUE timing: decisions measured, their cycles, how many took 1 cycle
  uint64_t timed = 0, timed_cycles = 0, one_cycle = 0, timed_polls = 0;
  uint64_t dec_cycles = 0, dec_one = 0;  // the same, for decisions that found work (not empty polls)
  uint64_t same_class_b2b = 0, same_pair_b2b = 0;  // back-to-back decisions of one class / on one pair

  SchedRsp run(const SchedOp& op) {
    if (!pipelined_) {
      const SchedRsp r = rtl.op(op);
      const SchedRsp g = apply(gold, op);
      expect_same(op, r, g, ops++);
      return g;
    }
    const uint64_t at = rtl.issue(op);
    if (last_deq_) {  // the previous operation was a DEQUEUE: its cycles
      const uint64_t took = at - last_at_;
      EXPECT_EQ(took, expect_cycles_) << "DEQUEUE op #" << ops - 1 << " took " << took << " cycles";
      ++timed;
      timed_cycles += took;
      one_cycle += took == 1;
      timed_polls += !last_ok_;
      if (last_ok_) {
        dec_cycles += took;
        dec_one += took == 1;
      }
    }
    const uint32_t cls_before = gold.tenant_class(op.tenant);  // SET_CLASS
    const bool active_before = gold.pair_state(op.pair) == ufab::PairState::kActive;
    const SchedRsp g = apply(gold, op);
    last_deq_ = op.code == kDequeue;
    last_at_ = at;
    last_ok_ = g.ok;
    if (last_deq_) {
      expect_cycles_ = 1;
      if (g.ok) {
        const uint32_t c = gold.tenant_class(gold.pair_tenant(g.pair));
        if (!(warm_ >> c & 1)) expect_cycles_ = 3;
        warm_ |= 1u << c;
        if (gold.active_tenants(c) == 0) warm_ &= ~(1u << c);  // the class emptied: nothing to prefetch
        // decisions right after one of the same class / on the same pair
        if (prev_deq_ok_ && prev_cls_ == c) ++same_class_b2b;
        if (prev_deq_ok_ && prev_pair_ == g.pair) ++same_pair_b2b;
        prev_cls_ = c;
        prev_pair_ = g.pair;
      }
      prev_deq_ok_ = g.ok;
    } else {
      prev_deq_ok_ = false;
      // a pair leaving its tenant's ring clears its class's prefetch, a
      // class move the old class's; nothing else does (joins are patched in)
      const bool active_after = gold.pair_state(op.pair) == ufab::PairState::kActive;
      if (g.ok && (op.code == kSetWindow || op.code == kOnAcked) && active_before && !active_after) {
        warm_ &= ~(1u << gold.tenant_class(gold.pair_tenant(op.pair)));
      } else if (g.ok && op.code == kSetClass && cls_before != op.cls) {
        warm_ &= ~(1u << cls_before);
      }
    }
    pending_.push_back({op, g, ops++});
    check();
    return g;
  }
  void drain() {
    if (!pipelined_) return;
    for (int i = 0; i < 64 && !pending_.empty(); ++i) rtl.tick();
    check();
    EXPECT_TRUE(pending_.empty()) << pending_.size() << " results missing";
  }
  void check() {
    while (!rtl.results().empty() && !pending_.empty()) {
      const Pending& p = pending_.front();
      EXPECT_EQ(rtl.codes().front(), p.op.code) << "result order, op #" << p.n;
      expect_same(p.op, rtl.results().front(), p.gold, p.n);
      rtl.results().pop_front();
      rtl.codes().pop_front();
      pending_.pop_front();
    }
    EXPECT_TRUE(rtl.results().empty()) << "a result without an operation";
  }
  void add_tenant(uint32_t t, uint32_t cls) { run({kAddTenant, 0, t, cls}); }
  void set_weight(uint32_t cls, uint32_t w) { run({kSetWeight, 0, 0, cls, 0, 0, 0, w}); }
  void add_pair(uint32_t p, uint32_t t, uint32_t window) { run({kAddPair, p, t, 0, 0, 0, 0, window}); }
  void set_window(uint32_t p, uint32_t w) { run({kSetWindow, p, 0, 0, 0, 0, 0, w}); }
  void on_acked(uint32_t p, uint32_t bytes) { run({kOnAcked, p, 0, 0, 0, 0, 0, bytes}); }
  bool enqueue(uint32_t p, uint32_t f, uint32_t len, uint32_t tag) { return run({kEnqueue, p, 0, 0, f, len, tag}).ok; }
  void remove_tenant(uint32_t t) { removed_ok += run({kRemoveTenant, 0, t}).ok; }
  void remove_pair(uint32_t p) { removed_ok += run({kRemovePair, p}).ok; }
  void set_class(uint32_t t, uint32_t cls) {
    const uint32_t before = gold.tenant_class(t);
    const uint32_t act_old = gold.active_tenants(before);  // 0 for kNone
    const bool ok = run({kSetClass, 0, t, cls}).ok;
    if (ok && before != cls && gold.active_tenants(before) + 1 == act_old) ++reclass_moves;  // it was active
  }
  // Returns false when nothing is eligible (both sides must agree).
  bool dequeue(uint32_t* pair_out = nullptr, uint32_t* len_out = nullptr) {
    const SchedRsp g = run({kDequeue});
    if (!g.ok) return false;
    ++dequeues;
    if (pair_out) *pair_out = g.pair;
    if (len_out) *len_out = g.len;
    return true;
  }

 private:
  struct Pending {
    SchedOp op;
    SchedRsp gold;
    uint64_t n;
  };
  bool pipelined_;
  std::deque<Pending> pending_;
  bool last_deq_ = false, last_ok_ = false;
  uint64_t last_at_ = 0, expect_cycles_ = 0;
  uint32_t warm_ = 0;  // classes whose prefetch is valid
  bool prev_deq_ok_ = false;
  uint32_t prev_cls_ = 0, prev_pair_ = 0;
};

// Every behaviour test runs with both drivers: one operation at a time, and
// pipelined (operations back to back, DEQUEUEs decided one per cycle).
class UfabSched : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Drivers, UfabSched, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Pipelined" : "OneAtATime"; });

TEST_P(UfabSched, ControlOpsMatchModel) {
  Both b(GetParam());
  b.add_tenant(3, 2);
  b.add_tenant(3, 1);    // duplicate
  b.add_tenant(16, 0);   // out of range
  b.add_pair(5, 3, 4000);
  b.add_pair(5, 3, 4000);  // duplicate
  b.add_pair(6, 4, 4000);  // tenant 4 does not exist
  b.add_pair(64, 3, 1);    // out of range
  b.set_weight(2, 0);      // invalid weight
  b.set_weight(2, 4097);   // above kMaxClassWeight
  b.set_weight(2, 3);
  b.set_window(7, 100);    // unknown pair
  b.on_acked(5, 100);
  b.set_window(5, 0xFFFFFFFFu);  // clamped to kMaxWindow
  b.enqueue(5, 4, 100, 1);       // flow out of range
  b.enqueue(5, 0, 0, 2);         // zero length
  b.enqueue(9, 0, 100, 3);       // unknown pair
  for (uint32_t i = 0; i < kQcap + 2; ++i) b.enqueue(5, 1, 100, 10 + i);  // two drops: FIFO full
  b.drain();  // the counters count at the results
  EXPECT_EQ(b.rtl.raw()->cnt_drop_invalid, b.gold.counters().dropped_invalid);
  EXPECT_EQ(b.rtl.raw()->cnt_drop_full, b.gold.counters().dropped_full);
  EXPECT_EQ(b.rtl.raw()->cnt_enqueued, b.gold.counters().enqueued);
  while (b.dequeue()) {
  }
  EXPECT_EQ(b.dequeues, kQcap);
}

TEST_P(UfabSched, WindowGating) {
  Both b(GetParam());
  b.add_tenant(0, 0);
  b.add_pair(0, 0, 3000);
  for (uint32_t i = 0; i < 6; ++i) b.enqueue(0, i % 2, 1500, i);
  EXPECT_TRUE(b.dequeue());
  EXPECT_TRUE(b.dequeue());
  EXPECT_FALSE(b.dequeue());  // inflight 3000 + 1500 > window 3000: blocked
  b.on_acked(0, 1000);
  EXPECT_FALSE(b.dequeue());  // 2000 + 1500 > 3000
  b.on_acked(0, 500);
  EXPECT_TRUE(b.dequeue());   // 1500 + 1500 <= 3000
  b.set_window(0, 0);
  b.on_acked(0, 1u << 20);    // nothing in flight, but window 0 never sends
  EXPECT_FALSE(b.dequeue());
  b.set_window(0, 700);       // below one packet: may send it with nothing in flight
  EXPECT_TRUE(b.dequeue());
  EXPECT_FALSE(b.dequeue());
  b.on_acked(0, 1500);
  EXPECT_TRUE(b.dequeue());
  b.on_acked(0, 1500);
  EXPECT_TRUE(b.dequeue());
  EXPECT_FALSE(b.dequeue());  // empty
}

// Random traffic from many tenants and pairs: every pick identical.
TEST_P(UfabSched, RandomTrafficPickOrderExact) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Both b(GetParam());
    for (uint32_t c = 0; c < 8; ++c) {
      if (rng() % 2) b.set_weight(c, 1 + rng() % 4096);
    }
    for (uint32_t t = 0; t < kTenants; ++t) b.add_tenant(t, rng() % 8);
    for (uint32_t p = 0; p < kPairs; ++p) {
      const uint32_t kind = rng() % 4;
      const uint32_t w = kind == 0 ? 0 : kind == 1 ? 500 + rng() % 4000 : 20000 + rng() % 200000;
      b.add_pair(p, rng() % kTenants, w);
    }
    uint32_t tag = 0;
    for (int i = 0; i < 30000; ++i) {
      const uint32_t r = rng() % 100;
      const uint32_t p = rng() % (kPairs + 2);
      if (r < 45) {
        const uint32_t len = rng() % 50 == 0 ? rng() % 3 : 64 + rng() % 1437;
        b.enqueue(p, rng() % (kFlows + 1), len, tag++);
      } else if (r < 85) {
        b.dequeue();
      } else if (r < 95) {
        b.on_acked(p, rng() % 6000);
      } else {
        b.set_window(p, rng() % 8 == 0 ? 0 : rng() % 300000);
      }
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(b.dequeues, 8000u);
  }
}

// Per-tenant byte shares over a long backlogged run: identical to the model
// (bit-exact picks) and, with weights 1:2:5 spread over classes with several
// tenants each, proportional to the weights within 1%.
TEST_P(UfabSched, ByteSharesMatchModelAndWeights) {
  Both b(GetParam());
  // classes 0, 1, 2 with weights 1, 2, 5; tenants 0-2 in class 0, 3-4 in class 1, 5 in class 2
  b.set_weight(2, 5);
  const uint32_t cls_of[6] = {0, 0, 0, 1, 1, 2};
  for (uint32_t t = 0; t < 6; ++t) b.add_tenant(t, cls_of[t]);
  for (uint32_t p = 0; p < 48; ++p) b.add_pair(p, p % 6, 1u << 30);
  std::mt19937 rng(7);
  uint32_t tag = 0;
  auto refill = [&](uint32_t p) {
    for (uint32_t f = 0; f < kFlows; ++f) {
      while (b.gold.backlog_packets(p) < 2 * kFlows) {
        if (!b.enqueue(p, rng() % kFlows, 64 + rng() % 1437, tag++)) break;
      }
    }
  };
  for (uint32_t p = 0; p < 48; ++p) refill(p);
  std::map<uint32_t, uint64_t> bytes;
  for (int i = 0; i < 20000; ++i) {
    uint32_t pair = 0, len = 0;
    ASSERT_TRUE(b.dequeue(&pair, &len));
    bytes[pair % 6] += len;
    b.on_acked(pair, len);
    refill(pair);
    if (::testing::Test::HasFailure()) return;
  }
  // per-tenant weight = class weight: 1,1,1,2,2,5 (sum 12)
  const double w[6] = {1, 1, 1, 2, 2, 5};
  uint64_t total = 0;
  for (auto& [t, v] : bytes) total += v;
  for (uint32_t t = 0; t < 6; ++t) {
    const double share = static_cast<double>(bytes[t]) / static_cast<double>(total);
    EXPECT_NEAR(share, w[t] / 12.0, 0.01 * w[t] / 12.0 + 0.002) << "tenant " << t;
  }
}

// Virtual-time rebase at 2^62: weight-1 classes and 64 KB packets push the
// start tags past 2^62 in ~64 packets; picks stay identical to the model.
TEST_P(UfabSched, VirtualTimeRebase) {
  Both b(GetParam());
  b.add_tenant(0, 0);
  b.add_tenant(1, 1);
  b.set_weight(1, 1);
  b.add_pair(0, 0, 0xFFFF0000u);
  b.add_pair(1, 1, 0xFFFF0000u);
  uint32_t tag = 0;
  for (int round = 0; round < 20; ++round) {
    for (uint32_t p = 0; p < 2; ++p) {
      while (b.gold.backlog_packets(p) < 6) {
        b.enqueue(p, tag % kFlows, 60000 + tag % 5535, tag);
        ++tag;
      }
    }
    for (int i = 0; i < 10; ++i) {
      uint32_t pair = 0, len = 0;
      ASSERT_TRUE(b.dequeue(&pair, &len));
      b.on_acked(pair, len);
    }
  }
  EXPECT_EQ(b.dequeues, 200u);
}

// Throughput: back-to-back DEQUEUEs, pipelined. Each class's first decision
// reads its prefetch (3 cycles); every later one is decided in its
// acceptance cycle (1 cycle), whatever the class, tenant or pair order. Here:
// 16 tenants over the 8 classes, 64 pairs, every flow backlogged, windows
// wide open, so every decision finds eligible work until the queues run dry.
// Both checks every DEQUEUE's cycles; this adds the totals, hand-computed:
// 1024 decisions + 2 extra cycles for each of the 8 first ones, and the final
// empty poll takes 1.
TEST(UfabSchedThroughput, OneDecisionPerCycle) {
  Both b(true);
  for (uint32_t t = 0; t < kTenants; ++t) b.add_tenant(t, t % 8);
  for (uint32_t p = 0; p < kPairs; ++p) b.add_pair(p, p % kTenants, 1u << 30);
  uint32_t tag = 0;
  for (uint32_t p = 0; p < kPairs; ++p)
    for (uint32_t f = 0; f < kFlows; ++f)
      for (uint32_t k = 0; k < 4; ++k, ++tag) b.enqueue(p, f, 64 + (tag * 37) % 1400, tag);
  uint64_t n = 0;
  while (b.dequeue()) ++n;
  b.add_tenant(0, 0);  // one more operation: times the final empty poll
  b.drain();
  EXPECT_EQ(n, uint64_t{kPairs} * kFlows * 4);
  EXPECT_EQ(b.timed, n + 1);
  EXPECT_EQ(b.timed_cycles, n + 2 * 8 + 1) << "1 cycle per decision, 3 for each class's first, 1 for the empty poll";
  EXPECT_EQ(b.one_cycle, n - 8 + 1);
  std::printf("decisions: %llu in %llu cycles (%.3f per cycle); %llu took 1 cycle, 8 took 3 (first of each class)\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(b.timed_cycles - 1),
              static_cast<double>(n) / static_cast<double>(b.timed_cycles - 1),
              static_cast<unsigned long long>(b.one_cycle - 1));
}

// remove_tenant / remove_pair / set_tenant_class against the model, by hand:
// a tenant with pairs cannot go, a backlogged pair cannot go, an active
// tenant that changes class joins the end of the new class's round.
TEST_P(UfabSched, RemoveAndReclassMatchModel) {
  Both b(GetParam());
  b.add_tenant(1, 0);
  b.add_tenant(2, 0);
  b.add_tenant(3, 5);
  b.add_pair(10, 1, 1u << 20);
  b.add_pair(11, 2, 1u << 20);
  b.add_pair(12, 3, 1u << 20);
  b.remove_tenant(1);       // has a pair: refused
  b.remove_tenant(9);       // does not exist
  b.remove_tenant(16);      // out of range
  b.remove_pair(13);        // unused
  b.remove_pair(64);        // out of range
  b.set_class(9, 1);        // no such tenant
  b.set_class(1, 0);        // same class: ok, nothing moves
  for (uint32_t i = 0; i < 4; ++i) {
    b.enqueue(10, 0, 1000, i);
    b.enqueue(11, 0, 1000, 10 + i);
    b.enqueue(12, 0, 1000, 20 + i);
  }
  b.remove_pair(10);        // backlogged: refused
  ASSERT_TRUE(b.dequeue());
  b.set_class(1, 5);        // active: leaves class 0, joins class 5 behind tenant 3
  b.set_class(2, 7);        // the last active tenant of class 0 leaves it
  b.set_class(3, 2);
  for (int i = 0; i < 11; ++i) ASSERT_TRUE(b.dequeue());
  EXPECT_FALSE(b.dequeue());
  b.remove_pair(10);        // idle now: removed, in-flight forgotten
  b.remove_pair(10);        // already gone
  b.remove_tenant(1);       // no pairs left
  b.add_tenant(1, 4);       // the id can be reused
  b.add_pair(10, 1, 5000);
  b.enqueue(10, 1, 100, 99);
  EXPECT_TRUE(b.dequeue());
  EXPECT_EQ(b.removed_ok, 2u);
}

// Random sequences of every operation, removals and class moves included:
// every result and every pick identical to the model.
TEST_P(UfabSched, RandomControlAndTrafficExact) {
  for (uint32_t seed : {11u, 12u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Both b(GetParam());
    for (uint32_t t = 0; t < kTenants; ++t) b.add_tenant(t, rng() % 8);
    for (uint32_t p = 0; p < kPairs; ++p) b.add_pair(p, rng() % kTenants, 2000 + rng() % 100000);
    uint32_t tag = 0;
    for (int i = 0; i < 20000; ++i) {
      const uint32_t r = rng() % 100;
      const uint32_t p = rng() % (kPairs + 2);
      const uint32_t t = rng() % (kTenants + 1);
      if (r < 30) {
        b.enqueue(p, rng() % kFlows, 64 + rng() % 1437, tag++);
      } else if (r < 62) {
        b.dequeue();
      } else if (r < 72) {
        b.on_acked(p, rng() % 6000);
      } else if (r < 76) {
        b.set_window(p, rng() % 8 == 0 ? 0 : rng() % 300000);
      } else if (r < 82) {
        b.set_class(t, rng() % 8);
      } else if (r < 89) {
        b.remove_pair(p);
      } else if (r < 95) {
        b.add_pair(p, t, 2000 + rng() % 100000);
      } else if (r < 98) {
        b.remove_tenant(t);
      } else if (r < 99) {
        b.add_tenant(t, rng() % 8);
      } else {
        b.set_weight(rng() % 8, 1 + rng() % 300);
      }
      if (::testing::Test::HasFailure()) return;
    }
    std::printf("seed %u: %llu dequeues, %llu removals, %llu class moves of active tenants\n", seed,
                static_cast<unsigned long long>(b.dequeues), static_cast<unsigned long long>(b.removed_ok),
                static_cast<unsigned long long>(b.reclass_moves));
    EXPECT_GT(b.dequeues, 2000u);
    EXPECT_GT(b.removed_ok, 100u) << "removals that succeeded (pairs and tenants)";
    EXPECT_GT(b.reclass_moves, 30u) << "class moves of active tenants";
  }
}

}  // namespace

namespace {

// Back-to-back decisions on random traffic, pipelined: bursts of enqueues,
// long bursts of DEQUEUEs (decided one per cycle), bursts of acks and window
// changes that block and unblock pairs, and now and then a class move, a
// removal or a new weight. Classes with a single tenant and tenants with a
// single pair make the same class and the same pair come back on consecutive
// cycles (prefetch from the decision itself, forwarding, write-first reads).
// Every result matches the model, and every DEQUEUE takes the cycles Both
// predicts. Reports decisions per cycle.
TEST(UfabSchedThroughput, BackToBackRandomExact) {
  for (uint32_t seed : {21u, 22u, 23u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    Both b(true);
    for (uint32_t c = 0; c < 8; ++c) {
      if (rng() % 2) b.set_weight(c, 1 + rng() % 300);
    }
    // tenants 0-3 alone in classes 0-3; 4-15 spread over classes 4-7
    for (uint32_t t = 0; t < kTenants; ++t) b.add_tenant(t, t < 4 ? t : 4 + rng() % 4);
    for (uint32_t p = 0; p < kPairs; ++p) {
      // tenants 0 and 4 have one pair each
      const uint32_t t = p == 0 ? 0 : p == 1 ? 4 : 1 + rng() % (kTenants - 1);
      const uint32_t t2 = (t == 4 && p != 1) ? 5 : t;
      const uint32_t kind = rng() % 4;
      b.add_pair(p, t2, kind == 0 ? 3000 + rng() % 6000 : 50000 + rng() % 200000);
    }
    uint32_t tag = 0;
    std::vector<std::pair<uint32_t, uint32_t>> sent;  // (pair, len) not acked yet
    for (int round = 0; round < 600; ++round) {
      const uint32_t enq = rng() % 40;
      for (uint32_t i = 0; i < enq; ++i) {
        // pairs 0 and 1 (alone in their tenants) get a quarter of the packets
        const uint32_t p = rng() % 4 == 0 ? rng() % 2 : rng() % kPairs;
        b.enqueue(p, rng() % 5 == 0 ? 0 : rng() % kFlows, 64 + rng() % 1437, tag++);
      }
      // a burst of DEQUEUEs, up to the first empty poll
      const uint32_t deq = 1 + rng() % 80;
      for (uint32_t i = 0; i < deq; ++i) {
        uint32_t pair = 0, len = 0;
        if (!b.dequeue(&pair, &len)) break;
        sent.push_back({pair, len});
      }
      // acks for some of the packets sent, and window changes
      const uint32_t acks = rng() % 8;
      for (uint32_t i = 0; i < acks && !sent.empty(); ++i) {
        const uint32_t j = rng() % sent.size();
        b.on_acked(sent[j].first, sent[j].second * (1 + rng() % 4));
        sent[j] = sent.back();
        sent.pop_back();
      }
      if (rng() % 3 == 0) b.set_window(rng() % kPairs, rng() % 8 == 0 ? 0 : 3000 + rng() % 100000);
      const uint32_t r = rng() % 100;
      if (r < 4) b.set_class(4 + rng() % 12, 4 + rng() % 4);
      else if (r < 7) b.remove_pair(2 + rng() % (kPairs - 2));
      else if (r < 10) b.add_pair(2 + rng() % (kPairs - 2), 5 + rng() % 11, 50000 + rng() % 200000);
      else if (r < 12) b.set_weight(rng() % 8, 1 + rng() % 300);
      if (::testing::Test::HasFailure()) return;
    }
    b.add_tenant(0, 0);  // times the last DEQUEUE
    b.drain();
    const uint64_t decisions = b.timed - b.timed_polls;
    std::printf("seed %u: %llu decisions in %llu cycles: %.3f per cycle (min 1 cycle, max 3); "
                "%llu took 1 cycle (%.1f%%), the rest 3 (prefetch read: the class had emptied, or lost a pair from a ring); "
                "%llu empty polls (1 cycle each); back to back: %llu of one class, %llu on one pair\n",
                seed, static_cast<unsigned long long>(decisions), static_cast<unsigned long long>(b.dec_cycles),
                static_cast<double>(decisions) / static_cast<double>(b.dec_cycles),
                static_cast<unsigned long long>(b.dec_one),
                100.0 * static_cast<double>(b.dec_one) / static_cast<double>(decisions),
                static_cast<unsigned long long>(b.timed_polls),
                static_cast<unsigned long long>(b.same_class_b2b), static_cast<unsigned long long>(b.same_pair_b2b));
    EXPECT_GT(decisions, 5000u);
    EXPECT_GT(b.same_class_b2b, 500u);
    EXPECT_GT(b.same_pair_b2b, 100u);
  }
}

}  // namespace
