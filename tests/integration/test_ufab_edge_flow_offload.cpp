// rte_flow classification offload of ufab-edge (pipeline/flow_offload.hpp)
// on net_tap, the one PMD here whose rte_flow_validate checks a rule (the
// tap PMD translates it to a TC flower filter; this kernel has no flower,
// so rte_flow_create is refused: feasibility notes §4).
//
// In process (EAL with net_tap0 as the VM port, net_null0 as the fabric):
//  - every VM-pair rule the edge builds for its configuration validates in
//    its QUEUE form (eth / ipv4 src dst -> owning queue), with and without a
//    VLAN item; the MARK form's verdict is printed (net_tap has no MARK);
//  - malformed rules are refused: a queue the port does not have, ipv4
//    after udp, the control rule's RAW item on a PMD without RAW;
//  - install_offload falls back gracefully: the tap port ends in software
//    classification with its refusals counted (the MARK form at validate,
//    the QUEUE form at create) and nothing installed; the fabric port too.
//  - vm_rx on a port in mark mode (net_ring, whose mbufs keep the FDIR flag
//    and mark the test sets) takes the pair from the mark; with two workers
//    the RX lcore hands a marked frame to the worker its mark names, and that
//    worker takes the pair from the mark.
// Then ufab-edge itself on net_tap prints the same decision per port.
//
// argv[1]: ufab-edge. Skips (77) when /dev/net/tun is missing.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <rte_ring.h>

#include "edge/config.hpp"
#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"
#include "pipeline/edge_state.hpp"
#include "pipeline/flow_offload.hpp"
#include "pipeline/stages.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

// Two local VMs of two tenants behind port 0, three remote VMs: 3 pairs.
const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
tenants:
  - {vni: 100, guarantee_gbps: 2}
  - {vni: 200, guarantee_gbps: 1}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 2, tenant: 200, mac: "02:00:00:00:0a:02", ip: 192.168.0.4, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.0.2, host: hB}
  - {name: b2, id: 12, tenant: 100, ip: 192.168.0.3, host: hB}
  - {name: b3, id: 13, tenant: 200, ip: 192.168.0.2, host: hB}
)";

// The mark tests' configuration: a1 (and a2 when two_vms) behind port 2.
edge::EdgeConfig mark_config(bool two_vms) {
  std::string yaml = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 2}
)";
  if (two_vms) yaml += R"(  - {name: a2, id: 2, tenant: 100, mac: "02:00:00:00:0a:02", ip: 192.168.0.9, port: 2}
)";
  yaml += R"(hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.0.2, host: hB}
  - {name: b2, id: 12, tenant: 100, ip: 192.168.0.3, host: hB}
)";
  return edge::parse_config(yaml, two_vms ? "mark2.yaml" : "mark.yaml");
}

// A frame of 242 B from src to dst into net_ring (port 2), carrying the
// RTE_MBUF_F_RX_FDIR_ID flag and `mark` when marked, as a NIC would deliver it.
struct MarkedFrame {
  uint32_t src, dst;
  bool marked;
  uint32_t mark;
};
void send_marked(rte_mempool* pool, std::span<const MarkedFrame> in) {
  std::vector<rte_mbuf*> pkts;
  for (size_t i = 0; i < in.size(); ++i) {
    const Frame f = vm_frame(in[i].src, in[i].dst, 1000, 200, static_cast<uint8_t>(i));
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
    if (in[i].marked) {
      m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
      m->hash.fdir.hi = in[i].mark;
    }
    pkts.push_back(m);
  }
  ITEST_CHECK(rte_eth_tx_burst(2, 0, pkts.data(), static_cast<uint16_t>(pkts.size())) == pkts.size(),
              "net_ring took the frames");
}

