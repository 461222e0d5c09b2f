// An uplink that loses its link (pipeline/uplinks.cpp), in process on a real
// Edge: port 0 the VM side, ports 1 and 2 the fabric (edge.fabric_port:
// [1, 2]), net_null ports started and stopped so that ethdev reports their
// links up and down, read by PortLinks' poll as on the control lcore.
// Host hB has path 0 on port 1 (route [5]) and path 1 on port 2 (route
// [6]); host hC one path, on port 2 (route [8]). A pair stays active for
// 1 s without data (params.idle_finish_ms), longer than the test: an idle
// pair leaves a drained path when it rejoins.
//
//  1. hB's path 1 drained by the operator; a1 -> b1's first frames: the
//     pair queries path 0 alone (a drained path is not queried while
//     another is not drained), joins it and its data leaves on port 1 with
//     route [5].
//  2. Path 1 undrained. Port 1's link goes down: uplink_down[1], one
//     failover; in the pair path 0 is drained, path 1 not; it queries path
//     1 (on port 2), moves there once answered (a migration, not for a
//     violation), and its next data leaves on port 2 with route [6].
//     Meanwhile hB's responses (its reply path [7] is on port 1) leave by
//     its path 1's route on port 2. The finish the pair starts on path 0 is
//     abandoned (path 0 unreachable): none leaves on port 1 while it is down.
//  3. A reload adds b2 on hB, and host hD (reply path on port 1) with d1,
//     while port 1 is down: a1 -> b2 starts with path 0 drained, and hD's
//     responses leave by its path 1 ([10], port 2).
//  4. Port 1 up: path 0 a candidate again in both pairs; a1 -> b1 stays on
//     path 1 (nothing made it leave); hB's and hD's responses by their
//     reply paths again.
//  5. The operator drains hB's path 1: a1 -> b1 moves back to path 0 and
//     sends a finish on path 1 (port 2, route [6]). Port 2 down (a second
//     failover): that finish, still unacked, is abandoned; hC's only path
//     drained, hB's path 1 still.
//     The operator's undrain of hB's path 1 while port 2 is down leaves it
//     drained in the pair. Port 2 up: hC's path usable again, hB's path 1
//     drained only while the operator keeps it (undrained at last).
//  6. rx + generated == tx + queued + dropped + absorbed throughout.
//  7. An edge with one uplink: its link down drains nothing (nowhere else
//     to go), no failover counted.
//  8. An uplink down when the edge starts: its paths drained, but no
//     failover counted until it has been up and goes down.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "control/vm_pair.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"
#include "pipeline/stages.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/in_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80101, kB2 = 0xc0a80102;
constexpr uint32_t kHostB = 0x0a000002, kHostD = 0x0a000004;

// A probe of the remote VM `from`'s pair to a1 (id 1), from host `host`.
Frame probe_to_a1(uint32_t host, uint32_t from) {
  return control(host, route({0}), message(wire::MsgType::probe, from << 16 | 1, wire::tokens_to_wire(1), {1}, 1), 100);
}

std::string config(bool with_b2) {
  std::string c = R"(edge: {fabric_port: [1, 2], ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {idle_finish_ms: 1000}
tenants:
  - {vni: 100, guarantee_gbps: 1}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
hosts:
  - name: hB
    ip: 10.0.0.2
    mac: "02:00:00:00:00:02"
    base_rtt_us: 100
    paths: [{labels: [5], port: 1}, {labels: [6], port: 2}]
    reply_path: {labels: [7], port: 1}
  - {name: hC, ip: 10.0.0.3, mac: "02:00:00:00:00:03", base_rtt_us: 100, paths: [{labels: [8], port: 2}]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.1, host: hB}
  - {name: c1, id: 21, tenant: 100, ip: 192.168.2.1, host: hC}
)";
  if (with_b2) {
    c += "  - {name: b2, id: 12, tenant: 100, ip: 192.168.1.2, host: hB}\n";
    c += "  - {name: d1, id: 31, tenant: 100, ip: 192.168.3.1, host: hD}\n";
    c.replace(c.find("remote_vms:"), 11,
              "  - {name: hD, ip: 10.0.0.4, mac: \"02:00:00:00:00:04\", base_rtt_us: 100, paths: [{labels: [9], port: 1}, "
              "{labels: [10], port: 2}], reply_path: {labels: [11], port: 1}}\nremote_vms:");
  }
  return c;
}

