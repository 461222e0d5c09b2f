// VM frames that bypass the worker's queues (params.sched_bypass,
// HierScheduler::try_bypass, pipeline/vm_rx.cpp; docs/design.md §16), in
// process on a real Edge (one lcore, no ports started; the fabric port's TX
// buffer goes to an rte_ring the test reads). a1 (tenant 100, 1 Gb/s, B_u
// 1 Gb/s) sends to b1 and b2; window gating is on.
//  1. a1->b1's first frame: the pair is selecting, so the frame is queued
//     (nothing bypasses); after a token round, the pair's poll (it joins its
//     one path) and a dequeue, it leaves with a probe.
//  2. One burst b2, b1, b1: b2 is selecting (window 0: queued, blocked, not
//     eligible); both b1 frames leave on arrival, in order, before any
//     dequeue: bypassed 2, queued 1.
//  3. b1 is sent up to its window: of a burst of fit + 2 frames (fit: what
//     its window still takes, from the scheduler's window and in-flight
//     bytes), fit bypass and 2 are queued behind the window, in order.
//  4. The same as 2 with params.sched_bypass: false: nothing leaves until
//     the dequeue, and then b1's two frames do.
//  5. With params.window_gating: false (bench edge's setting: every window
//     open) the selecting pair's first frame leaves at once (bypassed 1,
//     queued 0), and the pair still joins at its poll with its queue empty:
//     the arrival is its demand (VmPair::on_data_arrived), not the queue.
//  6. Still without gating: over 17 MB to the pair between two polls all
//     leave at once; the scheduler's in-flight count stays bounded
//     (pipeline::kOpenWindowClear), so the open window is never reached.
//  7. IPv6 frames (pipeline/vm_ipv6.cpp) the same way: a1 (fd00::a:1)
//     to b1 (fd00::b:1) and b2: the selecting pair's first frame waits;
//     after b1 joins, one burst b2, b1, b1 (IPv6) lets b1's two frames go
//     on arrival, in order, and queues b2's; with sched_bypass off all three
//     wait for the dequeue.
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
#include "tests/integration/in_process.hpp"
#include "tests/integration/ipv6_frames.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

std::string config(bool bypass, bool gating) {
  return one_vm_config(std::string("unit_bw_gbps: 1, flows_per_pair: 1, sched_bypass: ") + (bypass ? "true" : "false") +
                           ", window_gating: " + (gating ? "true" : "false"),
                       2);
}
constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80101, kB2 = 0xc0a80102;

// What left on the fabric: data frames by their inner UDP source port (the
// test's sequence number), and how many control messages.
struct Out {
  std::vector<uint16_t> data;
  size_t control = 0;
};

// Ethernet/IPv6/UDP from a1 (fd00::a:1) to b<dst> (fd00::b:<dst>), UDP source port `sport`.
Frame vm_frame6(uint8_t dst, uint16_t sport, size_t payload) {
  const auto addr = [](uint8_t vm, uint8_t last) { return Bytes{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, vm, 0, last}; };
  const size_t udp = 8 + payload;
  Bytes u = {uint8_t(sport >> 8), uint8_t(sport), 0, 9, uint8_t(udp >> 8), uint8_t(udp), 0, 0};
  for (size_t i = 0; i < payload; ++i) u.push_back(static_cast<uint8_t>(sport + i * 13));
  return ip6_frame({2, 0, 0, 0, 0xb, dst}, {2, 0, 0, 0, 0xa, 1}, addr(0xa, 1), addr(0xb, dst), 17, 64, u);
}

struct Rig : EdgeRig {
  using EdgeRig::EdgeRig;
  Nanos now = 1'000'000;