// vm_rx on a port in `mark` mode, as if its PMD had installed the rules:
// net_ring (port 2) hands back the very mbufs sent into it, with the flag
// and mark the test set. A valid mark names the pair without a lookup (even
// against the frame's addresses, which proves no lookup ran); a frame
// without a mark, or with a mark beyond the pairs, is looked up by (port,
// src, dst).
void mark_path(rte_mempool* pool) {
  const edge::EdgeConfig cfg = mark_config(false);
  const pipeline::Layout layout = pipeline::make_layout(cfg, 3, {0}, 0);
  pipeline::EdgeState s(cfg, pool, 3, layout, 0);
  dpdk::setup_port(2, pool, dpdk::PortConfig{});
  s.offload.ports.resize(3);
  s.offload.ports[2].mode = pipeline::OffloadMode::mark;
  const MarkedFrame in[] = {{0xc0a80001, 0xc0a80002, true, 1},  // a1 -> b1 marked as pair 1 (a1 -> b2)
                            {0xc0a80001, 0xc0a80003, false, 0},  // a1 -> b2, looked up: pair 1
                            {0xc0a80001, 0xc0a80002, true, 7}};  // a mark beyond the pairs: looked up, pair 0
  send_marked(pool, in);
  const uint32_t n = pipeline::poll_port(s, 2, 0);  // RX burst -> vm_frames (classify)
  const uint64_t len = 242 + s.encap_bytes(0, 0);
  ITEST_CHECK(n == 3 && s.stats.marked == 1, "mark path: %u frames, %llu classified by mark", n,
              static_cast<unsigned long long>(s.stats.marked));
  ITEST_CHECK(s.sched.backlog_bytes(1) == 2 * len && s.sched.backlog_bytes(0) == len,
              "pair 1 holds the marked frame and the looked-up one, pair 0 the one with a bad mark (%llu, %llu)",
              static_cast<unsigned long long>(s.sched.backlog_bytes(1)),
              static_cast<unsigned long long>(s.sched.backlog_bytes(0)));
}

// The same with two workers: the mark is (worker << 20 | index in the
// worker's shard). Port 2's RX lcore (worker 0 here) hands a frame to the
// worker its mark names without looking at the frame, and that worker takes
// the pair from the mark; unmarked frames are dispatched and classified by
// their addresses as without offload.
void mark_path_workers(rte_mempool* pool) {
  const edge::EdgeConfig cfg = mark_config(true);
  const pipeline::Layout layout = pipeline::make_layout(cfg, 3, {0, 1, 2}, 2);
  ITEST_CHECK(layout.workers() == 2 && layout.vm_owner[0] == 0 && layout.vm_owner[1] == 1,
              "a1 on worker 0, a2 on worker 1 (owners %u, %u)", layout.vm_owner[0], layout.vm_owner[1]);
  pipeline::EdgeState s0(cfg, pool, 3, layout, 0), s1(cfg, pool, 3, layout, 1);
  rte_ring* r0 = rte_ring_create("mark_w0", 64, SOCKET_ID_ANY, RING_F_SC_DEQ);
  rte_ring* r1 = rte_ring_create("mark_w1", 64, SOCKET_ID_ANY, RING_F_SC_DEQ);
  s0.rx_ring = r0;
  s1.rx_ring = r1;
  s0.peer_rings = s1.peer_rings = {r0, r1};
  for (pipeline::EdgeState* s : {&s0, &s1}) {
    s->offload.ports.resize(3);
    s->offload.ports[2].mode = pipeline::OffloadMode::mark;
  }
  ITEST_CHECK(s0.pairs.size() == 2 && s1.pairs.size() == 2, "2 pairs per worker (%zu, %zu)", s0.pairs.size(), s1.pairs.size());
  const MarkedFrame in[] = {{0xc0a80001, 0xc0a80002, true, pipeline::pair_mark(1, 1)},  // a1's addresses, worker 1's pair 1
                            {0xc0a80009, 0xc0a80002, false, 0},                          // a2 -> b1: worker 1's pair 0
                            {0xc0a80001, 0xc0a80003, true, pipeline::pair_mark(0, 1)}};  // a1 -> b2: worker 0's pair 1
  send_marked(pool, in);
  const uint32_t n0 = pipeline::poll_port(s0, 2, 0);  // RX lcore: dispatch, then its own frames
  const uint32_t n1 = pipeline::poll_ring(s1, 0);     // worker 1: what was handed to it
  const uint64_t len = 242 + s0.encap_bytes(0, 0);
  ITEST_CHECK(n0 == 3 && n1 == 2 && s0.stats.handed_off == 2 && s1.stats.taken_over == 2,
              "dispatch: %u polled, %u taken over, %llu handed over", n0, n1,
              static_cast<unsigned long long>(s0.stats.handed_off));
  ITEST_CHECK(s0.stats.marked == 1 && s1.stats.marked == 1, "classified by mark: worker 0 %llu, worker 1 %llu",
              static_cast<unsigned long long>(s0.stats.marked), static_cast<unsigned long long>(s1.stats.marked));
  ITEST_CHECK(s0.sched.backlog_bytes(1) == len && s0.sched.backlog_bytes(0) == 0 && s1.sched.backlog_bytes(1) == len &&
                  s1.sched.backlog_bytes(0) == len,
              "backlogs w0 %llu/%llu, w1 %llu/%llu (want 0/%llu, %llu/%llu)",
              static_cast<unsigned long long>(s0.sched.backlog_bytes(0)),
              static_cast<unsigned long long>(s0.sched.backlog_bytes(1)),
              static_cast<unsigned long long>(s1.sched.backlog_bytes(0)),
              static_cast<unsigned long long>(s1.sched.backlog_bytes(1)), static_cast<unsigned long long>(len),
              static_cast<unsigned long long>(len), static_cast<unsigned long long>(len));
  rte_ring_free(r0);
  rte_ring_free(r1);
}

