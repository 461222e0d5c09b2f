// A VM that boots on a host while its edge runs (pipeline/local_vms.hpp)
// on a vhost-user port attached while the edge runs (pipeline/ports.hpp):
// edge A starts with VM a1 on net_vhost0 (port 0) and its fabric memif
// (port 1); edge B has VM b on net_vhost0 and knows a1 and a2 as remote VMs
// on host A. One ufab-core between them (memif). The VMs are ufab-vmgen
// processes on virtio-user (client mode, as QEMU is):
//  0. /ufab/port_add,net_vhost1,iface=...: port 2, polled by worker 0.
//     Refused: the same name again, a device no PMD knows, removing the
//     fabric port, port 0 (a1 is on it), a port that does not exist.
//  1. VM b connects. VM a2 boots on A's port 2 and sends 20 frames to b
//     before A's file names it: A polls the port anyway and drops each as
//     unknown_pair.
//  2. A's file gains a2 on port net_vhost1 (by device name, as B's file
//     names b's port); SIGHUP: "local VM a2 added (port 2,
//     worker 0): 1 pair(s)". Removing port 2 is refused (a2 is on it). a2
//     sends 25 frames, which reach b unchanged; then b sends 10 frames to
//     a2, which reach a2 unchanged (A decaps them to port 2).
//  3. /ufab/reload with a2 gone from the file: "local VM a2 removed"; a2's
//     next 15 frames are unknown_pair again.
//  4. /ufab/port_remove,2: detached (its counters stay, "removed": 1);
//     attached again, it takes id 2 again, is polled again (a2's 15 frames
//     once more unknown_pair) and counts on.
// Both edges conserve every frame and exit cleanly; A's port 2 received
// 75 frames and B handed b 25.
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

constexpr uint32_t kA2 = 0xc0a80002, kB = 0xc0a8000b;
constexpr size_t kEarly = 20, kUp = 25, kBack = 10, kGone = 15, kDropped = kEarly + 2 * kGone;

// a2's port by its device name: the port /ufab/port_add attached (id 2).
const char* kA2Line = "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.2, port: net_vhost1}\n";

std::string config_a(bool with_a2) {
  return std::string(R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: "02:00:00:00:00:01"
params:
  unit_bw_gbps: 1
  idle_finish_ms: 20
  probe_timeout_rtts: 400  # 200 ms: a response delayed by a loaded CI machine is not a loss
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
)") + (with_a2 ? kA2Line : "") +
         R"(hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 500, paths: [[1]]}
remote_vms:
  - {name: b, id: 11, tenant: 100, ip: 192.168.0.11, host: hB}
)";
}

const char* kConfigB = R"(edge:
  fabric_port: 1
  ip: 10.0.0.2
  mac: "02:00:00:00:00:02"
params:
  unit_bw_gbps: 1
  idle_finish_ms: 20
  probe_timeout_rtts: 400
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: b, id: 11, tenant: 100, mac: "02:00:00:00:0b:01", ip: 192.168.0.11, port: net_vhost0}
hosts:
  - {name: hA, ip: 10.0.0.1, mac: "02:00:00:00:00:01", base_rtt_us: 500, paths: [[0]]}
remote_vms:
  - {name: a1, id: 1, tenant: 100, ip: 192.168.0.1, host: hA}
  - {name: a2, id: 2, tenant: 100, ip: 192.168.0.2, host: hA}
)";

}  // namespace

