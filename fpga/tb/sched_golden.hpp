// The golden side of every scheduler comparison (fpga/tb/test_ufab_sched.cpp,
// fpga/tb/test_ufab_edge_top.cpp): one ufab_sched operation (the RTL's op
// port, fpga/rtl/ufab_sched.v header) applied to ufab::HierScheduler, and the
// result the RTL must report for it. Both testbenches go through apply() and
// expect_same(), so the module test and the top-level test check the same
// thing.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "sched/hier_scheduler.hpp"

namespace ufab::fpga {

enum SchedOpCode : uint8_t {
  kAddTenant = 1, kAddPair, kSetWindow, kOnAcked, kEnqueue, kDequeue, kSetWeight,
  kRemoveTenant, kRemovePair, kSetClass
};

struct SchedOp {
  uint8_t code = 0;
  uint32_t pair = 0, tenant = 0, cls = 0, flow = 0, len = 0, tag = 0, value = 0;
};

struct SchedRsp {
  bool ok = false;
  uint32_t tag = 0, len = 0, pair = 0, window = 0, inflight = 0;
};

// Applies op to the model; returns what the RTL must answer.
inline SchedRsp apply(HierScheduler<uint32_t>& g, const SchedOp& op) {
  SchedRsp r;
  switch (op.code) {
    case kAddTenant: r.ok = g.add_tenant(op.tenant, op.cls); break;
    case kAddPair: r.ok = g.add_pair(op.pair, op.tenant, op.value); break;
    case kSetWindow: r.ok = g.set_window(op.pair, op.value); break;
    case kOnAcked: r.ok = g.on_acked(op.pair, op.value); break;
    case kEnqueue: r.ok = g.enqueue(op.pair, op.flow, op.tag, op.len); break;
    case kDequeue: r.ok = g.dequeue(r.tag, r.len, r.pair); break;
    case kSetWeight: r.ok = g.set_class_weight(op.cls, op.value); break;
    case kRemoveTenant: r.ok = g.remove_tenant(op.tenant); break;
    case kRemovePair: r.ok = g.remove_pair(op.pair); break;
    case kSetClass: r.ok = g.set_tenant_class(op.tenant, op.cls); break;
    default: break;
  }
  const uint32_t p = op.code == kDequeue ? r.pair : op.pair;
  r.window = static_cast<uint32_t>(g.window(p));
  r.inflight = static_cast<uint32_t>(g.inflight(p));
  return r;
}

// The RTL's result against the model's: success always; the packet for a
// dequeue; the pair's window and in-flight bytes where the RTL reports them
// (the context-table mirror).
inline void expect_same(const SchedOp& op, const SchedRsp& rtl, const SchedRsp& gold, uint64_t n) {
  EXPECT_EQ(rtl.ok, gold.ok) << "op #" << n << " code " << int(op.code) << " pair " << op.pair << " tenant "
                             << op.tenant;
  if (!rtl.ok || !gold.ok) return;
  switch (op.code) {
    case kDequeue:
      EXPECT_EQ(rtl.tag, gold.tag) << "dequeue, op #" << n;
      EXPECT_EQ(rtl.len, gold.len) << "dequeue, op #" << n;
      EXPECT_EQ(rtl.pair, gold.pair) << "dequeue, op #" << n;
      EXPECT_EQ(rtl.inflight, gold.inflight) << "dequeue, op #" << n;
      break;
    case kAddPair:
    case kSetWindow:
    case kOnAcked:
    case kRemovePair:
      EXPECT_EQ(rtl.window, gold.window) << "pair " << op.pair << ", op #" << n;
      EXPECT_EQ(rtl.inflight, gold.inflight) << "pair " << op.pair << ", op #" << n;
      break;
    default:
      break;
  }
}

}  // namespace ufab::fpga