void in_process(const std::string& tap, const std::string& prefix) {
  std::vector<std::string> args = edge_eal(prefix, "0");
  args.insert(args.begin(), "test_ufab_edge_flow_offload");
  args.insert(args.end(), {"--vdev", "net_tap0,iface=" + tap, "--vdev", "net_null0", "--vdev", "net_ring0"});
  std::vector<char*> argv = c_argv(args);
  dpdk::Eal eal(static_cast<int>(args.size()), argv.data());

  const edge::EdgeConfig cfg = edge::parse_config(kConfig, "offload.yaml");
  dpdk::PoolConfig pc;
  pc.n_mbufs = 2047;
  rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
  const pipeline::Layout layout = pipeline::make_layout(cfg, 2, {0}, 0);
  pipeline::EdgeState s(cfg, pool, 2, layout, 0);
  for (uint16_t p = 0; p < 2; ++p) {
    pipeline::negotiate_rx_mark(p);
    dpdk::setup_port(p, pool, dpdk::PortConfig{});
  }
  ITEST_CHECK(s.pairs.size() == 3, "%zu pairs, want 3 (a1-b1, a1-b2, a2-b3)", s.pairs.size());

  // The edge's own rules, QUEUE form: each validates on the tap port.
  for (uint32_t p = 0; p < s.pairs.size(); ++p) {
    const pipeline::PairMeta& pm = s.meta[p];
    for (const uint16_t vlan : {uint16_t{0}, uint16_t{5}}) {
      pipeline::FlowRule r;
      pipeline::build_pair_rule(r, {cfg.vms[pm.local_vm].ip, cfg.remote_vms[pm.remote_vm].ip, vlan, p, 0, false});
      std::string why;
      const int rc = pipeline::validate_rule(0, r, &why);
      ITEST_CHECK(rc == 0, "pair %u (vlan %u): rte_flow_validate refused the QUEUE rule: %s", p, vlan, why.c_str());
    }
    pipeline::FlowRule r;
    pipeline::build_pair_rule(r, {cfg.vms[pm.local_vm].ip, cfg.remote_vms[pm.remote_vm].ip, 0, p, 0, true});
    std::string why;
    const int rc = pipeline::validate_rule(0, r, &why);
    std::printf("pair %u MARK+QUEUE rule on net_tap: %s%s\n", p, rc == 0 ? "validated" : "refused: ", why.c_str());
  }
  // What the rules hold: pattern eth / ipv4 (src, dst exact) / end; MARK id =
  // pair index, then QUEUE.
  {
    pipeline::FlowRule r;
    pipeline::build_pair_rule(r, {0xc0a80001, 0xc0a80002, 0, 2, 0, true});
    const auto* ip = static_cast<const rte_flow_item_ipv4*>(r.pattern[1].spec);
    ITEST_CHECK(r.pattern[0].type == RTE_FLOW_ITEM_TYPE_ETH && r.pattern[1].type == RTE_FLOW_ITEM_TYPE_IPV4 &&
                    r.pattern[2].type == RTE_FLOW_ITEM_TYPE_END && ip->hdr.src_addr == rte_cpu_to_be_32(0xc0a80001) &&
                    ip->hdr.dst_addr == rte_cpu_to_be_32(0xc0a80002),
                "pair rule pattern");
    ITEST_CHECK(r.actions[0].type == RTE_FLOW_ACTION_TYPE_MARK &&
                    static_cast<const rte_flow_action_mark*>(r.actions[0].conf)->id == 2 &&
                    r.actions[1].type == RTE_FLOW_ACTION_TYPE_QUEUE && r.actions[2].type == RTE_FLOW_ACTION_TYPE_END,
                "pair rule actions: MARK 2 / QUEUE / END");
  }
  // A QinQ tenant's rule: eth type 0x88a8 / vlan S / vlan C / ipv4 / end.
  {
    pipeline::FlowRule r;
    pipeline::PairRuleSpec spec{0xc0a80001, 0xc0a80002, 100, 2, 0, false};
    spec.svlan = 10;
    pipeline::build_pair_rule(r, spec);
    const auto* eth = static_cast<const rte_flow_item_eth*>(r.pattern[0].spec);
    const auto* s_tag = static_cast<const rte_flow_item_vlan*>(r.pattern[1].spec);
    const auto* c_tag = static_cast<const rte_flow_item_vlan*>(r.pattern[2].spec);
    ITEST_CHECK(r.pattern[0].type == RTE_FLOW_ITEM_TYPE_ETH && eth != nullptr &&
                    eth->type == rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ) && r.pattern[1].type == RTE_FLOW_ITEM_TYPE_VLAN &&
                    s_tag->tci == rte_cpu_to_be_16(10) && r.pattern[2].type == RTE_FLOW_ITEM_TYPE_VLAN &&
                    c_tag->tci == rte_cpu_to_be_16(100) && r.pattern[3].type == RTE_FLOW_ITEM_TYPE_IPV4 &&
                    r.pattern[4].type == RTE_FLOW_ITEM_TYPE_END,
                "QinQ pair rule pattern");
    std::string why;
    const int rc = pipeline::validate_rule(0, r, &why);
    std::printf("QinQ QUEUE rule on net_tap: %s%s\n", rc == 0 ? "validated" : "refused: ", why.c_str());
  }

  // Malformed rules are refused.
  {
    pipeline::FlowRule r;
    pipeline::build_pair_rule(r, {0xc0a80001, 0xc0a80002, 0, 0, 1, false});  // queue 1: the port has one
    ITEST_CHECK(pipeline::validate_rule(0, r) != 0, "a rule to RX queue 1 of a one-queue port validated");
  }
  {
    pipeline::FlowRule r;
    pipeline::build_control_rule(r, {0x0a000001, 7341, 0});
    r.pattern[1].type = RTE_FLOW_ITEM_TYPE_UDP;  // eth / udp / udp: an L4 item after L2
    r.pattern[1].spec = r.pattern[2].spec;
    r.pattern[1].mask = r.pattern[2].mask;
    r.pattern[2].type = RTE_FLOW_ITEM_TYPE_IPV4;  // ipv4 after udp
    r.pattern[2].spec = &r.ip_spec;
    r.pattern[2].mask = &r.ip_mask;
    r.pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
    ITEST_CHECK(pipeline::validate_rule(0, r) != 0, "eth / udp / ipv4 validated");
  }
  {
    pipeline::FlowRule r;
    pipeline::build_control_rule(r, {0x0a000001, 7341, 0});
    std::string why;
    ITEST_CHECK(pipeline::validate_rule(0, r, &why) != 0, "net_tap validated a RAW item (it has none)");
    std::printf("control rule (RAW shim type) on net_tap: refused: %s\n", why.c_str());
  }

  // The start-up path: nothing can be created here, so both ports end in
  // software classification with the refusals counted.
  pipeline::EdgeState* const one[] = {&s};
  pipeline::install_offload(one);
  const pipeline::PortOffload& vm = s.offload.ports[0];
  const pipeline::PortOffload& fab = s.offload.ports[1];
  ITEST_CHECK(vm.mode == pipeline::OffloadMode::software && !s.offload.marks(0), "tap port: mode %s",
              pipeline::to_string(vm.mode));
  ITEST_CHECK(vm.installed == 0 && vm.flows.empty(), "tap port: %u rules left installed", vm.installed);
  // The QUEUE form validated (3 rules) and its first create was refused;
  // the MARK form was refused once (at validate, or at create if this tap
  // has MARK).
  ITEST_CHECK(vm.validated >= 3 && vm.refused == 2 && !vm.reason.empty(), "tap port: validated=%u refused=%u reason=%s",
              vm.validated, vm.refused, vm.reason.c_str());
  ITEST_CHECK(fab.mode == pipeline::OffloadMode::software && fab.installed == 0 && fab.refused == 1,
              "fabric port (net_null): mode %s installed=%u refused=%u", pipeline::to_string(fab.mode), fab.installed,
              fab.refused);
  ITEST_CHECK(s.offload.installed() == 0 && s.offload.refused() == 3, "totals installed=%llu refused=%llu",
              static_cast<unsigned long long>(s.offload.installed()),
              static_cast<unsigned long long>(s.offload.refused()));
  pipeline::remove_offload(s);
  mark_path(pool);
  mark_path_workers(pool);
  for (uint16_t p = 0; p < 3; ++p) dpdk::close_port(p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  if (!std::filesystem::exists("/dev/net/tun")) {
    std::printf("SKIP: /dev/net/tun is missing: net_tap (the only PMD here that validates rte_flow rules) cannot run\n");
    return 77;
  }
  const std::string tag = std::to_string(getpid() % 100000);
  const std::string prefix = "ufabflow" + tag;
  char tmpl[] = "/tmp/ufab_edge_flow.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;

  // ufab-edge on net_tap (before the in-process EAL: one EAL per process).
  write_text(dir + "/edge.yaml", kConfig);
  write_pcap(dir + "/empty.pcap", {});
  std::vector<std::string> cmd = {argv[1]};
  for (const std::string& a : edge_eal(prefix + "e", "0")) cmd.push_back(a);
  cmd.insert(cmd.end(), {"--vdev", "net_tap0,iface=uftE" + tag, "--vdev",
                         "net_pcap0,rx_pcap=" + dir + "/empty.pcap,tx_pcap=" + dir + "/fab.pcap", "--", "--config",
                         dir + "/edge.yaml", "--exit-after-idle-ms", "300", "--stats-interval", "0"});
  const RunResult r = run_with_deadline(cmd, dir + "/out", dir + "/err", 30);
  remove_dpdk_runtime(prefix + "e");
  const std::string out = read_file(dir + "/out");
  std::printf("%s", out.c_str());
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "ufab-edge failed: %s", read_file(dir + "/err").c_str());
  auto p0 = parse_line(out, "ufab-edge offload port=0 mode=software ");
  auto p1 = parse_line(out, "ufab-edge offload port=1 mode=software ");
  ITEST_CHECK(p0["installed"] == 0 && p0["refused"] == 2 && p0["validated"] >= 3,
              "ufab-edge: tap port in software with 2 refusals");
  ITEST_CHECK(p1["installed"] == 0 && p1["refused"] == 1, "ufab-edge: fabric port in software with 1 refusal");

  // With two workers (three lcores on the two cores): the rules of both
  // shards are tried on the tap port, with the same outcome.
  std::vector<std::string> cmd2 = {argv[1]};
  for (const std::string& a : edge_eal_three_lcores(prefix + "w")) cmd2.push_back(a);
  cmd2.insert(cmd2.end(), {"--vdev", "net_tap0,iface=uftW" + tag, "--vdev",
                           "net_pcap0,rx_pcap=" + dir + "/empty.pcap,tx_pcap=" + dir + "/fab2.pcap", "--", "--config",
                           dir + "/edge.yaml", "--workers", "2", "--exit-after-idle-ms", "300", "--stats-interval", "0"});
  const RunResult r2 = run_with_deadline(cmd2, dir + "/out2", dir + "/err2", 30);
  remove_dpdk_runtime(prefix + "w");
  const std::string out2 = read_file(dir + "/out2");
  std::printf("%s", out2.c_str());
  ITEST_CHECK(!r2.timed_out && r2.exit_code == 0, "ufab-edge --workers 2 failed: %s", read_file(dir + "/err2").c_str());
  // net_tap has a queue per worker: each worker polls its own RX queue; the
  // QUEUE rules that would steer each pair there validate but are not
  // created here, so the tap's own flow hash spreads the frames (spread) and
  // each worker has its own TX queue too (no TX ring).
  ITEST_CHECK(out2.find("ufab-edge rx port=0 mode=spread queues=2 reta=\"not programmed: ") != std::string::npos &&
                  read_file(dir + "/err2").find("refused 2 TX queues") == std::string::npos,
              "ufab-edge --workers 2: the tap port did not get an RX and a TX queue per worker");
  auto w0 = parse_line(out2, "ufab-edge offload port=0 mode=software ");
  ITEST_CHECK(out2.find("lcores: control 0, workers 1(") != std::string::npos && w0["installed"] == 0 &&
                  w0["refused"] == 2 && w0["validated"] >= 3,
              "ufab-edge --workers 2: the tap port tried the rules of both shards (validated=%llu refused=%llu)",
              static_cast<unsigned long long>(w0["validated"]), static_cast<unsigned long long>(w0["refused"]));

  in_process("uftI" + tag, prefix + "i");
  remove_dpdk_runtime(prefix + "i");
  if (itest::g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: rules validated on net_tap, malformed ones refused, creation refused -> software classification\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", itest::g_failures, dir.c_str());
  return 1;
}