  // One burst from a1's port: frames to dst[i] with UDP source port seq[i].
  void burst(const std::vector<uint32_t>& dst, const std::vector<uint16_t>& seq, size_t payload) {
    std::vector<rte_mbuf*> ms;
    for (size_t i = 0; i < dst.size(); ++i) {
      rte_mbuf* m = mbuf(vm_frame(kA1, dst[i], seq[i], payload, static_cast<uint8_t>(seq[i])), 0);
      if (m == nullptr) return;
      ms.push_back(m);
    }
    pipeline::vm_frames(s, 0, ms.data(), static_cast<uint16_t>(ms.size()), now);
  }
  // The same with IPv6 frames from fd00::a:1 to fd00::b:<dst[i]>.
  void burst6(const std::vector<uint8_t>& dst, const std::vector<uint16_t>& seq, size_t payload) {
    std::vector<rte_mbuf*> ms;
    for (size_t i = 0; i < dst.size(); ++i) {
      rte_mbuf* m = mbuf(vm_frame6(dst[i], seq[i], payload), 0);
      if (m == nullptr) return;
      ms.push_back(m);
    }
    pipeline::vm_frames(s, 0, ms.data(), static_cast<uint16_t>(ms.size()), now);
  }
  Out drain() {
    Out o;
    for (rte_mbuf* m : fabric_tx()) {
      const std::span<const uint8_t> fr(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
      wire::FrameView v;
      if (wire::parse_frame(fr, v) == wire::WireError::ok) {
        if (v.shim.next == wire::kNextControl) {
          ++o.control;
        } else if (v.payload_len >= 14 + 40 + 8) {  // the inner Ethernet/IPv4 or IPv6/UDP: its source port
          const uint8_t* inner = fr.data() + v.payload_offset;
          const uint8_t* udp = inner + 14 + (inner[12] == 0x86 && inner[13] == 0xdd ? 40 : 20);
          o.data.push_back(static_cast<uint16_t>(udp[0] << 8 | udp[1]));
        }
      }
      rte_pktmbuf_free(m);
    }
    return o;
  }
  // The worker's tick as ufab-edge runs it: inputs out, a round, phi_S in, the due pairs.
  void tick() {
    now += 32'000;
    pipeline::publish_tokens(s);
    e.control.token_round();
    pipeline::apply_tokens(s);
    pipeline::poll_pairs(s, now);
  }
};

// Steps 1 and 2 (bypass on) or 4 (off); then, with bypass on, step 3.
// Without window gating, step 1 only (5).
void run(bool bypass, bool gating = true) {
  const std::string cfg_text = config(bypass, gating);
  Rig r(cfg_text, "bypass" + std::to_string(bypass) + std::to_string(gating));
  pipeline::EdgeState& s = r.s;
  const uint32_t b1 = r.pair(1, 11), b2 = r.pair(1, 12);
  const char* mode = !gating ? "bypass on, no window gating" : bypass ? "bypass on" : "bypass off";
  ITEST_CHECK(b1 < 2 && b2 < 2, "%s: pairs a1->b1 %u, a1->b2 %u", mode, b1, b2);
  if (g_failures != 0) return;

  // 1. A selecting pair's first frame waits in its queue (window 0), or
  //    without gating leaves at once (step 5); either way the pair joins.
  r.burst({kB1}, {1}, 100);
  const uint64_t want_bypassed = gating ? 0 : 1, want_queued = gating ? 1 : 0;
  ITEST_CHECK(s.stats.bypassed == want_bypassed && s.queued() == want_queued,
              "%s, step 1: bypassed %lu queued %lu, want %lu and %lu", mode,
              static_cast<unsigned long>(s.stats.bypassed), static_cast<unsigned long>(s.queued()),
              static_cast<unsigned long>(want_bypassed), static_cast<unsigned long>(want_queued));
  Out o = r.drain();
  const size_t early = o.data.size();  // out before the tick
  r.tick();
  ITEST_CHECK(s.pairs[b1].state() == VmPair::State::active && s.sched.window(b1) > 0,
              "%s, step 1: a1->b1 joined with a window (state %d, window %lu)", mode,
              static_cast<int>(s.pairs[b1].state()), static_cast<unsigned long>(s.sched.window(b1)));
  pipeline::sched_tx(s, r.now);
  Out after = r.drain();
  o.data.insert(o.data.end(), after.data.begin(), after.data.end());
  o.control += after.control;
  ITEST_CHECK(o.data == std::vector<uint16_t>{1} && early == want_bypassed && o.control >= 1,
              "%s, step 1: %zu data frames (%zu before the tick), %zu control", mode, o.data.size(), early, o.control);
  if (!gating) {
    // 6. Without gating the window never holds the pair, however long
    //    between its polls: 12,000 frames of ~1.5 KB (over 17 MB, no tick)
    //    all leave at once, and the scheduler's in-flight count stays under
    //    kOpenWindowClear plus one frame (it grew to the whole 17 MB before,
    //    and at ~4 GB the pair was held until its next poll).
    const uint64_t before = s.stats.bypassed;
    size_t out = 0;
    for (uint16_t b = 0; b < 375; ++b) {
      r.burst(std::vector<uint32_t>(32, kB1), std::vector<uint16_t>(32, static_cast<uint16_t>(1000 + b)), 1400);
      out += r.drain().data.size();
    }
    const uint64_t frame = vm_frame(kA1, kB1, 0, 1400, 0).size() + s.encap_bytes(b1, s.pairs[b1].active_path());
    ITEST_CHECK(s.stats.bypassed - before == 12000 && out == 12000 && s.queued() == 0 &&
                    s.sched.inflight(b1) < pipeline::kOpenWindowClear + frame,
                "%s, step 6: bypassed %lu, out %zu (want 12000 each), queued %lu, in flight %lu (want < %u + %lu)",
                mode, static_cast<unsigned long>(s.stats.bypassed - before), out,
                static_cast<unsigned long>(s.queued()), static_cast<unsigned long>(s.sched.inflight(b1)),
                pipeline::kOpenWindowClear, static_cast<unsigned long>(frame));
    return;
  }

  // 2. b2 (selecting, window 0) queues; b1's two frames leave on arrival, or wait for the dequeue.
  r.burst({kB2, kB1, kB1}, {20, 2, 3}, 100);
  o = r.drain();
  if (bypass) {
    ITEST_CHECK(s.stats.bypassed == 2 && s.queued() == 1 && o.data == (std::vector<uint16_t>{2, 3}),
                "step 2: bypassed %lu, queued %lu, %zu data frames out before any dequeue; want 2, 1, [2 3]",
                static_cast<unsigned long>(s.stats.bypassed), static_cast<unsigned long>(s.queued()), o.data.size());
  } else {
    ITEST_CHECK(s.stats.bypassed == 0 && s.queued() == 3 && o.data.empty(),
                "step 4: bypassed %lu, queued %lu, %zu data frames out before the dequeue; want 0, 3, none",
                static_cast<unsigned long>(s.stats.bypassed), static_cast<unsigned long>(s.queued()), o.data.size());
    pipeline::sched_tx(s, r.now);
    o = r.drain();
    ITEST_CHECK(o.data == (std::vector<uint16_t>{2, 3}) && s.queued() == 1,
                "step 4: after the dequeue %zu data frames (want b1's 2, 3), queued %lu (want b2's 1)", o.data.size(),
                static_cast<unsigned long>(s.queued()));
    return;
  }

  // 3. Up to b1's window: `fit` more frames of len bytes (as the scheduler counts them) bypass, 2 wait.
  const uint64_t window = s.sched.window(b1), inflight = s.sched.inflight(b1);
  const uint64_t len = vm_frame(kA1, kB1, 0, 1400, 0).size() + s.encap_bytes(b1, s.pairs[b1].active_path());
  const size_t fit = inflight >= window ? 0 : static_cast<size_t>((window - inflight) / len);
  ITEST_CHECK(fit >= 1 && fit + 2 <= 60, "step 3: window %lu, in flight %lu, %lu-byte frames: %zu fit",
              static_cast<unsigned long>(window), static_cast<unsigned long>(inflight), static_cast<unsigned long>(len),
              fit);
  if (g_failures != 0) return;
  std::vector<uint32_t> dst(fit + 2, kB1);
  std::vector<uint16_t> seq;
  for (size_t i = 0; i < fit + 2; ++i) seq.push_back(static_cast<uint16_t>(100 + i));
  r.burst(dst, seq, 1400);
  o = r.drain();
  const std::vector<uint16_t> want(seq.begin(), seq.begin() + static_cast<long>(fit));
  ITEST_CHECK(s.stats.bypassed == 2 + fit && s.queued() == 3 && o.data == want,
              "step 3: bypassed %lu (want %zu), queued %lu (want 3), %zu frames out (want the first %zu, in order)",
              static_cast<unsigned long>(s.stats.bypassed), 2 + fit, static_cast<unsigned long>(s.queued()),
              o.data.size(), fit);
  ITEST_CHECK(s.sched.pair_state(b1) == PairState::kBlocked, "step 3: b1 blocked behind its window (state %d)",
              static_cast<int>(s.sched.pair_state(b1)));
  // Its acks open the window: the two queued frames leave in order, by the dequeue.
  s.sched.on_acked(b1, s.sched.inflight(b1));
  pipeline::sched_tx(s, r.now);
  o = r.drain();
  ITEST_CHECK(o.data == (std::vector<uint16_t>{static_cast<uint16_t>(100 + fit), static_cast<uint16_t>(101 + fit)}),
              "step 3: after the acks %zu data frames, want b1's last two in order", o.data.size());
}

// Step 7: IPv6 frames bypass as IPv4 frames do (bypass on), or wait (off).
void run6(bool bypass) {
  Rig r(config(bypass, true), std::string("bypass6") + (bypass ? "on" : "off"));
  pipeline::EdgeState& s = r.s;
  const uint32_t b1 = r.pair(1, 11);
  const char* mode = bypass ? "IPv6, bypass on" : "IPv6, bypass off";
  r.burst6({1}, {1}, 100);  // the selecting pair's first frame waits for its window
  ITEST_CHECK(s.stats.bypassed == 0 && s.queued() == 1 && r.drain().data.empty(), "%s: first frame bypassed %lu queued %lu",
              mode, static_cast<unsigned long>(s.stats.bypassed), static_cast<unsigned long>(s.queued()));
  r.tick();
  pipeline::sched_tx(s, r.now);
  Out o = r.drain();
  ITEST_CHECK(s.pairs[b1].state() == VmPair::State::active && o.data == std::vector<uint16_t>{1} && s.queued() == 0,
              "%s: a1->b1 joined (state %d) and its first frame left after the tick (%zu data frames)", mode,
              static_cast<int>(s.pairs[b1].state()), o.data.size());
  r.burst6({2, 1, 1}, {20, 2, 3}, 100);
  o = r.drain();
  const uint64_t want_bypassed = bypass ? 2 : 0, want_queued = bypass ? 1 : 3;
  const std::vector<uint16_t> want_out = bypass ? std::vector<uint16_t>{2, 3} : std::vector<uint16_t>{};
  ITEST_CHECK(s.stats.bypassed == want_bypassed && s.queued() == want_queued && o.data == want_out,
              "%s: bypassed %lu (want %lu), queued %lu (want %lu), %zu data frames out before the dequeue", mode,
              static_cast<unsigned long>(s.stats.bypassed), static_cast<unsigned long>(want_bypassed),
              static_cast<unsigned long>(s.queued()), static_cast<unsigned long>(want_queued), o.data.size());
  if (!bypass) {
    pipeline::sched_tx(s, r.now);
    o = r.drain();
    ITEST_CHECK(o.data == (std::vector<uint16_t>{2, 3}) && s.queued() == 1,
                "%s: after the dequeue %zu data frames (want b1's 2, 3), queued %lu (want b2's 1)", mode, o.data.size(),
                static_cast<unsigned long>(s.queued()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  return run_in_process(
      argc, argv, "test_ufab_edge_bypass",
      [] {
        run(true);
        run(false);
        run(true, false);
        run6(true);
        run6(false);
      },
      "PASS: frames (IPv4 and IPv6) bypass the queues only for a pair whose window is open with nothing eligible, in order; a pair "
      "joins for a frame that left at once; with sched_bypass off they wait for the dequeue");
}
