// ufab-edge on random bad input (issue 4 §6, "never a crash, a hang or
// silent corruption"), in process on a real Edge: local VMs a1 and a2
// (port 0) with pairs to b1..b3 on host hB (two paths). For each of four
// fixed seeds a generator feeds 60K frames in bursts to both sides: valid
// ones (a1's data over IPv4 and IPv6, some of it above the VM MTU, ARP requests and neighbour
// solicitations for the remote VMs, the same to a2, a local VM of its
// tenant (vm_local.cpp), tunnel data for a1 with IPv4 or IPv6 inside, probes and
// finishes from hB's VMs, and the
// answers to the probes and finishes a1's pairs actually sent, with random
// telemetry stamped in every hop, extremes included), frames on the wrong
// side, and mutations of them (bit flips, random bytes, truncation, random
// tails, extreme 16-bit fields, a second segment), while the worker's own
// steps run between bursts with the clock moving on: the scheduler's
// dequeue, the pairs' polls, Alg. 1 rounds.
//
// After every burst:
//  - rx + generated == tx + queued + dropped + absorbed, exactly (frames
//    handed to the test's rings count as sent);
//  - every frame to the fabric parses as a uFAB frame from 10.0.0.1 (and a
//    control frame's message decodes); every frame to the VM port is for
//    a1 or a2: IPv4 or IPv6 to its address, an ARP reply or an
//    advertisement;
//  - every pair's window, rate and tokens are numbers (no NaN, no negative
//    window).
// Then valid input only, for as long as a probe lost to the garbage may
// take to time out and 100 base RTTs more: a1->b1 sends again, the backlogs
// drain, and every pair is sending with a finite window or idle and empty.
// This found two ways random telemetry held a pair back for good
// (HierScheduler::window_bytes): a window below one byte became a scheduler
// window of 0, and +inf (links of unknown capacity) became 0 too. Under
// -Db_sanitize=address,undefined the same run checks every access.
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pipeline/stages.hpp"
#include "probe/reflect.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/in_process.hpp"
#include "tests/integration/ipv6_frames.hpp"
#include "tests/mutate_frame.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

const char* kConfig = R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1, queue_capacity: 64, flows_per_pair: 2}
tenants:
  - {vni: 100, guarantee_gbps: 3}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, ip6: "fd00::a:1", port: 0}
  - {name: a2, id: 2, tenant: 100, mac: "02:00:00:00:0a:02", ip: 192.168.0.2, ip6: "fd00::a:2", port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1, 2], [3, 4]], reply_path: [0]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, mac: "02:00:00:00:0b:01", ip: 192.168.1.1, ip6: "fd00::b:1", host: hB}
  - {name: b2, id: 12, tenant: 100, mac: "02:00:00:00:0b:02", ip: 192.168.1.2, ip6: "fd00::b:2", host: hB}
  - {name: b3, id: 13, tenant: 100, ip: 192.168.1.3, ip6: "fd00::b:3", host: hB}
)";
const Bytes kA1Mac = {2, 0, 0, 0, 0x0a, 1}, kA2Mac = {2, 0, 0, 0, 0x0a, 2};
const Bytes kA1Ip6 = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0, 1};
const Bytes kA2Ip6 = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0, 2};
Bytes b_ip6(uint8_t i) { return {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b, 0, i}; }
Bytes b_mac(uint8_t i) { return {2, 0, 0, 0, 0x0b, i}; }
constexpr uint32_t kA1 = 0xc0a80001, kA2 = 0xc0a80002, kHostB = 0x0a000002, kEdgeIp = 0x0a000001;
constexpr uint32_t kB[3] = {0xc0a80101, 0xc0a80102, 0xc0a80103};
constexpr Nanos kRtt = 100'000;
constexpr int kBursts = 2000, kBurst = 30;  // 60K frames

