// An uplink lost under a running edge (pipeline/uplinks.cpp), with real
// processes: edge A has two fabric ports, memif clients of two ufab-core
// switches (port 1 to core 1, port 2 to core 2); edge B has the same two
// (memif servers). Each host's path 0 crosses core 1, path 1 core 2, and
// so do the reply paths (core 1). The VMs are ufab-vmgen processes on
// virtio-user (a1 at A, b at B). Pairs stay active for a minute without
// data (params.idle_finish_ms), so a1 -> b is active throughout.
//  1. /ufab/path_drain,hB,1 at A, so a1 -> b joins path 0; a1 sends 30
//     frames, which reach b over core 1 (A's port 1). Then path 1 is
//     undrained.
//  2. Core 1 is killed. A's port 1 loses its link: A logs "fabric port 1:
//     link down", /ufab/stats counts uplink_failovers 1, /ufab/paths shows
//     hB's path 0 with uplink_down=1 and path 1 with 0, and undraining path
//     0 answers uplink_down 1. a1 -> b migrates to path 1 (its migrations
//     count 1): B lost core 1 too, and answers A's query on path 1 by its
//     own path 1 (core 2) while its reply path's uplink is down (B logs
//     it). The finish it starts on path 0 is abandoned (finish_abandoned
//     1 in /ufab/pair). a1's next 40 frames reach b over core 2 (A's port
//     2), none over port 1.
//  3. b got all 70 frames unchanged, in order; both edges conserve every
//     frame and exit 0; A's stop reports its finish on path 1 acked and
//     the one on path 0 abandoned.
//
// argv[1]: ufab-edge, argv[2]: ufab-core, argv[3]: ufab-vmgen (empty when not
// built: exit 77).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"
#include "tests/integration/vm_procs.hpp"

namespace {

using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB = 0xc0a8000b;
constexpr size_t kBefore = 30, kAfter = 40;

const char* kParams = R"(params:
  unit_bw_gbps: 1
  idle_finish_ms: 60000
  probe_timeout_rtts: 400  # 200 ms: a response delayed by a loaded CI machine is not a loss
tenants:
  - {vni: 100, guarantee_gbps: 2}
)";

std::string config_a() {
  return std::string(R"(edge:
  fabric_port: [1, 2]
  ip: 10.0.0.1
  mac: "02:00:00:00:00:01"
)") + kParams +
         R"(vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
hosts:
  - name: hB
    ip: 10.0.0.2
    mac: "02:00:00:00:00:02"
    base_rtt_us: 500
    paths: [{labels: [1], port: 1}, {labels: [1], port: 2}]
    reply_path: {labels: [1], port: 1}
remote_vms:
  - {name: b, id: 11, tenant: 100, ip: 192.168.0.11, host: hB}
)";
}