// What left on one fabric port: data frames (pair id, first label) and
// control messages (with their first label).
struct Out {
  std::vector<std::pair<uint32_t, uint16_t>> data;
  std::vector<std::pair<wire::Message, uint16_t>> control;
};
Out parse(const std::vector<Frame>& frames) {
  Out o;
  for (const Frame& fr : frames) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) != wire::WireError::ok) continue;
    const uint16_t label = v.route.n_labels != 0 ? v.route.label[0] : 0xffff;
    if (v.shim.next == wire::kNextData) {
      o.data.emplace_back(v.shim.pair_id, label);
    } else if (wire::Message m; wire::decode_message(std::span<const uint8_t>(fr).subspan(v.payload_offset, v.payload_len),
                                                    m) == wire::WireError::ok) {
      o.control.emplace_back(m, label);
    }
  }
  return o;
}

// hB's answer to a probe: its hop stamped as an idle 10G link.
Frame answer(wire::Message m) {
  for (size_t h = 0; h < m.n_hop && h < wire::kMaxHops; ++h)
    m.hop[h] = wire::HopRecord{m.hop[h].w, 0, 0, 0, 4, wire::kHopStamped, static_cast<uint8_t>(h)};
  m.hop_index = m.n_hop;
  return control(kHostB, route({0}), wire::reflect(m, kWireUnbound), 100);
}

