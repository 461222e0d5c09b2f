// Algorithm 1 rounds that recompute only what changed (docs/design.md §15,
// pipeline/control.cpp), in process on a real Edge (one lcore, no ports
// started; the fabric port's TX buffer goes to an rte_ring the test reads).
// B_u = 1 Gb/s, so a tenant's guarantee in Gb/s is its tokens per VM:
// tenant 100 (a1; remotes b1..b3) 3, tenant 200 (a2; remote c1) 2.
//
// Sender side (TokenAssignment, line 7: pairs with demand 0 below the fair
// share keep phi_alpha / n), counting VM assignments (vms_assigned):
//   a1->b1, a1->b2 queue a frame: a1 assigned, 3 / 2 = 1.5 each      (1)
//   a round with nothing new: no VM assigned                         (1)
//   a2->c1 queues: a2 assigned, 2 / 1 = 2; a1 untouched              (2)
//   a1->b3 queues: a1 assigned, 3 / 3 = 1 each                       (3)
//   a1->b1 published again with the same inputs: no VM assigned      (3)
//   tenant 100 to 6 Gb/s: a1 assigned, 6 / 3 = 2 each; a2 untouched (4)
// Receiver side (TokenAdmission of a1's phi_alpha 6 over what b1..b3 ask in
// their probes; responses carry phi_D in 1/64 tokens, UNBOUND 0xffffffff),
// counting receiver passes (shards_admitted; the first round made one, the
// guarantee change another: phi_alpha is an input of admission too):
//   probes b1, b2, b3 ask 4 each, before any round includes them
//   (provisional phi_alpha / n requesting): b1 6 >= 4 UNBOUND, b2 3 -> 192,
//   b3 2 -> 128; a round: max-min of 6 over 4, 4, 4 = 2 each           (3)
//   b1 asks 4 again -> 128; a round: the request did not change      (3)
//   b3 finishes (finish-ack); a round: b1, b2 get 6 / 2 = 3           (4)
//   b1 asks 4 -> 192; b2 asks 1 -> 192 (the last round's 3)
//   a round: b2's 1 is below the fair 3 (UNBOUND), b1's bar is 6 - 1 = 5
//   >= 4: UNBOUND; b1 asks 4 -> UNBOUND                              (5)
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_mbuf.h>

#include <cstdio>
#include <string>
#include <vector>

#include "control/vm_pair.hpp"
#include "pipeline/stages.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/in_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

const char* kConfig = R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1}
tenants:
  - {vni: 100, guarantee_gbps: 3}
  - {vni: 200, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 2, tenant: 200, mac: "02:00:00:00:0a:02", ip: 192.168.0.2, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]], reply_path: [0]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.1, host: hB}
  - {name: b2, id: 12, tenant: 100, ip: 192.168.1.2, host: hB}
  - {name: b3, id: 13, tenant: 100, ip: 192.168.1.3, host: hB}
  - {name: c1, id: 21, tenant: 200, ip: 192.168.1.21, host: hB}
)";
constexpr uint32_t kHostB = 0x0a000002;  // 10.0.0.2

struct Rig : EdgeRig {
  using EdgeRig::EdgeRig;
  Nanos now = 1'000'000;

