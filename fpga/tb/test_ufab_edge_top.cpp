// ufab_edge_top (fpga/rtl/ufab_edge_top.v): the μFAB-E datapath end to end
// (paper §4.1, Figure 8) through its AXI-Lite and AXI-Stream ports, compared
// exactly with the golden model: every operation the top hands to its
// scheduler (AXI-Lite commands, RX acks and windows, TX enqueues, decision
// requests; read from the Verilator-public tap in ufab_edge_top) is applied
// to ufab::HierScheduler through the same code as the module test
// (sched_golden.hpp), every scheduler result must equal the model's, and
// every descriptor that leaves the TX pipe must be the model's next dequeue
// (tag, length, pair) carrying its pair's {token, path}. Also checked:
// the window gate seen from outside, the context-table mirror of
// window/in-flight bytes, RX data delivery, probe loss after 8 base RTTs.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "Vufab_edge_top.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"  // Verilator's root class (the public tap) uses anonymous structs
#include "Vufab_edge_top___024root.h"
#pragma GCC diagnostic pop
#include "fpga/tb/sched_golden.hpp"
#include "fpga/tb/vtb.hpp"
#include "sched/hier_scheduler.hpp"

namespace {

ufab::HierSchedulerConfig golden_cfg() {
  ufab::HierSchedulerConfig c;  // the top's CI parameters
  c.max_tenants = 16;
  c.max_pairs = 64;
  c.flows_per_pair = 4;
  c.queue_capacity = 8;
  return c;  // pool 64 * 4 * 8 = 2048, as POOL
}

struct TxOut { uint32_t tag, len, pair, path, token; bool probe; };
TxOut decode(const Vufab_edge_top& m) {
  const uint32_t w0 = m.m_axis_tx_tdata[0], w1 = m.m_axis_tx_tdata[1], w2 = m.m_axis_tx_tdata[2];
  return TxOut{w0, w1 & 0xFFFF, w1 >> 16, w2 & 0xFF, (w2 >> 8) & 0xFFFF, ((w2 >> 24) & 1) != 0};
}

struct Top {
  ufab::fpga::Clocked<Vufab_edge_top> d;
  ufab::HierScheduler<uint32_t> gold{golden_cfg()};
  // accepted scheduler operations whose results are not out yet, with the model's result
  std::deque<std::pair<ufab::fpga::SchedOp, ufab::fpga::SchedRsp>> pending;
  std::deque<ufab::fpga::SchedRsp> gold_tx;  // the model's dequeues not yet out of the TX pipe
  std::vector<TxOut> tx_log;                 // every descriptor out of the TX pipe
  std::map<uint32_t, uint32_t> token, path;  // header context written (cmd 16)
  uint64_t ops = 0, results = 0, tx_exact = 0;
  std::mt19937 ready_rng{5};
  bool random_tx_ready = false;  // the DMA engine takes a descriptor in 3 cycles of 4