void two_uplinks(rte_mempool* pool, const std::string& dir) {
  const std::string file = dir + "/edge.yaml";
  write_text(file, config(false));
  EdgeRig r(config(false), "upf", file);
  pipeline::Edge& e = r.e;
  pipeline::EdgeState& s = r.s;
  PortOut out0(s, 0, "upf_out0"), out2(s, 2, "upf_out2");
  for (uint16_t p : {uint16_t{1}, uint16_t{2}}) {
    dpdk::PortConfig pc;
    pc.link_wait_ms = 0;
    dpdk::setup_port(p, pool, pc);  // started: net_null reports its link up
    e.links.watch(p, false, "net_null" + std::to_string(p) + ", fabric");
  }
  Nanos now = 1'000'000'000;
  uint64_t sent = 0;
  Out on1, on2;
  size_t finishes1 = 0, finishes2 = 0;  // finishes that left on port 1 / 2 (route [5] / [6])
  const auto flush = [&] {  // what left on each fabric port since the last call
    std::vector<Frame> f1;
    for (rte_mbuf* m : r.fabric_tx()) {
      f1.emplace_back(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_mtod(m, const uint8_t*) + rte_pktmbuf_data_len(m));
      rte_pktmbuf_free(m);
    }
    out2.got.clear();
    out2.drain();
    on1 = parse(f1);
    on2 = parse(out2.got);
    sent += f1.size();
    for (const auto& [m, label] : on1.control) finishes1 += m.type == wire::MsgType::finish && label == 5 ? 1 : 0;
    for (const auto& [m, label] : on2.control) finishes2 += m.type == wire::MsgType::finish && label == 6 ? 1 : 0;
  };
  const auto step = [&] {  // the worker's timers, then its scheduler
    now += 200'000;  // 2 T: every pair with something due is polled
    pipeline::poll_pairs(s, now);
    pipeline::sched_tx(s, now);
    for (pipeline::TxBuffer& t : s.tx) t.flush();
  };
  const auto follow = [&] {  // the control lcore (worker.cpp control_step), past the 10 ms poll interval
    now += pipeline::PortLinks::kPollInterval;
    e.links.poll(now);
    e.control.follow_uplinks();
  };
  const auto answer_all = [&](const char* when) {  // every probe that left, answered by hB on port 2
    std::vector<Frame> answers;
    for (const auto& [m, label] : on1.control)
      if (m.type == wire::MsgType::probe) answers.push_back(answer(m));
    for (const auto& [m, label] : on2.control)
      if (m.type == wire::MsgType::probe) answers.push_back(answer(m));
    ITEST_CHECK(!answers.empty(), "%s: no probe to answer", when);
    r.receive(2, answers, now);
  };
  const auto send = [&](int n, uint32_t dst, uint8_t seed) {
    std::vector<Frame> fs;
    for (int i = 0; i < n; ++i) fs.push_back(vm_frame(kA1, dst, 1000, 100, static_cast<uint8_t>(seed + i)));
    r.receive(0, fs, now);
  };
  // The responses that left on each port (their first label), after a probe from `host`.
  const auto answered = [&](uint32_t host, uint32_t from, int want_port, uint16_t want_label, const char* when) {
    r.receive(2, {probe_to_a1(host, from)}, now);
    flush();
    const Out& o = want_port == 1 ? on1 : on2;
    const Out& other = want_port == 1 ? on2 : on1;
    size_t n = 0, other_n = 0;
    for (const auto& [m, label] : o.control) n += m.type == wire::MsgType::response && label == want_label ? 1 : 0;
    for (const auto& [m, label] : other.control) other_n += m.type == wire::MsgType::response ? 1 : 0;
    ITEST_CHECK(n == 1 && other_n == 0, "%s: the response leaves on port %d with route [%u] (%zu; %zu on the other port)",
                when, want_port, want_label, n, other_n);
  };
  const auto data_of = [](const Out& o, uint32_t pair, uint16_t label) {
    size_t n = 0;
    for (const auto& [id, l] : o.data) n += id == pair && l == label ? 1 : 0;
    return n;
  };
  const auto balanced = [&](const char* when) {
    flush();
    out0.drain();
    const uint64_t out = sent + out2.count + out0.count;
    ITEST_CHECK(s.stats.rx() + s.stats.generated == s.queued() + s.stats.dropped() + out + s.stats.absorbed,
                "%s: rx %llu + generated %llu = queued %llu + dropped %llu + sent %llu + absorbed %llu", when,
                static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.stats.generated),
                static_cast<unsigned long long>(s.queued()), static_cast<unsigned long long>(s.stats.dropped()),
                static_cast<unsigned long long>(out), static_cast<unsigned long long>(s.stats.absorbed));
  };
  const uint32_t ab1 = r.pair(1, 11);
  const VmPair& p1 = s.pairs[ab1];
  size_t h = 0;

  follow();
  ITEST_CHECK(e.links[1].known_down() == false && e.links[2].known_down() == false && e.control.uplink_failovers == 0,
              "start: links up, no failover (%llu)", static_cast<unsigned long long>(e.control.uplink_failovers));

  // 1.
  answered(kHostB, 11, 1, 7, "1: hB's probe");
  ITEST_CHECK(e.control.set_drained("hB", "1", true, &h).empty(), "1: drain");
  send(3, kB1, 1);
  step();
  flush();
  ITEST_CHECK(on1.control.size() == 1 && on1.control[0].second == 5 && on2.control.empty(),
              "1: a query on path 0 alone, drained path 1 not queried (%zu on port 1, %zu on port 2)",
              on1.control.size(), on2.control.size());
  answer_all("1");
  step();
  flush();
  ITEST_CHECK(p1.state() == VmPair::State::active && p1.active_path() == 0, "1: a1 -> b1 active on path %d",
              p1.active_path());
  ITEST_CHECK(data_of(on1, 1u << 16 | 11, 5) == 3 && on2.data.empty(), "1: 3 data frames on port 1 route [5] (%zu, %zu)",
              data_of(on1, 1u << 16 | 11, 5), on2.data.size());
  balanced("1");

  // 2.
  ITEST_CHECK(e.control.set_drained("hB", "1", false, &h).empty(), "2: undrain");
  flush();
  const size_t finishes1_up = finishes1;
  rte_eth_dev_stop(1);
  follow();
  ITEST_CHECK(p1.path_unreachable(0) && !p1.path_unreachable(1), "2: in the pair path 0 unreachable %d, path 1 %d",
              p1.path_unreachable(0), p1.path_unreachable(1));
  ITEST_CHECK(e.control.uplink_down.size() > 2 && e.control.uplink_down[1] == 1 && e.control.uplink_down[2] == 0 &&
                  e.control.uplink_failovers == 1 && e.control.path_unusable(0, 0) && !e.control.path_unusable(0, 1) &&
                  !e.control.drained[0][0],
              "2: port 1 down: failovers %llu", static_cast<unsigned long long>(e.control.uplink_failovers));
  ITEST_CHECK(p1.path_drained(0) && !p1.path_drained(1), "2: in the pair path 0 drained %d, path 1 %d",
              p1.path_drained(0), p1.path_drained(1));
  answered(kHostB, 11, 2, 6, "2: hB's probe while port 1 is down (its path 1's route)");
  const uint64_t better = p1.counters().migrations_better, violation = p1.counters().migrations_violation;
  step();
  flush();
  ITEST_CHECK(on2.control.size() == 1 && on2.control[0].first.type == wire::MsgType::probe && on2.control[0].second == 6,
              "2: a query on path 1 (%zu on port 2)", on2.control.size());
  answer_all("2");
  step();
  flush();
  ITEST_CHECK(p1.active_path() == 1 && p1.counters().migrations_better == better + 1 &&
                  p1.counters().migrations_violation == violation,
              "2: a1 -> b1 on path %d, migrations %llu (for a violation %llu)", p1.active_path(),
              static_cast<unsigned long long>(p1.counters().migrations_better),
              static_cast<unsigned long long>(p1.counters().migrations_violation));
  send(2, kB1, 10);
  step();
  flush();
  ITEST_CHECK(data_of(on2, 1u << 16 | 11, 6) == 2 && on1.data.empty(), "2: 2 data frames on port 2 route [6] (%zu, %zu)",
              data_of(on2, 1u << 16 | 11, 6), on1.data.size());
  ITEST_CHECK(p1.counters().finish_abandoned == 1 && !p1.finish_pending() && p1.counters().finish_gave_up == 0,
              "2: the finish on path 0 abandoned (%llu), none pending (%d)",
              static_cast<unsigned long long>(p1.counters().finish_abandoned), p1.finish_pending());
  balanced("2");

  // 3.
  write_text(file, config(true));
  const pipeline::Control::ReloadResult rr = e.control.reload(now);
  const uint32_t ab2 = r.pair(1, 12);
  ITEST_CHECK(rr.ok && ab2 != pipeline::HashTable::kMiss, "3: reload %d %s", rr.ok, rr.error.c_str());
  if (ab2 == pipeline::HashTable::kMiss) return;
  ITEST_CHECK(s.pairs[ab2].path_drained(0) && !s.pairs[ab2].path_drained(1), "3: a1 -> b2 path 0 drained %d, path 1 %d",
              s.pairs[ab2].path_drained(0), s.pairs[ab2].path_drained(1));
  answered(kHostD, 31, 2, 10, "3: host hD, added while port 1 is down: its probe");
  ITEST_CHECK(s.pairs[ab2].path_unreachable(0) && !s.pairs[ab2].path_unreachable(1),
              "3: a1 -> b2 path 0 unreachable %d, path 1 %d", s.pairs[ab2].path_unreachable(0),
              s.pairs[ab2].path_unreachable(1));
  step();
  flush();
  ITEST_CHECK(finishes1 == finishes1_up, "3: no finish left on port 1 while it was down (%zu)", finishes1 - finishes1_up);

  // 4.
  rte_eth_dev_start(1);
  follow();
  ITEST_CHECK(e.control.uplink_down[1] == 0 && e.control.uplink_failovers == 1 && !p1.path_drained(0) &&
                  !s.pairs[ab2].path_drained(0) && !p1.path_unreachable(0) && !s.pairs[ab2].path_unreachable(0),
              "4: port 1 up: path 0 drained %d / %d", p1.path_drained(0), s.pairs[ab2].path_drained(0));
  step();
  step();
  ITEST_CHECK(p1.active_path() == 1, "4: a1 -> b1 stays on path %d", p1.active_path());
  answered(kHostB, 11, 1, 7, "4: hB's probe once port 1 is up (its reply path)");
  answered(kHostD, 31, 1, 11, "4: hD's probe once port 1 is up (its reply path)");
  balanced("4");

  // 5.
  ITEST_CHECK(e.control.set_drained("hB", "1", true, &h).empty(), "5: drain");
  const size_t finishes2_before = finishes2;
  step();
  flush();
  answer_all("5");
  step();
  flush();
  ITEST_CHECK(p1.active_path() == 0, "5: a1 -> b1 back on path %d", p1.active_path());
  step();  // 200 us: the finish's first retry is not due before 8 T (800 us)
  flush();
  ITEST_CHECK(finishes2 == finishes2_before + 1 && p1.finish_pending() && p1.counters().finish_abandoned == 1,
              "5: the finish on path 1 left on port 2 (%zu), pending %d", finishes2 - finishes2_before,
              p1.finish_pending());
  const uint32_t ac1 = r.pair(1, 21);
  rte_eth_dev_stop(2);
  follow();
  ITEST_CHECK(p1.counters().finish_abandoned == 2 && !p1.finish_pending() && p1.path_unreachable(1) &&
                  s.pairs[ac1].path_unreachable(0),
              "5: port 2 down: the pending finish on path 1 abandoned (%llu), pending %d",
              static_cast<unsigned long long>(p1.counters().finish_abandoned), p1.finish_pending());
  ITEST_CHECK(e.control.uplink_down[2] == 1 && e.control.uplink_failovers == 2 && s.pairs[ac1].path_drained(0) &&
                  p1.path_drained(1) && !p1.path_drained(0),
              "5: port 2 down: failovers %llu, hC path drained %d", static_cast<unsigned long long>(e.control.uplink_failovers),
              s.pairs[ac1].path_drained(0));
  ITEST_CHECK(e.control.set_drained("hB", "1", false, &h).empty() && p1.path_drained(1) && e.control.path_unusable(0, 1),
              "5: undrained while port 2 is down, path 1 stays out (%d)", p1.path_drained(1));
  ITEST_CHECK(e.control.set_drained("hB", "1", true, &h).empty(), "5: drained again");
  rte_eth_dev_start(2);
  follow();
  ITEST_CHECK(e.control.uplink_down[2] == 0 && !s.pairs[ac1].path_drained(0) && p1.path_drained(1) &&
                  s.pairs[ab2].path_drained(1) && !p1.path_unreachable(1) && !s.pairs[ac1].path_unreachable(0),
              "5: port 2 up: hC's path drained %d, hB's path 1 (the operator's) %d / %d", s.pairs[ac1].path_drained(0),
              p1.path_drained(1), s.pairs[ab2].path_drained(1));
  ITEST_CHECK(e.control.set_drained("hB", "1", false, &h).empty() && !p1.path_drained(1) && !s.pairs[ab2].path_drained(1),
              "5: undrained");
  balanced("5");
  for (uint16_t p : {uint16_t{1}, uint16_t{2}}) rte_eth_dev_stop(p);
}

