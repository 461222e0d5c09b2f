// VMs on vhost-user ports that go away and come back (issue 4 §1: VM-side
// ports on any PMD; a host deployment gives each VM a net_vhost port, which
// its QEMU connects to as vhost-user client). Two ufab-edge processes with
// one ufab-core between them (memif), each with its VM on net_vhost0; the
// VMs are ufab-vmgen processes on virtio-user (client mode, as QEMU is),
// started and stopped as a VM restarts:
//  1. VM b and VM a connect; a's 30 frames reach b unchanged.
//  2. Both VMs leave; VM a connects again (edge A's port reconnects) and
//     sends 20 frames while b is gone: edge B drops each as link_down on its
//     VM port (its link events said down), not as tx_full, and goes on.
//  3. VM b connects again; a (a third time) sends 25 frames, which reach b
//     unchanged.
//  4. Edge B exits; a (a fourth time) sends 15 frames: the switch drops
//     each, and A's finishes, as link_down on its port to B (the memif peer
//     is gone), not as tx_full.
// Checked besides: each link change is logged and counted (edge B: 4, A: 8,
// in /ufab/stats and the final report), /ufab/stats reads the link as it
// is, nothing else is dropped, and both edges conserve every frame and exit
// cleanly.
//
// argv[1]: ufab-edge, argv[2]: ufab-core, argv[3]: ufab-vmgen (empty when not
// built: exit 77).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"
#include "tests/integration/vm_procs.hpp"

namespace {

using namespace ufab::itest;

constexpr uint32_t kVmA = 0xc0a80001, kVmB = 0xc0a80002;
constexpr size_t kPhase1 = 30, kPhase2 = 20, kPhase3 = 25, kPhase4 = 15;

std::string config(const char* me, const char* peer, const char* my_mac, const char* peer_mac, int my_id, int peer_id,
                   const char* label, const char* vm_ip, const char* peer_vm_ip) {
  char buf[1024];
  std::snprintf(buf, sizeof(buf), R"(edge:
  fabric_port: 1
  ip: %s
  mac: "%s"
params:
  unit_bw_gbps: 1
  idle_finish_ms: 20
  probe_timeout_rtts: 400  # 200 ms: a response delayed by a loaded CI machine is not a loss
tenants:
  - {vni: 100, guarantee_gbps: 2, weight_class: 1}
vms:
  - {name: vm_%d, id: %d, tenant: 100, mac: "02:00:00:00:0a:01", ip: %s, port: 0}
hosts:
  - name: peer
    ip: %s
    mac: "%s"
    base_rtt_us: 500
    paths: [[%s]]
remote_vms:
  - {name: vm_%d, id: %d, tenant: 100, ip: %s, host: peer}
)",
                me, my_mac, my_id, my_id, vm_ip, peer, peer_mac, label, peer_id, peer_id, peer_vm_ip);
  return buf;
}

long long port0(const std::string& stats, const std::string& key) { return port_stat(stats, 0, key); }

}  // namespace