int main(int argc, char** argv) {
  const std::optional<VmTestBins> bins = vm_test_bins(argc, argv);
  if (!bins) return 77;
  const std::string &edge = bins->edge, &core = bins->core, &vmgen = bins->vmgen;
  install_kill_on_term();
  const std::string dir = make_test_dir("ufab_edge_vm_boot");
  if (dir.empty()) return 1;
  const std::string tag = std::to_string(getpid());
  const std::string pa = "ufabvbA" + tag, pb = "ufabvbB" + tag, pc = "ufabvbC" + tag;
  write_text(dir + "/A.yaml", config_a(false));
  write_text(dir + "/B.yaml", kConfigB);
  // a2's frames of each run and b's to a2: other flows and sizes per run.
  const std::vector<Frame> early = run_frames(kA2, kB, kEarly, 1), up = run_frames(kA2, kB, kUp, 2),
                           back = run_frames(kB, kA2, kBack, 3), gone = run_frames(kA2, kB, kGone, 4);
  write_pcap(dir + "/early.pcap", early);
  write_pcap(dir + "/up.pcap", up);
  write_pcap(dir + "/back.pcap", back);
  write_pcap(dir + "/gone.pcap", gone);
  write_pcap(dir + "/empty.pcap", {});

  const auto edge_cmd = [&](const std::string& prefix, const char* lcore, const std::string& me, const std::string& memif) {
    std::vector<std::string> c = {edge};
    for (const std::string& s : edge_eal(prefix, lcore)) c.push_back(s);
    c.insert(c.end(), {"--vdev", "net_vhost0,iface=" + dir + "/vm" + me + "0.sock", "--vdev", "net_memif0," + memif});
    c.insert(c.end(), {"--", "--config", dir + "/" + me + ".yaml", "--stats-interval", "0"});
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
  ITEST_CHECK(read_file(dir + "/a.out").find("ufab-edge rx port=2") == std::string::npos, "edge A starts with 2 ports");

  // 0. A vhost-user socket for a2, attached at runtime.
  const std::string a2_devargs = "net_vhost1,iface=" + dir + "/vmA2.sock";
  const std::string added = telemetry(pa, "/ufab/port_add," + a2_devargs);
  ITEST_CHECK(added.find("\"ok\":1") != std::string::npos && json_number(added, "port") == 2 &&
                  added.find("\"rx_mode\":\"dispatch\",\"rx_worker\":0") != std::string::npos,
              "0: port_add: %s", added.c_str());
  ITEST_CHECK(wait_for_text(dir + "/a.out", "ufab-edge port 2 net_vhost1 (net_vhost) link down, VM side, MTU 1500, link events on "
                                            "(attached)", 5),
              "0: A's log names port 2");
  ITEST_CHECK(telemetry(pa, "/ufab/stats").find("\"port2\":{\"name\":\"net_vhost1\",\"rx\":0") != std::string::npos,
              "0: /ufab/stats names port 2's device");
  const auto refused = [&](const std::string& cmd, const std::string& why) {
    const std::string r = telemetry(pa, cmd);
    ITEST_CHECK(r.find("\"ok\":0") != std::string::npos && r.find(why) != std::string::npos, "%s: %s (want %s)", cmd.c_str(),
                r.c_str(), why.c_str());
  };
  refused("/ufab/port_add," + a2_devargs, "a port named net_vhost1 exists already (port 2)");
  refused("/ufab/port_add,net_nosuchpmd0", "cannot attach net_nosuchpmd0");
  refused("/ufab/port_remove,1", "port 1 is a fabric port");
  refused("/ufab/port_remove,0", "port 0 has local VM(s) a1");
  refused("/ufab/port_remove,7", "port 7 does not exist");
  refused("/ufab/port_remove,x", "usage: /ufab/port_remove,PORT");

  VmGens vms(vmgen, dir, tag);
  const auto a_stat = [&](int port, const char* key) { return port_stat(telemetry(pa, "/ufab/stats"), port, key); };
  const auto b_stat = [&](int port, const char* key) { return port_stat(telemetry(pb, "/ufab/stats"), port, key); };
  const auto a_unknown = [&] { return json_number(telemetry(pa, "/ufab/stats"), "unknown_pair"); };

  // 1. a2 boots before A's file names it.
  int vm_b = vms.start("vmB0.sock", dir + "/empty.pcap", dir + "/b1_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_stat(0, "link_up") == 1; }, 10), "edge B: VM b's port up");
  int vm_a2 = vms.start("vmA2.sock", dir + "/early.pcap", dir + "/a2_1_out.pcap");
  ITEST_CHECK(wait_until([&] { return a_unknown() == static_cast<long long>(kEarly); }, 20),
              "1: edge A dropped %lld of a2's %zu frames as unknown_pair", a_unknown(), kEarly);
  vms.stop(vm_a2);

  // 2. The file names a2: SIGHUP.
  write_text(dir + "/A.yaml", config_a(true));
  kill(pid_a, SIGHUP);
  ITEST_CHECK(wait_for_text(dir + "/a.out", "ufab-edge reload ok [local VM a2 added (port 2, worker 0): 1 pair(s)]", 10),
              "2: SIGHUP adding a2: %s", read_file(dir + "/a.out").c_str());
  refused("/ufab/port_remove,2", "port 2 has local VM(s) a2");
  vm_a2 = vms.start("vmA2.sock", dir + "/up.pcap", dir + "/a2_2_out.pcap");
  ITEST_CHECK(wait_until([&] { return b_stat(0, "tx") == static_cast<long long>(kUp); }, 20),
              "2: edge B handed VM b %lld of a2's %zu frames", b_stat(0, "tx"), kUp);
  vms.stop(vm_b);
  ITEST_CHECK(same_frames(up, read_pcap(dir + "/b1_out.pcap")), "2: VM b got a2's frames unchanged");
  vm_b = vms.start("vmB0.sock", dir + "/back.pcap", dir + "/b2_out.pcap");
  ITEST_CHECK(wait_until([&] { return a_stat(2, "tx") == static_cast<long long>(kBack); }, 20),
              "2: edge A handed VM a2 %lld of b's %zu frames", a_stat(2, "tx"), kBack);
  vms.stop(vm_a2);
  vms.stop(vm_b);
  ITEST_CHECK(same_frames(back, read_pcap(dir + "/a2_2_out.pcap")), "2: VM a2 got b's frames unchanged");

  // 3. a2 gone from the file: /ufab/reload.
  write_text(dir + "/A.yaml", config_a(false));
  const std::string reload = telemetry(pa, "/ufab/reload");
  ITEST_CHECK(reload.find("\"changes\":[\"local VM a2 removed: 1 pair(s), 0 queued frame(s) dropped\"]") != std::string::npos,
              "3: reload removing a2: %s", reload.c_str());
  vm_a2 = vms.start("vmA2.sock", dir + "/gone.pcap", dir + "/a2_3_out.pcap");
  ITEST_CHECK(wait_until([&] { return a_unknown() == static_cast<long long>(kEarly + kGone); }, 20),
              "3: edge A dropped %lld frames as unknown_pair (want %zu)", a_unknown(), kEarly + kGone);
  vms.stop(vm_a2);

  // 4. Port 2 detached, then attached again.
  const std::string removed = telemetry(pa, "/ufab/port_remove,2");
  ITEST_CHECK(removed.find("\"ok\":1,\"removed\":2") != std::string::npos, "4: port_remove: %s", removed.c_str());
  const std::string st = telemetry(pa, "/ufab/stats");
  ITEST_CHECK(port_stat(st, 2, "removed") == 1 && port_stat(st, 2, "rx") == static_cast<long long>(kEarly + kUp + kGone) &&
                  telemetry(pa, "/ethdev/list").find("2") == std::string::npos,
              "4: port 2 gone from the EAL, its counters kept: %s", st.c_str());
  const std::string again = telemetry(pa, "/ufab/port_add," + a2_devargs);
  ITEST_CHECK(again.find("\"ok\":1") != std::string::npos && json_number(again, "port") == 2, "4: port_add again: %s",
              again.c_str());
  vm_a2 = vms.start("vmA2.sock", dir + "/gone.pcap", dir + "/a2_4_out.pcap");
  ITEST_CHECK(wait_until([&] { return a_unknown() == static_cast<long long>(kDropped); }, 20),
              "4: edge A dropped %lld frames as unknown_pair (want %zu)", a_unknown(), kDropped);
  vms.stop(vm_a2);

  const auto stop = [](int pid) {
    kill(pid, SIGTERM);
    return wait_with_deadline(pid, 30);
  };
  const RunResult ra = stop(pid_a), rb = stop(pid_b), rc = stop(sw.pid);
  untrack_all();
  for (const std::string& p : {pa, pb, pc}) remove_dpdk_runtime(p);
  for (const std::string& p : vms.prefixes()) remove_dpdk_runtime(p);
  const std::string out_a = read_file(dir + "/a.out"), out_b = read_file(dir + "/b.out");
  std::printf("edge A:\n%sedge B:\n%s", out_a.c_str(), out_b.c_str());
  ITEST_CHECK(!ra.timed_out && ra.exit_code == 0, "edge A failed (timed out %d, exit %d)", ra.timed_out, ra.exit_code);
  ITEST_CHECK(!rb.timed_out && rb.exit_code == 0, "edge B failed (timed out %d, exit %d)", rb.timed_out, rb.exit_code);
  ITEST_CHECK(!rc.timed_out && rc.exit_code == 0, "the switch failed (timed out %d, exit %d)", rc.timed_out, rc.exit_code);
  auto fa = parse_line(out_a, "ufab-edge final "), fb = parse_line(out_b, "ufab-edge final ");
  ITEST_CHECK(fa["conserved"] == 1 && fa["queued"] == 0 && fa["dropped"] == kDropped &&
                  fa["drop.unknown_pair"] == kDropped && fa["encap"] == kUp && fa["decap"] == kBack,
              "edge A: conserved; %zu unknown_pair, a2's %zu frames sent, b's %zu delivered", kDropped, kUp, kBack);
  auto pa2 = parse_line(out_a, "ufab-edge port=2 ");
  ITEST_CHECK(pa2["rx"] == kDropped + kUp && pa2["tx"] == kBack, "edge A's port 2: rx %llu, tx %llu",
              static_cast<unsigned long long>(pa2["rx"]), static_cast<unsigned long long>(pa2["tx"]));
  ITEST_CHECK(fb["conserved"] == 1 && fb["dropped"] == 0 && fb["decap"] == kUp && fb["encap"] == kBack,
              "edge B: conserved, nothing dropped");
  return conclude(dir, "ufab_edge_vm_boot: a VM booted on a vhost-user port attached at runtime, was added and removed "
                        "by reloads; the port detached and attached again; every frame counted");
}