// Ports 1 and 2 configured by two_uplinks (stopped at its end).
void down_at_start() {
  EdgeRig r(config(false), "upd");
  pipeline::Edge& e = r.e;
  rte_eth_dev_start(1);
  for (uint16_t p : {uint16_t{1}, uint16_t{2}}) e.links.watch(p, false, "net_null" + std::to_string(p) + ", fabric");
  Nanos now = pipeline::PortLinks::kPollInterval;
  const auto follow = [&] {
    now += pipeline::PortLinks::kPollInterval;
    e.links.poll(now);
    e.control.follow_uplinks();
  };
  const VmPair& b1 = r.s.pairs[r.pair(1, 11)];
  const VmPair& c1 = r.s.pairs[r.pair(1, 21)];
  follow();
  ITEST_CHECK(e.control.uplink_down[1] == 0 && e.control.uplink_down[2] == 1 && e.control.uplink_failovers == 0 &&
                  b1.path_drained(1) && !b1.path_drained(0) && c1.path_drained(0),
              "8: port 2 down at start-up: drained (%d, %d), no failover (%llu)", b1.path_drained(1), c1.path_drained(0),
              static_cast<unsigned long long>(e.control.uplink_failovers));
  rte_eth_dev_start(2);
  follow();
  ITEST_CHECK(e.control.uplink_down[2] == 0 && !b1.path_drained(1) && !c1.path_drained(0), "8: port 2 up");
  rte_eth_dev_stop(2);
  follow();
  ITEST_CHECK(e.control.uplink_down[2] == 1 && e.control.uplink_failovers == 1 && c1.path_drained(0),
              "8: port 2 down after being up: one failover (%llu)",
              static_cast<unsigned long long>(e.control.uplink_failovers));
  rte_eth_dev_stop(1);
}