  // A frame queued for the pair (its queue goes from empty to backlogged),
  // then the worker's publish.
  void queue_frame(uint32_t p) {
    rte_mbuf* m = mbuf(Frame(100, 0), 0);
    if (m == nullptr) return;
    if (!s.sched.enqueue(p, 0, m, 100)) rte_pktmbuf_free(m);
    s.on_enqueued(p, now);
    pipeline::publish_tokens(s);
  }
  void round() {
    now += 32'000;
    e.control.token_round();
    pipeline::apply_tokens(s);
  }
  double assigned(uint32_t p) const { return s.share[p].assigned.load(); }
  // Fabric frames in; the edge's answers (type, pair, phi) out.
  std::vector<wire::Message> fabric(const std::vector<Frame>& in) {
    std::vector<rte_mbuf*> ms;
    for (const Frame& f : in) {
      rte_mbuf* m = mbuf(f, 1);
      if (m == nullptr) return {};
      ms.push_back(m);
    }
    pipeline::fabric_frames(s, s.cfg.fabric_port(), ms.data(), static_cast<uint16_t>(ms.size()), now);
    std::vector<wire::Message> out;
    for (rte_mbuf* m : fabric_tx()) {
      const std::span<const uint8_t> fr(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
      wire::FrameView v;
      wire::Message msg;
      if (wire::parse_frame(fr, v) == wire::WireError::ok && v.shim.next == wire::kNextControl &&
          wire::decode_message(fr.subspan(v.payload_offset, v.payload_len), msg) == wire::WireError::ok)
        out.push_back(msg);
      rte_pktmbuf_free(m);
    }
    return out;
  }
};

// A probe of remote VM `remote_id` to a1 asking `phi_wire` / 64 tokens.
Frame probe(uint32_t remote_id, uint32_t phi_wire) {
  return control(kHostB, route({0}), message(wire::MsgType::probe, remote_id << 16 | 1, phi_wire, {1}, 1), 100);
}
Frame finish(uint32_t remote_id) {
  return control(kHostB, route({0}), message(wire::MsgType::finish, remote_id << 16 | 1, 0, {1}, 1), 100);
}

// One response to one probe of remote_id, carrying want.
void expect_response(const std::vector<wire::Message>& got, uint32_t remote_id, uint32_t want, const char* when) {
  const bool ok = got.size() == 1 && got[0].type == wire::MsgType::response && got[0].pair_id == (remote_id << 16 | 1);
  ITEST_CHECK(ok && got[0].phi == want, "%s: %zu answers, phi %u, want one response with %u", when, got.size(),
              got.empty() ? 0u : got[0].phi, want);
}

void check_rounds() {
  Rig r(kConfig, "rounds");
  pipeline::EdgeState& s = r.s;
  const uint32_t b1 = r.pair(1, 11), b2 = r.pair(1, 12), b3 = r.pair(1, 13), c1 = r.pair(2, 21);
  ITEST_CHECK(b1 < 4 && b2 < 4 && b3 < 4 && c1 < 4, "pairs a1->b1..b3, a2->c1: %u %u %u %u", b1, b2, b3, c1);
  if (g_failures != 0) return;
  pipeline::Control& c = r.e.control;

  // ---- sender side ----
  r.queue_frame(b1);
  r.queue_frame(b2);
  r.round();
  ITEST_CHECK(c.vms_assigned == 1 && r.assigned(b1) == 1.5 && r.assigned(b2) == 1.5,
              "a1 with 2 active pairs: %llu VM assignments, phi_S %g %g (want 1, 1.5 1.5)",
              static_cast<unsigned long long>(c.vms_assigned), r.assigned(b1), r.assigned(b2));
  ITEST_CHECK(s.pairs[b1].assigned_token() == 1.5, "a1->b1 applied phi_S %g", s.pairs[b1].assigned_token());
  r.round();
  ITEST_CHECK(c.vms_assigned == 1 && r.assigned(b1) == 1.5, "round without changes: %llu VM assignments (want 1)",
              static_cast<unsigned long long>(c.vms_assigned));
  r.queue_frame(c1);
  r.round();
  ITEST_CHECK(c.vms_assigned == 2 && r.assigned(c1) == 2 && r.assigned(b1) == 1.5,
              "a2 joins: %llu VM assignments, phi_S c1 %g b1 %g (want 2, 2, 1.5)",
              static_cast<unsigned long long>(c.vms_assigned), r.assigned(c1), r.assigned(b1));
  r.queue_frame(b3);
  r.round();
  ITEST_CHECK(c.vms_assigned == 3 && r.assigned(b1) == 1 && r.assigned(b2) == 1 && r.assigned(b3) == 1,
              "a1 with 3: %llu VM assignments, phi_S %g %g %g (want 3, 1 1 1)",
              static_cast<unsigned long long>(c.vms_assigned), r.assigned(b1), r.assigned(b2), r.assigned(b3));
  s.mark_dirty(b1);
  pipeline::publish_tokens(s);
  r.round();
  ITEST_CHECK(c.vms_assigned == 3, "same inputs published again: %llu VM assignments (want 3)",
              static_cast<unsigned long long>(c.vms_assigned));
  ITEST_CHECK(c.set_guarantee(100, 6).empty(), "set_guarantee");
  r.round();
  ITEST_CHECK(c.vms_assigned == 4 && r.assigned(b1) == 2 && r.assigned(b3) == 2 && r.assigned(c1) == 2,
              "guarantee 6: %llu VM assignments, phi_S b1 %g b3 %g c1 %g (want 4, 2 2 2)",
              static_cast<unsigned long long>(c.vms_assigned), r.assigned(b1), r.assigned(b3), r.assigned(c1));
  ITEST_CHECK(s.pairs[b3].assigned_token() == 2, "a1->b3 applied phi_S %g", s.pairs[b3].assigned_token());

  // ---- receiver side ----
  const uint64_t passes = c.shards_admitted;
  ITEST_CHECK(passes == 2, "receiver passes before any probe: %llu (want 2: the first round, the guarantee)",
              static_cast<unsigned long long>(passes));
  expect_response(r.fabric({probe(11, 256)}), 11, kWireUnbound, "b1's first probe (provisional 6)");
  expect_response(r.fabric({probe(12, 256)}), 12, 192, "b2's first probe (provisional 3)");
  expect_response(r.fabric({probe(13, 256)}), 13, 128, "b3's first probe (provisional 2)");
  r.round();
  ITEST_CHECK(c.shards_admitted == 3, "a round after new slots: %llu receiver passes (want 3)",
              static_cast<unsigned long long>(c.shards_admitted));
  expect_response(r.fabric({probe(11, 256)}), 11, 128, "b1 after the round (2)");
  r.round();
  ITEST_CHECK(c.shards_admitted == 3, "the same request again: %llu receiver passes (want 3)",
              static_cast<unsigned long long>(c.shards_admitted));
  const std::vector<wire::Message> fin = r.fabric({finish(13)});
  ITEST_CHECK(fin.size() == 1 && fin[0].type == wire::MsgType::finish_ack, "b3's finish: %zu answers, want a finish-ack",
              fin.size());
  r.round();
  ITEST_CHECK(c.shards_admitted == 4, "after b3's finish: %llu receiver passes (want 4)",
              static_cast<unsigned long long>(c.shards_admitted));
  expect_response(r.fabric({probe(11, 256)}), 11, 192, "b1 after b3 left (3)");
  expect_response(r.fabric({probe(12, 64)}), 12, 192, "b2 asks 1 (answered with the last round's 3)");
  r.round();
  ITEST_CHECK(c.shards_admitted == 5, "after b2's new request: %llu receiver passes (want 5)",
              static_cast<unsigned long long>(c.shards_admitted));
  expect_response(r.fabric({probe(11, 256)}), 11, kWireUnbound, "b1 once b2 asks 1 (bar 5 >= 4)");
}

}  // namespace

int main(int argc, char** argv) {
  return run_in_process(argc, argv, "test_ufab_edge_token_rounds", check_rounds,
                        "PASS: Alg. 1 rounds recompute only changed VMs (4 assignments over 7 rounds) and shards "
                        "(5 passes), with the hand-computed phi_S and phi_D");
}