struct Fuzz : EdgeRig {
  explicit Fuzz(uint64_t seed)
      : EdgeRig(kConfig, "fuzz" + std::to_string(seed)),
        vm_out(rte_ring_create(("fuzz_vm_out" + std::to_string(seed)).c_str(), 1024, SOCKET_ID_ANY, RING_F_SC_DEQ)),
        rng(seed) {
    if (vm_out != nullptr) s.tx[0].use_ring(vm_out);
  }
  ~Fuzz() {
    s.tx[0].flush();
    free_vm_tx();
    rte_ring_free(vm_out);
  }
  Fuzz(const Fuzz&) = delete;
  Fuzz& operator=(const Fuzz&) = delete;

  rte_ring* vm_out;
  std::mt19937_64 rng;
  Nanos now = 1'000'000;
  // The probes and finishes a1's pairs sent, not answered yet.
  std::vector<wire::Message> sent_msgs;
  uint64_t control_out = 0, vm_frames_out = 0, data_sent_clean = 0;
  bool failed_output = false;

  uint64_t below(uint64_t n) { return rng() % n; }

  // Valid input, one of each kind the edge handles: IPv4 and IPv6 data,
  // ARP requests and neighbour solicitations (b3 has no MAC: unanswered),
  // to a remote VM or (one in four) to a2.
  Bytes udp(uint16_t sport, size_t n) {
    Bytes u = {static_cast<uint8_t>(sport >> 8), static_cast<uint8_t>(sport), 0x13, 0x89,
               static_cast<uint8_t>((n + 8) >> 8), static_cast<uint8_t>(n + 8), 0, 0};
    for (size_t i = 0; i < n; ++i) u.push_back(static_cast<uint8_t>(rng()));
    return u;
  }
  Frame valid_vm() {
    const auto b = static_cast<uint8_t>(1 + below(3));
    const bool local = below(4) == 0;  // to a2
    const Bytes mac = local ? kA2Mac : b_mac(b), ip6 = local ? kA2Ip6 : b_ip6(b);
    switch (below(8)) {
      case 0: {  // who-has 192.168.1.b (or 192.168.0.2) tell 192.168.0.1
        Frame f = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0x0a, 1, 0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1,
                   2, 0, 0, 0, 0x0a, 1, 192, 168, 0, 1, 0, 0, 0, 0, 0, 0, 192, 168, 1, b};
        if (local) f[40] = 0, f[41] = 2;
        return f;
      }
      case 1: return solicitation(kA1Mac, kA1Ip6, ip6, below(2) == 0);
      case 2:
      case 3:
        return ip6_frame(mac, kA1Mac, kA1Ip6, ip6, 17, 64, udp(static_cast<uint16_t>(1000 + below(8)), 10 + below(1600)));
      default:  // up to 1659 bytes: some above the VM MTU (1518 + 14), answered with an ICMP too-big
        return vm_frame(kA1, local ? kA2 : kB[b - 1], static_cast<uint16_t>(1000 + below(8)), 18 + below(1600),
                        static_cast<uint8_t>(rng()));
    }
  }
  Frame valid_fabric() {
    const uint32_t remote = 11 + static_cast<uint32_t>(below(3));
    const uint32_t pair = remote << 16 | 1;  // b -> a1
    switch (below(4)) {
      case 0:
        return control(kHostB, route({0}), message(wire::MsgType::probe, pair, static_cast<uint32_t>(rng()), {1, 2}, 2),
                       100);
      case 1:
        return control(kHostB, route({0}), message(wire::MsgType::finish, pair, 0, {1, 2}, 2), 100);
      case 2: {  // IPv6 inside
        const auto b = static_cast<uint8_t>(remote - 10);
        const Frame inner = ip6_frame(kA1Mac, b_mac(b), b_ip6(b), kA1Ip6, 17, 64, udp(2000, 10 + below(1400)));
        return ufab_frame(kHostB, 100, pair, route({0}), wire::kNextData, inner);
      }
      default: {
        const Frame inner = vm_frame(kB[remote - 11], kA1, 2000, 18 + below(1400), static_cast<uint8_t>(rng()));
        return ufab_frame(kHostB, 100, pair, route({0}), wire::kNextData, std::vector<uint8_t>(inner));
      }
    }
  }
  // Random telemetry in every hop, extremes included (a link of capacity
  // code 0, an empty or full queue, tx above capacity, W_l or Phi_l 0).
  uint32_t field(uint32_t max) {
    switch (below(4)) {
      case 0: return 0;
      case 1: return max;
      default: return static_cast<uint32_t>(below(uint64_t{max} + 1));
    }
  }

  // f on `port` as poll_port receives it (rx counted); sometimes in two
  // segments (a chained mbuf, which the edge must refuse as malformed).
  rte_mbuf* chain(const Frame& f, uint16_t port) {
    rte_mbuf* m = mbuf(f, port);
    if (m == nullptr || below(50) != 0 || f.size() < 2) return m;
    rte_mbuf* tail = mbuf(Frame(f.end() - 1, f.end()), port);
    if (tail == nullptr) return m;
    rte_pktmbuf_trim(m, 1);
    if (rte_pktmbuf_chain(m, tail) != 0) rte_pktmbuf_free(tail);
    return m;
  }

  void deliver(std::vector<rte_mbuf*>& ms, uint16_t port) {
    if (ms.empty()) return;
    s.stats.ports[port].rx += ms.size();
    for (rte_mbuf* m : ms) s.stats.ports[port].rx_bytes += rte_pktmbuf_pkt_len(m);
    if (port == 1)
      pipeline::fabric_frames(s, s.cfg.fabric_port(), ms.data(), static_cast<uint16_t>(ms.size()), now);
    else
      pipeline::vm_frames(s, port, ms.data(), static_cast<uint16_t>(ms.size()), now);
    ms.clear();
  }

  // The worker's own steps between bursts, as worker.cpp runs them.
  void worker_steps() {
    pipeline::sched_tx(s, now);
    pipeline::poll_pairs(s, now);
    pipeline::publish_tokens(s);
    e.control.token_round();
    pipeline::apply_tokens(s);
  }

  // The answer to message m as hB's side sends it: every hop stamped, with
  // random telemetry (garbled) or as 10G links that are idle and carry no
  // other pair.
  Frame answer(wire::Message m, bool garbled) {
    for (size_t h = 0; h < std::min<size_t>(m.n_hop, wire::kMaxHops); ++h) {
      const auto port = static_cast<uint8_t>(h);
      m.hop[h] = garbled ? wire::HopRecord{field(0xffffffffu), field(0xffffffffu), field(0xffffff), field(0xffffff),
                                           static_cast<uint8_t>(field(15)), wire::kHopStamped, port}
                         : wire::HopRecord{m.hop[h].w, 0, 0, 0, 4, wire::kHopStamped, port};
    }
    m.hop_index = m.n_hop;
    return control(kHostB, route({0}), wire::reflect(m, kWireUnbound), 100);
  }
  // One of the messages a1's pairs sent, taken out of sent_msgs.
  wire::Message take_sent(size_t k) {
    const wire::Message m = sent_msgs[k];
    sent_msgs[k] = sent_msgs.back();
    sent_msgs.pop_back();
    return m;
  }

  // What left on either side, checked; the control messages a1's pairs
  // sent into sent_msgs. clean: data counts in data_sent_clean.
  void collect(bool clean) {
    for (rte_mbuf* m : fabric_tx()) {
      const std::span<const uint8_t> fr(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
      wire::FrameView v;
      wire::Message msg;
      const bool ok = m->nb_segs == 1 && wire::parse_frame(fr, v) == wire::WireError::ok && v.outer.src_ip == kEdgeIp;
      if (!ok) {
        failed_output = true;
      } else if (v.shim.next == wire::kNextControl) {
        ++control_out;
        if (wire::decode_message(fr.subspan(v.payload_offset, v.payload_len), msg) != wire::WireError::ok) {
          failed_output = true;
        } else if ((msg.type == wire::MsgType::probe || msg.type == wire::MsgType::finish) &&
                   sent_msgs.size() < 4096) {
          sent_msgs.push_back(msg);
        }
      } else if (v.shim.pair_id >> 16 == 1) {
        if (clean) ++data_sent_clean;
      }
      rte_pktmbuf_free(m);
    }
    s.tx[0].flush();
    void* obj = nullptr;
    while (rte_ring_dequeue(vm_out, &obj) == 0) {
      rte_mbuf* m = static_cast<rte_mbuf*>(obj);
      ++vm_frames_out;
      if (!for_local_vm(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m))) failed_output = true;
      rte_pktmbuf_free(m);
    }
  }
  // A frame to the VM port is for a1 or a2: IPv4 to 192.168.0.1 or .2,
  // IPv6 to fd00::a:1 or fd00::a:2, a neighbour advertisement to a1's or
  // a2's MAC, or an ARP reply to 192.168.0.1 or .2 (proxy ARP).
  static bool for_local_vm(const uint8_t* d, uint32_t len) {
    const auto ip4_at = [&](uint32_t at) {
      const uint32_t a = static_cast<uint32_t>(d[at]) << 24 | d[at + 1] << 16 | d[at + 2] << 8 | d[at + 3];
      return a == kA1 || a == kA2;
    };
    const auto is = [&](const Bytes& b, uint32_t at) { return std::equal(b.begin(), b.end(), d + at); };
    if (len >= 34 && d[12] == 0x08 && d[13] == 0x00) return ip4_at(30);
    if (len >= 54 && d[12] == 0x86 && d[13] == 0xdd) {
      // An advertisement goes to the solicitation's source address, which
      // may be any (a vNIC's link-local one): to the VM's MAC, then.
      const bool advertisement = len >= 55 && d[20] == 58 && d[54] == 136;
      return is(kA1Ip6, 38) || is(kA2Ip6, 38) || (advertisement && (is(kA1Mac, 0) || is(kA2Mac, 0)));
    }
    if (len >= 42 && d[12] == 0x08 && d[13] == 0x06) return d[21] == 2 && ip4_at(38);
    return false;
  }
  void free_vm_tx() {
    void* obj = nullptr;
    while (vm_out != nullptr && rte_ring_dequeue(vm_out, &obj) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
  }

  bool conserved() const {
    const pipeline::EdgeStats& st = s.stats;
    return st.rx() + st.generated == st.tx() + st.handed_off + s.queued() + st.dropped() + st.absorbed;
  }
  // Every pair's state is made of numbers. A window may be +inf: a path
  // whose links all report an unknown capacity sets no bound
  // (control/window.hpp); the scheduler holds it as kMaxWindow.
  bool sane_pairs() const {
    for (uint32_t p = 0; p < s.pairs.size(); ++p) {
      const VmPair& vp = s.pairs[p];
      const double w = vp.window(now);
      if (std::isnan(w) || w < 0 || std::isnan(vp.rate_Bps()) || std::isnan(vp.token()) ||
          std::isnan(vp.assigned_token()) || std::isnan(vp.admitted_token()))
        return false;
    }
    return true;
  }
};