  Top() {
    d->m_axis_tx_tready = 0;
    d->m_axis_rx_tready = 1;
    d->s_axil_bready = 1;
    d->s_axil_rready = 1;
    d.reset();
    for (int i = 0; i < 2100; ++i) tick();  // scheduler table initialisation
  }
  // One clock edge with the golden replay: the operation accepted at this
  // edge goes to the model, the result that appears after it is compared,
  // and a TX descriptor taken at this edge must be the model's next dequeue.
  void tick() {
    if (random_tx_ready) d->m_axis_tx_tready = ready_rng() % 4 != 0;
    d->eval();
    const auto* r = d.dut().rootp;
    if (r->ufab_edge_top__DOT__tap_op_fire) {
      const ufab::fpga::SchedOp op{r->ufab_edge_top__DOT__tap_op_code, r->ufab_edge_top__DOT__tap_op_pair,
                                   r->ufab_edge_top__DOT__tap_op_tenant, r->ufab_edge_top__DOT__tap_op_cls,
                                   r->ufab_edge_top__DOT__tap_op_flow,   r->ufab_edge_top__DOT__tap_op_len,
                                   r->ufab_edge_top__DOT__tap_op_tag,    r->ufab_edge_top__DOT__tap_op_value};
      const ufab::fpga::SchedRsp g = ufab::fpga::apply(gold, op);
      if (op.code == ufab::fpga::kDequeue && g.ok) gold_tx.push_back(g);
      pending.emplace_back(op, g);
      // a DEQUEUE's result follows 2 cycles after its acceptance, so the
      // next operation may be accepted before it is out (results stay in order)
      EXPECT_LE(pending.size(), 3u) << "operations in flight in ufab_sched";
    }
    if (d->m_axis_tx_tvalid && d->m_axis_tx_tready) {
      const TxOut o = decode(d.dut());
      tx_log.push_back(o);
      if (!o.probe) {
        EXPECT_FALSE(gold_tx.empty()) << "TX descriptor " << o.tag << " that the model did not dequeue";
        if (!gold_tx.empty()) {
          const ufab::fpga::SchedRsp g = gold_tx.front();
          gold_tx.pop_front();
          EXPECT_EQ(o.tag, g.tag) << "TX #" << tx_log.size();
          EXPECT_EQ(o.len, g.len) << "TX #" << tx_log.size();
          EXPECT_EQ(o.pair, g.pair) << "TX #" << tx_log.size();
          ++tx_exact;
        }
        EXPECT_EQ(o.token, token[o.pair]) << "pair " << o.pair;
        EXPECT_EQ(o.path, path[o.pair]) << "pair " << o.pair;
      }
    }
    d.tick();
    if (r->ufab_edge_top__DOT__tap_rsp_valid) {
      ASSERT_FALSE(pending.empty()) << "a scheduler result without an operation";
      const auto [op, g] = pending.front();
      pending.pop_front();
      EXPECT_EQ(r->ufab_edge_top__DOT__tap_rsp_code, op.code);
      const ufab::fpga::SchedRsp rtl{r->ufab_edge_top__DOT__tap_rsp_ok != 0, r->ufab_edge_top__DOT__tap_rsp_tag,
                                     r->ufab_edge_top__DOT__tap_rsp_len, r->ufab_edge_top__DOT__tap_rsp_pair,
                                     r->ufab_edge_top__DOT__tap_rsp_win, r->ufab_edge_top__DOT__tap_rsp_infl};
      ufab::fpga::expect_same(op, rtl, g, results++);
    }
  }
  void wr(uint8_t addr, uint32_t v) {
    d->s_axil_awaddr = addr;
    d->s_axil_wdata = v;
    d->s_axil_awvalid = 1;
    d->s_axil_wvalid = 1;
    d->eval();
    while (!d->s_axil_awready) { tick(); d->eval(); }
    tick();
    d->s_axil_awvalid = 0;
    d->s_axil_wvalid = 0;
    tick();
  }
  uint32_t rd(uint8_t addr) {
    d->s_axil_araddr = addr;
    d->s_axil_arvalid = 1;
    d->eval();
    while (!d->s_axil_arready) { tick(); d->eval(); }
    tick();
    d->s_axil_arvalid = 0;
    const uint32_t v = d->s_axil_rdata;
    tick();
    return v;
  }
  // Issues a command and waits for it; returns STATUS.ok.
  bool cmd(uint32_t code, uint32_t pair, uint32_t tenant, uint32_t value, uint32_t cls = 0) {
    wr(0x10, pair);
    wr(0x14, tenant);
    wr(0x18, value);
    wr(0x1C, cls);
    wr(0x20, code);
    uint32_t st;
    while ((st = rd(0x24)) & 1) {
    }
    if (code == 16 && (st & 2)) {
      token[pair] = value & 0xFFFF;
      path[pair] = (value >> 16) & 0xFF;
    }
    return st & 2;
  }
  void send_tx(uint32_t pair, uint32_t flow, uint32_t len, uint32_t tag) {
    d->s_axis_tx_tdata[0] = pair | (flow << 16) | ((len & 0xFF) << 24);
    d->s_axis_tx_tdata[1] = (len >> 8) | (tag << 8);
    d->s_axis_tx_tdata[2] = tag >> 24;
    d->s_axis_tx_tvalid = 1;
    d->eval();
    while (!d->s_axis_tx_tready) { tick(); d->eval(); }
    tick();
    d->s_axis_tx_tvalid = 0;
  }
  void send_rx(uint32_t pair, uint32_t type, uint32_t value, bool viol = false) {
    d->s_axis_rx_tdata = uint64_t{pair} | (uint64_t{type} << 16) | (uint64_t{viol} << 18) | (uint64_t{value} << 32);
    d->s_axis_rx_tvalid = 1;
    d->eval();
    while (!d->s_axis_rx_tready) { tick(); d->eval(); }
    tick();
    d->s_axis_rx_tvalid = 0;
  }
};

TEST(UfabEdgeTop, EndToEnd) {
  Top t;
  EXPECT_EQ(t.rd(0x00), 0x75464142u);
  EXPECT_EQ(t.rd(0x04), 6u | (4u << 8));
  for (uint32_t tn = 0; tn < 4; ++tn) ASSERT_TRUE(t.cmd(1, 0, tn, 0, tn));
  EXPECT_FALSE(t.cmd(1, 0, 2, 0, 1));  // duplicate tenant
  for (uint32_t p = 0; p < 16; ++p) {
    ASSERT_TRUE(t.cmd(2, p, p % 4, 3000));                          // window 3000 B
    ASSERT_TRUE(t.cmd(16, p, 0, (p + 100) | ((p * 3 + 1) << 16)));  // token p+100, path 3p+1
  }
  ASSERT_TRUE(t.cmd(19, 0, 2, 0xABCD));
  ASSERT_TRUE(t.cmd(20, 0, 2, 0));
  EXPECT_EQ(t.rd(0x28), 0xABCDu);

  std::mt19937 rng(3);
  std::map<uint32_t, uint32_t> len_of, pair_of;
  uint32_t tag = 1;
  for (uint32_t p = 0; p < 16; ++p)
    for (int k = 0; k < 6; ++k) {
      const uint32_t len = 200 + rng() % 1300;
      len_of[tag] = len;
      pair_of[tag] = p;
      t.send_tx(p, k % 4, len, tag++);
    }
  // drain: the TX side sends while windows allow; acks reopen them
  std::map<uint32_t, int64_t> inflight;
  std::set<uint32_t> seen;
  t.d->m_axis_tx_tready = 1;
  for (int cyc = 0; cyc < 200000 && seen.size() < len_of.size(); ++cyc) {
    t.d->eval();
    if (t.d->m_axis_tx_tvalid) {
      const TxOut o = decode(t.d.dut());
      ASSERT_FALSE(o.probe);
      ASSERT_TRUE(len_of.count(o.tag)) << o.tag;
      EXPECT_TRUE(seen.insert(o.tag).second) << "duplicate " << o.tag;
      EXPECT_EQ(o.len, len_of[o.tag]);
      EXPECT_EQ(o.pair, pair_of[o.tag]);
      EXPECT_EQ(o.token, o.pair + 100);
      EXPECT_EQ(o.path, o.pair * 3 + 1);
      inflight[o.pair] += o.len;
      EXPECT_LE(inflight[o.pair], 3000 + 1500) << "window gate";
    }
    t.tick();
    if (cyc % 97 == 0) {  // ack everything of one pair
      for (auto& [p, b] : inflight)
        if (b > 0) {
          t.d->m_axis_tx_tready = 0;  // observe every TX output in the loop above
          t.send_rx(p, 1, static_cast<uint32_t>(b));
          t.d->m_axis_tx_tready = 1;
          b = 0;
          break;
        }
    }
  }
  EXPECT_EQ(seen.size(), len_of.size());
  EXPECT_EQ(t.rd(0x40), len_of.size());  // enqueued
  EXPECT_EQ(t.rd(0x44), len_of.size());  // dequeued

  // mirror of admission state: pair 5, new window by a probe response
  t.send_rx(5, 2, 12345);
  for (int i = 0; i < 10; ++i) t.tick();
  ASSERT_TRUE(t.cmd(18, 5, 0, 0));
  EXPECT_EQ(t.rd(0x28), 12345u);
  EXPECT_EQ(t.rd(0x2C), static_cast<uint32_t>(inflight[5]));

  // RX data is delivered to the host unchanged
  t.d->m_axis_rx_tready = 1;
  t.d->s_axis_rx_tdata = 0x1234'5678'0000'0007ull;
  t.d->s_axis_rx_tvalid = 1;
  t.d->eval();
  EXPECT_TRUE(t.d->m_axis_rx_tvalid);
  EXPECT_EQ(t.d->m_axis_rx_tdata, 0x1234'5678'0000'0007ull);
  t.tick();
  t.d->s_axis_rx_tvalid = 0;

  // a probe (flow 0xFF) bypasses the scheduler; with base RTT 50 cycles and
  // no response it is lost after 8 * 50 cycles
  ASSERT_TRUE(t.cmd(17, 7, 0, 50));
  t.send_tx(7, 0xFF, 80, 999);
  bool got = false;
  for (int i = 0; i < 20 && !got; ++i) {
    t.d->eval();
    if (t.d->m_axis_tx_tvalid) {
      const TxOut o = decode(t.d.dut());
      EXPECT_TRUE(o.probe);
      EXPECT_EQ(o.tag, 999u);
      got = true;
    }
    t.tick();
  }
  EXPECT_TRUE(got);
  EXPECT_EQ(t.rd(0x50), 0u);  // losses
  for (int i = 0; i < 400 + 200; ++i) t.tick();
  EXPECT_EQ(t.rd(0x50), 1u);
  EXPECT_LE(t.pending.size(), 3u) << "at most the decision requests in flight";
  EXPECT_EQ(t.tx_exact, len_of.size()) << "every descriptor checked against the model";
  EXPECT_TRUE(t.gold_tx.empty());
}

// Random control and traffic through the ports, with every scheduler result
// and every TX descriptor compared with the model (Top::tick): AXI-Lite
// commands (tenants and pairs added and removed, class moves, weights,
// windows), TX descriptors, RX acks and probe responses (new windows), and a
// DMA engine that is ready 3 cycles in 4.
TEST(UfabEdgeTop, RandomTrafficExactAgainstModel) {
  Top t;
  std::mt19937 rng(21);
  for (uint32_t tn = 0; tn < 16; ++tn) t.cmd(1, 0, tn, 0, rng() % 8);
  for (uint32_t p = 0; p < 64; ++p) {
    t.cmd(2, p, rng() % 16, 3000 + rng() % 30000);
    t.cmd(16, p, 0, (p * 7 + 1) | ((p % 5) << 16));
  }
  t.random_tx_ready = true;
  uint32_t tag = 1;
  uint64_t acked = 0;
  for (int i = 0; i < 2500; ++i) {
    const uint32_t r = rng() % 100;
    const uint32_t p = rng() % 64;
    if (r < 55) {
      t.send_tx(p, rng() % 4, 64 + rng() % 1437, tag++);
    } else if (r < 75) {
      // ack what the pair has in flight, as the model counts it
      const uint32_t b = static_cast<uint32_t>(t.gold.inflight(p));
      if (b != 0) {
        t.send_rx(p, 1, rng() % 2 ? b : b / 2 + 1);
        ++acked;
      }
    } else if (r < 80) {
      t.send_rx(p, 2, rng() % 8 == 0 ? 0 : 1000 + rng() % 40000);  // probe response: new window
    } else if (r < 84) {
      t.cmd(9, p, 0, 0);  // remove pair (idle ones only)
    } else if (r < 88) {
      t.cmd(2, p, rng() % 17, 3000 + rng() % 30000);  // add pair (unused ones only)
    } else if (r < 92) {
      t.cmd(10, 0, rng() % 17, 0, rng() % 8);  // move a tenant to another class
    } else if (r < 94) {
      t.cmd(8, 0, rng() % 17, 0);  // remove tenant (those without pairs)
    } else if (r < 96) {
      t.cmd(1, 0, rng() % 17, 0, rng() % 8);  // add tenant
    } else if (r < 97) {
      t.cmd(7, 0, 0, 1 + rng() % 200, rng() % 8);  // class weight
    } else {
      for (int k = 0; k < 20; ++k) t.tick();
    }
    if (::testing::Test::HasFailure()) return;
  }
  // drain what the windows allow
  for (int k = 0; k < 5000; ++k) t.tick();
  EXPECT_LE(t.pending.size(), 3u) << "at most the decision requests in flight";
  EXPECT_TRUE(t.gold_tx.empty()) << "the model dequeued more than the TX pipe emitted";
  std::printf("%llu scheduler operations checked, %llu TX descriptors exact, %llu acks\n",
              static_cast<unsigned long long>(t.results), static_cast<unsigned long long>(t.tx_exact),
              static_cast<unsigned long long>(acked));
  EXPECT_GT(t.tx_exact, 500u);
  EXPECT_GT(t.results, 4000u);  // decision requests included
}

}  // namespace

namespace {

// Line rate through the top: 512 descriptors queued (64 pairs over 8 tenants
// in the 8 classes, windows wide open) while the DMA engine is stalled, then
// the DMA engine takes one per cycle. Only decision requests reach the
// scheduler then: each is decided in 1 cycle, except the first of a class
// whose prefetch an enqueue made stale (3 cycles, at most 8 of them), and the
// TX pipe keeps up to 3 requests in flight. So the n descriptors leave in at
// most n - 1 + 2 * 8 cycles from the first to the last.
TEST(UfabEdgeTop, OneDescriptorPerCycleDrain) {
  Top t;
  for (uint32_t tn = 0; tn < 8; ++tn) ASSERT_TRUE(t.cmd(1, 0, tn, 0, tn));
  for (uint32_t p = 0; p < 64; ++p) {
    ASSERT_TRUE(t.cmd(2, p, p % 8, 1u << 30));
    ASSERT_TRUE(t.cmd(16, p, 0, p));
  }
  t.d->m_axis_tx_tready = 0;
  uint32_t tag = 1;
  for (uint32_t k = 0; k < 2; ++k)
    for (uint32_t p = 0; p < 64; ++p)
      for (uint32_t f = 0; f < 4; ++f, ++tag) t.send_tx(p, f, 64 + (tag * 37) % 1400, tag);
  const uint64_t n = tag - 1;
  for (int i = 0; i < 50; ++i) t.tick();  // the TX FIFO fills; requests stop
  t.d->m_axis_tx_tready = 1;
  uint64_t out = 0, first = 0, last = 0;
  for (uint64_t cyc = 0; cyc < 10 * n && out < n; ++cyc) {
    t.d->eval();
    if (t.d->m_axis_tx_tvalid) {
      if (out == 0) first = cyc;
      last = cyc;
      ++out;
    }
    t.tick();
  }
  ASSERT_EQ(out, n);
  EXPECT_EQ(t.tx_exact, n) << "every descriptor checked against the model";
  EXPECT_LE(last - first, n - 1 + 2 * 8);
  std::printf("%llu descriptors out in %llu cycles: %.3f per cycle\n", static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(last - first + 1),
              static_cast<double>(n) / static_cast<double>(last - first + 1));
}

}  // namespace