int main(int argc, char** argv) {
  const std::optional<VmTestBins> bins = vm_test_bins(argc, argv);
  if (!bins) return 77;
  const std::string &edge = bins->edge, &core = bins->core, &vmgen = bins->vmgen;
  install_kill_on_term();
  const std::string dir = make_test_dir("ufab_edge_vhost");
  if (dir.empty()) return 1;
  const std::string tag = std::to_string(getpid());
  const std::string pa = "ufabvhA" + tag, pb = "ufabvhB" + tag, pc = "ufabvhC" + tag;
  write_text(dir + "/A.yaml", config("10.0.0.1", "10.0.0.2", "02:00:00:00:00:01", "02:00:00:00:00:02", 1, 11, "1",
                                     "192.168.0.1", "192.168.0.2"));
  write_text(dir + "/B.yaml", config("10.0.0.2", "10.0.0.1", "02:00:00:00:00:02", "02:00:00:00:00:01", 11, 1, "0",
                                     "192.168.0.2", "192.168.0.1"));
  // VM a's frames of each phase: other flows and sizes, so that a frame of
  // one phase cannot pass for one of another.
  std::vector<Frame> phase[4];
  const size_t counts[4] = {kPhase1, kPhase2, kPhase3, kPhase4};
  for (size_t k = 0; k < 4; ++k) {
    for (size_t i = 0; i < counts[k]; ++i)
      phase[k].push_back(vm_frame(kVmA, kVmB, static_cast<uint16_t>(1000 * (k + 1) + i % 4), 100 + 7 * i + k,
                                  static_cast<uint8_t>(k + 1)));
    write_pcap(dir + "/a" + std::to_string(k + 1) + ".pcap", phase[k]);
  }
  write_pcap(dir + "/empty.pcap", {});

  // Edge B (memif server towards the switch), the switch, then edge A; each
  // with its VM's net_vhost0 (a vhost-user server socket) as port 0.
  const auto edge_cmd = [&](const std::string& prefix, const char* lcore, const std::string& me,
                            const std::string& memif) {
    std::vector<std::string> c = {edge};
    // The link changes are logged at NOTICE, which edge_eal's global level
    // (error) hides whatever the type's level.
    for (const std::string& s : edge_eal(prefix, lcore)) c.push_back(s == "error" ? "notice" : s);
    c.insert(c.end(), {"--log-level", "ufab.edge:notice", "--vdev", "net_vhost0,iface=" + dir + "/vm" + me + ".sock", "--vdev", "net_memif0," + memif,
                       "--", "--config", dir + "/" + me + ".yaml", "--stats-interval", "0"});
    return c;
  };
  const int pid_b = spawn(edge_cmd(pb, "0", "B", "role=server,socket=" + dir + "/b.sock"), dir + "/b.out", dir + "/b.err");
  track_process(pid_b);
  ITEST_CHECK(wait_for_text(dir + "/b.out", "VM-pairs", 30), "edge B did not start: %s", read_file(dir + "/b.err").c_str());
  const Spawned sw = spawn_switch_between_edges(core, pc, dir, 15);
  track_process(sw.pid);
  ITEST_CHECK(sw.ready, "the switch does not listen");
  const int pid_a = spawn(edge_cmd(pa, "1", "A", "role=client,socket=" + dir + "/a.sock"), dir + "/a.out", dir + "/a.err");
  track_process(pid_a);
  ITEST_CHECK(wait_for_text(dir + "/a.out", "VM-pairs", 30), "edge A did not start: %s", read_file(dir + "/a.err").c_str());
  for (const char* f : {"/a.out", "/b.out"})
    ITEST_CHECK(read_file(dir + f).find("net_vhost0 (net_vhost) link down, VM side, MTU 1500, link events on") != std::string::npos,
                "%s: the VM port starts down (no VM yet), with link events", f);

  // A VM: ufab-vmgen on the edge `me`'s socket (vm_procs.hpp).
  VmGens vms(vmgen, dir, tag);
  const auto start_vm = [&](const std::string& me, const std::string& in, const std::string& out) {
    return vms.start("vm" + me + ".sock", in, out);
  };
  const auto stop_vm = [&](int pid) { vms.stop(pid); };
  const auto stats_b = [&] { return telemetry(pb, "/ufab/stats"); };
  const auto b_port0 = [&](const char* key) { return port0(stats_b(), key); };

  // 1. Both VMs up: a's frames reach b.
  int vm_b = start_vm("B", dir + "/empty.pcap", dir + "/b1_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_port0("link_up") == 1; }, 10), "edge B: VM b's port up");
  int vm_a = start_vm("A", dir + "/a1.pcap", dir + "/a1_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_port0("tx") == static_cast<long long>(kPhase1); }, 20),
              "phase 1: edge B handed VM b %lld of %zu frames", b_port0("tx"), kPhase1);
  stop_vm(vm_a);
  stop_vm(vm_b);
  ITEST_CHECK(same_frames(phase[0], read_pcap(dir + "/b1_out.pcap")), "phase 1: VM b got VM a's frames unchanged");

  // 2. VM b gone: edge B drops what comes for it as link_down.
  ITEST_CHECK(wait_until([&] { return b_port0("link_up") == 0 && b_port0("link_changes") == 2; }, 10),
              "edge B: VM b's port down after it left (link_up %lld, link_changes %lld)", b_port0("link_up"),
              b_port0("link_changes"));
  vm_a = start_vm("A", dir + "/a2.pcap", dir + "/a2_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_port0("link_down") == static_cast<long long>(kPhase2); }, 20),
              "phase 2: edge B dropped %lld of %zu frames as link_down", b_port0("link_down"), kPhase2);
  const std::string stats_gone = stats_b();
  stop_vm(vm_a);

  // 3. VM b back: a's frames reach it again.
  vm_b = start_vm("B", dir + "/empty.pcap", dir + "/b3_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_port0("link_up") == 1 && b_port0("link_changes") == 3; }, 10),
              "edge B: VM b's port up again");
  vm_a = start_vm("A", dir + "/a3.pcap", dir + "/a3_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_port0("tx") == static_cast<long long>(kPhase1 + kPhase3); }, 20),
              "phase 3: edge B handed VM b %lld of %zu frames", b_port0("tx"), kPhase1 + kPhase3);
  stop_vm(vm_a);
  stop_vm(vm_b);
  ITEST_CHECK(same_frames(phase[2], read_pcap(dir + "/b3_out.pcap")), "phase 3: VM b got VM a's frames unchanged");
  ITEST_CHECK(wait_until([&] { return b_port0("link_changes") == 4; }, 10), "edge B: 4 link changes");

  const auto stop = [](int pid) {
    kill(pid, SIGTERM);
    return wait_with_deadline(pid, 30);
  };
  // 4. Edge B gone: the switch drops what comes for it as link_down.
  const RunResult rb = stop(pid_b);
  untrack_process(pid_b);
  const size_t sent = kPhase1 + kPhase2 + kPhase3 + kPhase4;
  vm_a = start_vm("A", dir + "/a4.pcap", dir + "/a4_out.pcap");
  ITEST_CHECK(wait_until([&] { return json_number(telemetry(pa, "/ufab/stats"), "encapsulated") == static_cast<long long>(sent); }, 20),
              "phase 4: edge A sent VM a's frames to the switch");
  stop_vm(vm_a);
  // A (its stop sends finish through the switch, to B's port too), then the switch.
  const RunResult ra = stop(pid_a), rc = stop(sw.pid);
  untrack_all();
  for (const std::string& p : {pa, pb, pc}) remove_dpdk_runtime(p);
  for (const std::string& p : vms.prefixes()) remove_dpdk_runtime(p);

  const std::string out_a = read_file(dir + "/a.out"), out_b = read_file(dir + "/b.out");
  const std::string err_a = read_file(dir + "/a.err"), err_b = read_file(dir + "/b.err");
  std::printf("edge A:\n%sedge B:\n%s/ufab/stats of B while VM b was gone:\n%s\n", out_a.c_str(), out_b.c_str(),
              stats_gone.c_str());
  ITEST_CHECK(!ra.timed_out && ra.exit_code == 0, "edge A failed (timed out %d, exit %d)", ra.timed_out, ra.exit_code);
  ITEST_CHECK(!rb.timed_out && rb.exit_code == 0, "edge B failed (timed out %d, exit %d)", rb.timed_out, rb.exit_code);
  ITEST_CHECK(!rc.timed_out && rc.exit_code == 0, "the switch failed (timed out %d, exit %d): %s", rc.timed_out,
              rc.exit_code, read_file(dir + "/c.err").c_str());
  ITEST_CHECK(port0(stats_gone, "link_up") == 0 && stats_gone.find("\"link_watch\":\"events\"") != std::string::npos &&
                  port0(stats_gone, "tx_full") == -1,
              "/ufab/stats while VM b was gone: link down, followed by events, no tx_full");

  auto fa = parse_line(out_a, "ufab-edge final "), fb = parse_line(out_b, "ufab-edge final ");
  ITEST_CHECK(fa["conserved"] == 1 && fa["dropped"] == 0 && fa["queued"] == 0 && fa["encap"] == sent,
              "edge A: every frame of the four VM runs sent (encap %llu of %zu)",
              static_cast<unsigned long long>(fa["encap"]), sent);
  const size_t to_b = sent - kPhase4;
  ITEST_CHECK(fb["conserved"] == 1 && fb["decap"] == to_b && fb["dropped"] == kPhase2 && fb["drop.link_down"] == kPhase2 &&
                  fb["drop.tx_full"] == 0,
              "edge B: conserved, every frame decapsulated, only phase 2's dropped, as link_down");
  auto pb0 = parse_line(out_b, "ufab-edge port=0 "), pa0 = parse_line(out_a, "ufab-edge port=0 ");
  ITEST_CHECK(pb0["tx"] == kPhase1 + kPhase3 && pb0["drop.link_down"] == kPhase2, "edge B's VM port: tx and link_down");
  ITEST_CHECK(pa0["rx"] == sent, "edge A's VM port: every frame of the four VM runs received");
  // The switch: phase 4's frames (and A's finishes) to B's port as
  // link_down, none as tx_full; every frame accounted for.
  const std::string out_c = read_file(dir + "/c.out");
  auto fc = parse_line(out_c, "ufab-core final ");
  std::printf("switch:\n%s", out_c.c_str());
  ITEST_CHECK(fc["drop.link_down"] >= kPhase4 && fc["drop.tx_full"] == 0 && fc["rx"] > 0 &&
                  fc["rx"] == fc["tx"] + fc["queued"] + fc["dropped"],
              "the switch: link_down %llu (want >= %zu), tx_full %llu", static_cast<unsigned long long>(fc["drop.link_down"]),
              kPhase4, static_cast<unsigned long long>(fc["drop.tx_full"]));
  // The report's pmd lines: the VM port down at the end, followed by its
  // events; the memif port up, polled (memif raises none), B's once down:
  // B started before the switch, its memif server's peer.
  const auto pmd_line = [](const std::string& out, int port) {
    const std::string head = "ufab-edge pmd port=" + std::to_string(port) + " ";
    const size_t at = out.find(head);
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  const auto ends_with = [](const std::string& line, const std::string& tail) {
    return line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0;
  };
  ITEST_CHECK(ends_with(pmd_line(out_a, 0), " link=down link_watch=events link_changes=8") &&
                  ends_with(pmd_line(out_a, 1), " link=up link_watch=polled link_changes=0"),
              "edge A's report: '%s' / '%s'", pmd_line(out_a, 0).c_str(), pmd_line(out_a, 1).c_str());
  ITEST_CHECK(ends_with(pmd_line(out_b, 0), " link=down link_watch=events link_changes=4") &&
                  ends_with(pmd_line(out_b, 1), " link=up link_watch=polled link_changes=1"),
              "edge B's report: '%s' / '%s'", pmd_line(out_b, 0).c_str(), pmd_line(out_b, 1).c_str());
  const auto count = [](const std::string& s, const std::string& needle) {
    size_t n = 0;
    for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
    return n;
  };
  const std::string down = "port 0 (net_vhost0, VM side): link down", up = "port 0 (net_vhost0, VM side): link up";
  ITEST_CHECK(count(err_b, down) == 2 && count(err_b, up) == 2, "edge B logs each change of its VM port");
  ITEST_CHECK(count(err_a, down) == 4 && count(err_a, up) == 4, "edge A logs each change of its VM port");
  return conclude(dir, "ufab_edge_vhost_vms: VMs on vhost-user left and came back; nothing lost unaccounted");
}