void run(uint64_t seed) {
  Fuzz f(seed);
  pipeline::EdgeState& s = f.s;
  ITEST_CHECK(f.vm_out != nullptr && s.pairs.size() == 6, "rig: VM ring %p, %zu pairs", static_cast<void*>(f.vm_out),
              s.pairs.size());
  if (g_failures != 0) return;
  int bad_conservation = 0, bad_pairs = 0;
  for (int b = 0; b < kBursts; ++b) {
    std::vector<rte_mbuf*> vm, fab;
    for (int i = 0; i < kBurst; ++i) {
      const uint16_t port = static_cast<uint16_t>(f.below(2));
      Frame fr;
      if (port == 1 && !f.sent_msgs.empty() && f.below(2) == 0) {
        fr = f.answer(f.take_sent(f.below(f.sent_msgs.size())), /*garbled=*/true);
      } else {
        fr = port == 0 ? f.valid_vm() : f.valid_fabric();
      }
      if (f.below(8) == 0) fr = port == 0 ? f.valid_fabric() : f.valid_vm();  // the wrong side: spoofing, not_ufab
      if (f.below(10) < 7) fr = testing::mutate_frame(std::move(fr), f.rng);
      rte_mbuf* m = f.chain(fr, port);
      if (m == nullptr) {
        ITEST_CHECK(false, "burst %d: mempool empty (%u free)", b, rte_mempool_avail_count(s.pool));
        return;
      }
      (port == 0 ? vm : fab).push_back(m);
    }
    f.deliver(vm, 0);
    f.deliver(fab, 1);
    f.now += static_cast<Nanos>(f.below(2 * kRtt));
    f.worker_steps();
    f.collect(/*clean=*/false);
    if (!f.conserved()) ++bad_conservation;
    if (!f.sane_pairs()) ++bad_pairs;
  }
  const pipeline::EdgeStats& st = s.stats;
  ITEST_CHECK(bad_conservation == 0, "rx + generated != tx + queued + dropped + absorbed after %d of %d bursts",
              bad_conservation, kBursts);
  ITEST_CHECK(bad_pairs == 0, "a pair's window, rate or token was not a number after %d of %d bursts", bad_pairs,
              kBursts);
  ITEST_CHECK(!f.failed_output, "a frame the edge sent was not a well-formed uFAB frame (fabric) or a frame "
                                "for a1 (VM port)");
  // The run reached every kind of handling, good and bad.
  using pipeline::Drop;
  for (const Drop d : {Drop::spoofed, Drop::malformed, Drop::not_ufab, Drop::not_ipv4, Drop::unknown_pair,
                       Drop::unknown_vm, Drop::arp_unanswered, Drop::nd_unanswered, Drop::too_big})
    ITEST_CHECK(st.dropped(d) > 0, "no frame was dropped as %s", std::string(pipeline::to_string(d)).c_str());
  ITEST_CHECK(st.arp_replied > 0 && st.nd_replied > 0 && st.local_delivered > 0 && st.ptb_sent > 0,
              "ARP replies %llu, neighbour advertisements %llu, frames to a2 %llu, too-big answers %llu: want each > 0",
              static_cast<unsigned long long>(st.arp_replied), static_cast<unsigned long long>(st.nd_replied),
              static_cast<unsigned long long>(st.local_delivered), static_cast<unsigned long long>(st.ptb_sent));
  ITEST_CHECK(st.encapsulated > 0 && st.decapsulated > 0 && st.reflected > 0 && st.absorbed > 0 &&
                  f.control_out > 0 && f.vm_frames_out > 0,
              "encap %llu, decap %llu, reflected %llu, absorbed %llu, control frames out %llu, VM frames out %llu: "
              "want each > 0",
              static_cast<unsigned long long>(st.encapsulated), static_cast<unsigned long long>(st.decapsulated),
              static_cast<unsigned long long>(st.reflected), static_cast<unsigned long long>(st.absorbed),
              static_cast<unsigned long long>(f.control_out), static_cast<unsigned long long>(f.vm_frames_out));

  // Valid input only, for as long as a probe lost to the garbage may take
  // to time out (probe_timeout_max_rtts, 1024 base RTTs) and 100 more: a
  // frame for a1->b1 every base RTT, every probe and finish answered with
  // sane telemetry (the ones sent during the garbage too). a1->b1 sends
  // again, the backlogs the garbage left drain, and every window is finite
  // again (telemetry with known capacities replaced what the garbage said).
  const uint64_t queued_before = s.queued();
  f.data_sent_clean = 0;
  for (int b = 0; b < 1024 + 100; ++b) {
    std::vector<rte_mbuf*> vm{f.mbuf(vm_frame(kA1, kB[0], 1000, 100, 1), 0)}, fab;
    while (!f.sent_msgs.empty()) fab.push_back(f.mbuf(f.answer(f.take_sent(0), /*garbled=*/false), 1));
    bool empty = vm[0] == nullptr;
    for (rte_mbuf* m : fab) empty = empty || m == nullptr;
    if (empty) {
      ITEST_CHECK(false, "clean phase: mempool empty (%u free)", rte_mempool_avail_count(s.pool));
      return;
    }
    f.deliver(fab, 1);
    f.deliver(vm, 0);
    f.now += kRtt;
    f.worker_steps();
    f.collect(/*clean=*/true);
  }
  ITEST_CHECK(f.data_sent_clean > 0 && f.conserved() && f.sane_pairs() && !f.failed_output,
              "after the garbage, a1->b1 sent %llu data frames in 1,124 base RTTs of valid input (want > 0)",
              static_cast<unsigned long long>(f.data_sent_clean));
  ITEST_CHECK(s.queued() <= 1, "%llu frames still queued after 1,124 base RTTs of valid input (%llu before)",
              static_cast<unsigned long long>(s.queued()), static_cast<unsigned long long>(queued_before));
  // Each pair is sending with a finite window (a1->b1 must be), or at rest
  // with nothing queued or in flight (the others, once drained).
  for (uint32_t p = 0; p < s.pairs.size(); ++p) {
    const VmPair& vp = s.pairs[p];
    const double w = vp.window(f.now);
    const bool sending = vp.state() == VmPair::State::active && std::isfinite(w) && w > 0;
    // a2's pairs have no valid input: still selecting their first path, or
    // idle after what mutated frames gave them.
    const bool a2s = p == f.pair(2, 11) || p == f.pair(2, 12) || p == f.pair(2, 13);
    const bool rest = vp.state() == VmPair::State::idle || (a2s && vp.state() == VmPair::State::selecting);
    const bool drained = rest && s.sched.backlog_bytes(p) == 0 && vp.inflight() == 0;
    ITEST_CHECK(sending || (drained && p != f.pair(1, 11)),
                "pair %u after 1,124 base RTTs of valid input: state %d, window %g, %llu B queued, %llu in flight", p,
                static_cast<int>(vp.state()), w, static_cast<unsigned long long>(s.sched.backlog_bytes(p)),
                static_cast<unsigned long long>(vp.inflight()));
  }
  std::printf("fuzz seed %llu: %d bursts of %d frames; rx %llu, dropped %llu (spoofed %llu, malformed %llu, not_ufab %llu, "
              "unknown_pair %llu, unknown_vm %llu, too_big %llu), encap %llu, decap %llu, reflected %llu, absorbed %llu, "
              "local %llu, ptb_sent %llu\n",
              static_cast<unsigned long long>(seed), kBursts, kBurst, static_cast<unsigned long long>(st.rx()),
              static_cast<unsigned long long>(st.dropped()),
              static_cast<unsigned long long>(st.dropped(Drop::spoofed)),
              static_cast<unsigned long long>(st.dropped(Drop::malformed)),
              static_cast<unsigned long long>(st.dropped(Drop::not_ufab)),
              static_cast<unsigned long long>(st.dropped(Drop::unknown_pair)),
              static_cast<unsigned long long>(st.dropped(Drop::unknown_vm)),
              static_cast<unsigned long long>(st.dropped(Drop::too_big)),
              static_cast<unsigned long long>(st.encapsulated), static_cast<unsigned long long>(st.decapsulated),
              static_cast<unsigned long long>(st.reflected), static_cast<unsigned long long>(st.absorbed),
              static_cast<unsigned long long>(st.local_delivered), static_cast<unsigned long long>(st.ptb_sent));
}

}  // namespace

int main(int argc, char** argv) {
  return run_in_process(
      argc, argv, "test_ufab_edge_fuzz",
      [] {
        for (const uint64_t seed : {20261129u, 1u, 2u, 3u}) run(seed);
      },
      "PASS: 4 x 60K random and mutated frames on both sides: every frame accounted for, every frame "
                        "out well formed, every pair's state numbers, and the pairs work again on valid input");
}