void one_uplink(rte_mempool* pool) {
  std::string c = config(false);
  c.replace(c.find("fabric_port: [1, 2]"), 19, "fabric_port: 1");
  c.replace(c.find("{labels: [6], port: 2}"), 22, "{labels: [6], port: 1}");
  c.replace(c.find("{labels: [8], port: 2}"), 22, "{labels: [8], port: 1}");
  EdgeRig r(c, "up1");
  pipeline::Edge& e = r.e;
  dpdk::PortConfig pc;
  pc.link_wait_ms = 0;
  dpdk::setup_port(1, pool, pc);
  e.links.watch(1, false, "net_null1, fabric");
  rte_eth_dev_stop(1);
  e.links.poll(10 * pipeline::PortLinks::kPollInterval);
  e.control.follow_uplinks();
  const VmPair& p1 = r.s.pairs[r.pair(1, 11)];
  ITEST_CHECK(e.links[1].known_down() && e.control.uplink_failovers == 0 && !p1.path_drained(0) && !p1.path_drained(1) &&
                  !e.control.path_unusable(0, 0),
              "7: one uplink down: failovers %llu, drained %d %d", static_cast<unsigned long long>(e.control.uplink_failovers),
              p1.path_drained(0), p1.path_drained(1));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = make_test_dir("ufab_edge_uplink_failover");
  return run_in_process(
      argc, argv, "ufab_edge_uplink_failover",
      [&] {
        dpdk::PoolConfig pc;
        pc.n_mbufs = 4095;
        pc.name = "upf_ports";
        rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
        two_uplinks(pool, dir);
        down_at_start();
        one_uplink(pool);
        rte_mempool_free(pool);
      },
      "PASS: an uplink's link down drains its paths (pairs move to the other uplink, new pairs start without them), "
      "link up makes them candidates again unless the operator drained them; down at start-up drains without a "
      "failover; one uplink drains nothing; every frame counted",
      3);
}