std::string config_b() {
  return std::string(R"(edge:
  fabric_port: [1, 2]
  ip: 10.0.0.2
  mac: "02:00:00:00:00:02"
)") + kParams +
         R"(vms:
  - {name: b, id: 11, tenant: 100, mac: "02:00:00:00:0b:01", ip: 192.168.0.11, port: 0}
hosts:
  - name: hA
    ip: 10.0.0.1
    mac: "02:00:00:00:00:01"
    base_rtt_us: 500
    paths: [{labels: [0], port: 1}, {labels: [0], port: 2}]
    reply_path: {labels: [0], port: 1}
remote_vms:
  - {name: a1, id: 1, tenant: 100, ip: 192.168.0.1, host: hA}
)";
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<VmTestBins> bins = vm_test_bins(argc, argv);
  if (!bins) return 77;
  const std::string &edge = bins->edge, &core = bins->core, &vmgen = bins->vmgen;
  install_kill_on_term();
  const std::string dir = make_test_dir("ufab_edge_uplink_loss");
  if (dir.empty()) return 1;
  const std::string tag = std::to_string(getpid());
  const std::string pa = "ufabulA" + tag, pb = "ufabulB" + tag, pc1 = "ufabulC" + tag, pc2 = "ufabulD" + tag;
  write_text(dir + "/A.yaml", config_a());
  write_text(dir + "/B.yaml", config_b());
  const std::vector<Frame> before = run_frames(kA1, kB, kBefore, 1), after = run_frames(kA1, kB, kAfter, 2);
  write_pcap(dir + "/before.pcap", before);
  write_pcap(dir + "/after.pcap", after);
  write_pcap(dir + "/empty.pcap", {});

  const auto edge_cmd = [&](const std::string& prefix, const char* lcore, const std::string& me, const std::string& role) {
    std::vector<std::string> c = {edge};
    // The uplink's loss is logged at NOTICE, which edge_eal's global level
    // (error) hides whatever the type's level.
    for (const std::string& s : edge_eal(prefix, lcore)) c.push_back(s == "error" ? "notice" : s);
    c.insert(c.end(), {"--log-level", "ufab.edge:notice", "--vdev", "net_vhost0,iface=" + dir + "/vm" + me + ".sock"});
    for (int k = 1; k <= 2; ++k)
      c.insert(c.end(), {"--vdev", "net_memif" + std::to_string(k - 1) + ",role=" + role + ",socket=" + dir + "/" + me +
                                       std::to_string(k) + ".sock"});
    c.insert(c.end(), {"--", "--config", dir + "/" + me + ".yaml", "--stats-interval", "0"});
    return c;
  };
  // Core k: port 0 (server) toward A, port 1 (client) toward B.
  const auto core_cmd = [&](const std::string& prefix, int k) {
    std::vector<std::string> c = {core};
    for (const std::string& s : edge_eal(prefix, "1")) c.push_back(s);
    c.insert(c.end(), {"--vdev", "net_memif0,role=server,socket=" + dir + "/A" + std::to_string(k) + ".sock", "--vdev",
                       "net_memif1,role=client,socket=" + dir + "/B" + std::to_string(k) + ".sock", "--",
                       "--stats-interval", "0"});
    return c;
  };
  const int pid_b = spawn(edge_cmd(pb, "0", "B", "server"), dir + "/b.out", dir + "/b.err");
  track_process(pid_b);
  ITEST_CHECK(wait_for_text(dir + "/b.out", "VM-pairs", 30), "edge B did not start: %s", read_file(dir + "/b.err").c_str());
  const int pid_c1 = spawn(core_cmd(pc1, 1), dir + "/c1.out", dir + "/c1.err");
  track_process(pid_c1);
  const int pid_c2 = spawn(core_cmd(pc2, 2), dir + "/c2.out", dir + "/c2.err");
  track_process(pid_c2);
  ITEST_CHECK(wait_for_text("/proc/net/unix", dir + "/A1.sock", 15) && wait_for_text("/proc/net/unix", dir + "/A2.sock", 15),
              "the switches do not listen");
  std::this_thread::sleep_for(std::chrono::seconds(1));  // their ports started
  const int pid_a = spawn(edge_cmd(pa, "1", "A", "client"), dir + "/a.out", dir + "/a.err");
  track_process(pid_a);
  ITEST_CHECK(wait_for_text(dir + "/a.out", "VM-pairs", 30), "edge A did not start: %s", read_file(dir + "/a.err").c_str());
  const auto a_stats = [&] { return telemetry(pa, "/ufab/stats"); };
  ITEST_CHECK(wait_until([&] { return port_stat(a_stats(), 1, "link_up") == 1 && port_stat(a_stats(), 2, "link_up") == 1; }, 15),
              "edge A: both uplinks up: %s", a_stats().c_str());

  VmGens vms(vmgen, dir, tag);
  const auto b_stat = [&](int port, const char* key) { return port_stat(telemetry(pb, "/ufab/stats"), port, key); };
  const auto a_stat = [&](int port, const char* key) { return port_stat(a_stats(), port, key); };
  const int vm_b = vms.start("vmB.sock", dir + "/empty.pcap", dir + "/b_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_stat(0, "link_up") == 1; }, 10), "edge B: VM b's port up");

  // 1. a1 -> b on path 0 (core 1).
  const std::string drained = telemetry(pa, "/ufab/path_drain,hB,1");
  ITEST_CHECK(drained.find("\"ok\":1") != std::string::npos && drained.find("\"uplink_down\":0") != std::string::npos,
              "1: path_drain: %s", drained.c_str());
  int vm_a = vms.start("vmA.sock", dir + "/before.pcap", dir + "/a1_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_stat(0, "tx") == static_cast<long long>(kBefore); }, 20),
              "1: edge B handed VM b %lld of a1's %zu frames", b_stat(0, "tx"), kBefore);
  vms.stop(vm_a);
  const long long port1_before = a_stat(1, "tx"), port2_before = a_stat(2, "tx");
  ITEST_CHECK(port1_before >= static_cast<long long>(kBefore), "1: A's port 1 sent %lld (a1's %zu frames and probes)",
              port1_before, kBefore);
  const std::string pair1 = telemetry(pa, "/ufab/pair,0");
  ITEST_CHECK(json_number(pair1, "path") == 0 && json_number(pair1, "migrations") == 0, "1: a1 -> b on path 0: %s",
              pair1.c_str());
  ITEST_CHECK(telemetry(pa, "/ufab/path_undrain,hB,1").find("\"ok\":1") != std::string::npos, "1: path_undrain");

  // 2. Core 1 gone.
  const auto killed = std::chrono::steady_clock::now();
  kill(pid_c1, SIGKILL);
  ITEST_CHECK(wait_until([&] { return json_number(telemetry(pa, "/ufab/pair,0"), "path") == 1; }, 10),
              "2: a1 -> b moved to path 1: %s", telemetry(pa, "/ufab/pair,0").c_str());
  // For the record (no bound asserted: a loaded machine stretches it): the
  // link poll (10 ms), the memif's own detection and one query's RTT, seen
  // through telemetry polled every 20 ms.
  std::printf("a1 -> b on path 1 %.0f ms after core 1 was killed\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - killed).count());
  const RunResult rc1 = wait_with_deadline(pid_c1, 10);
  untrack_process(pid_c1);
  ITEST_CHECK(!rc1.timed_out, "core 1 did not die");
  ITEST_CHECK(wait_for_text(dir + "/a.err", "fabric port 1: link down; its 1 path(s) are drained until it is up", 10),
              "2: edge A's log: %s", read_file(dir + "/a.err").c_str());
  ITEST_CHECK(json_number(a_stats(), "uplink_failovers") == 1, "2: uplink_failovers: %s", a_stats().c_str());
  ITEST_CHECK(wait_for_text(dir + "/b.err", "host hA: responses and finish-acks by path 1 (the reply path's uplink is down)", 10),
              "2: edge B's log: %s", read_file(dir + "/b.err").c_str());
  const std::string paths = telemetry(pa, "/ufab/paths");
  ITEST_CHECK(paths.find("\"path0\":\"udp_src=49152 active_pairs=") != std::string::npos &&
                  paths.find("labels=1 port=1 uplink_down=1\"") != std::string::npos &&
                  paths.find("labels=1 port=2 uplink_down=0\"") != std::string::npos,
              "2: /ufab/paths: %s", paths.c_str());
  // The finish a1 -> b started on path 0 when it left it could not leave
  // (port 1's link is down): abandoned, not retried into the dead link.
  const std::string pair0 = telemetry(pa, "/ufab/pair,0");
  ITEST_CHECK(json_number(pair0, "finish_abandoned") == 1 && json_number(pair0, "finish_gave_up") == 0,
              "2: a1 -> b's finish on path 0 abandoned: %s", pair0.c_str());
  const std::string undrain0 = telemetry(pa, "/ufab/path_undrain,hB,0");
  ITEST_CHECK(undrain0.find("\"ok\":1") != std::string::npos && undrain0.find("\"uplink_down\":1") != std::string::npos,
              "2: undraining path 0: %s", undrain0.c_str());
  vm_a = vms.start("vmA.sock", dir + "/after.pcap", dir + "/a1_out2.pcap");
  ITEST_CHECK(wait_until([&] { return b_stat(0, "tx") == static_cast<long long>(kBefore + kAfter); }, 20),
              "2: edge B handed VM b %lld of a1's %zu frames", b_stat(0, "tx"), kBefore + kAfter);
  vms.stop(vm_a);
  const std::string pair2 = telemetry(pa, "/ufab/pair,0");
  ITEST_CHECK(json_number(pair2, "path") == 1 && json_number(pair2, "migrations") == 1, "2: a1 -> b: %s", pair2.c_str());
  ITEST_CHECK(a_stat(1, "tx") == port1_before && a_stat(2, "tx") >= port2_before + static_cast<long long>(kAfter),
              "2: A's port 1 sent %lld (before %lld), port 2 %lld (before %lld)", a_stat(1, "tx"), port1_before,
              a_stat(2, "tx"), port2_before);
  vms.stop(vm_b);
  std::vector<Frame> all = before;
  all.insert(all.end(), after.begin(), after.end());
  ITEST_CHECK(same_frames(all, read_pcap(dir + "/b_out.pcap")), "3: VM b got a1's %zu frames unchanged", all.size());

  const auto stop = [](int pid) {
    kill(pid, SIGTERM);
    return wait_with_deadline(pid, 30);
  };
  const RunResult ra = stop(pid_a), rb = stop(pid_b), rc2 = stop(pid_c2);
  untrack_all();
  for (const std::string& p : {pa, pb, pc1, pc2}) remove_dpdk_runtime(p);
  for (const std::string& p : vms.prefixes()) remove_dpdk_runtime(p);
  const std::string out_a = read_file(dir + "/a.out"), out_b = read_file(dir + "/b.out");
  std::printf("edge A:\n%sedge B:\n%s", out_a.c_str(), out_b.c_str());
  ITEST_CHECK(!ra.timed_out && ra.exit_code == 0, "edge A failed (timed out %d, exit %d, signal %d)", ra.timed_out,
              ra.exit_code, ra.signal);
  ITEST_CHECK(!rb.timed_out && rb.exit_code == 0, "edge B failed (timed out %d, exit %d, signal %d)", rb.timed_out,
              rb.exit_code, rb.signal);
  ITEST_CHECK(!rc2.timed_out && rc2.exit_code == 0, "core 2 failed (timed out %d, exit %d, signal %d)", rc2.timed_out,
              rc2.exit_code, rc2.signal);
  ITEST_CHECK(out_a.find("ufab-edge stop: finish done (") != std::string::npos &&
                  out_a.find(" abandoned=1 pending=0)") != std::string::npos,
              "edge A's stop: the finish on path 1 acked, the one on path 0 abandoned");
  auto fa = parse_line(out_a, "ufab-edge final "), fb = parse_line(out_b, "ufab-edge final ");
  ITEST_CHECK(fa["conserved"] == 1 && fa["queued"] == 0 && fa["encap"] == kBefore + kAfter,
              "edge A: conserved, a1's %zu frames sent", kBefore + kAfter);
  ITEST_CHECK(fb["conserved"] == 1 && fb["decap"] == kBefore + kAfter, "edge B: conserved, a1's frames delivered");
  return conclude(dir, "ufab_edge_uplink_loss: an uplink's switch killed; the edge drained the paths on it, the pair "
                        "moved to the other uplink's path and every frame reached the VM; every frame counted");
}
