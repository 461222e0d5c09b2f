// Two ufab-edge processes with one ufab-core between them (issue 4 §7: the
// encap/decap round trip between two edges). Edge A has two VM ports, one per
// tenant (the tenants use the same VM addresses: the port names the tenant),
// replayed from pcaps; its fabric port is a memif to the switch. Edge B
// delivers on two VM ports captured to pcaps. Checked:
//  - every frame reaches the right VM port of B unchanged and in order;
//  - A's pairs probed, got responses through the switch (B reflected them),
//    became active with a positive window, and every byte sent was acked;
//  - no drops, nothing left queued, and conservation holds on both edges;
//  - the telemetry commands answer on B's socket (/ufab/stats, /ufab/pairs,
//    /ufab/tenants, /ufab/paths), as dpdk-telemetry.py would ask them.
//
// argv[1]: ufab-edge, argv[2]: ufab-core (empty when not built: exit 77);
// argv[3] "workers": both edges with a control lcore and two workers.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

constexpr uint32_t kVmA = 0xc0a80001, kVmB = 0xc0a80002;

std::string config(const char* me, const char* peer, const char* my_mac, const char* peer_mac, int my_id, int peer_id,
                   const char* label, const char* vm_ip, const char* peer_vm_ip) {
  char buf[2048];
  std::snprintf(buf, sizeof(buf), R"(edge:
  fabric_port: 2
  ip: %s
  mac: "%s"
params:
  unit_bw_gbps: 1
  idle_finish_ms: 20
  probe_timeout_rtts: 400  # 200 ms: a response delayed by a loaded CI machine is not a loss
tenants:
  - {vni: 100, guarantee_gbps: 2, weight_class: 1}
  - {vni: 200, guarantee_gbps: 1, weight_class: 0}
vms:
  - {name: t100_%d, id: %d, tenant: 100, mac: "02:00:00:00:0a:01", ip: %s, port: 0}
  - {name: t200_%d, id: %d, tenant: 200, mac: "02:00:00:00:0a:02", ip: %s, port: 1}
hosts:
  - name: peer
    ip: %s
    mac: "%s"
    base_rtt_us: 500
    paths: [[%s]]
remote_vms:
  - {name: t100_%d, id: %d, tenant: 100, ip: %s, host: peer}
  - {name: t200_%d, id: %d, tenant: 200, ip: %s, host: peer}
)",
                me, my_mac, my_id, my_id, vm_ip, my_id + 1, my_id + 1, vm_ip, peer, peer_mac, label, peer_id, peer_id,
                peer_vm_ip, peer_id + 1, peer_id + 1, peer_vm_ip);
  return buf;
}

// With `workers`, each edge runs a control lcore and two workers (three
// lcores on the two cores; tenant 100's VM and tenant 200's VM on different
// workers) instead of one lcore.
bool g_workers = false;

std::vector<std::string> edge_cmd(const std::string& exe, const std::string& prefix, const char* lcore,
                                  const std::string& dir, const std::string& me, const std::string& memif) {
  std::vector<std::string> c = {exe};
  for (const std::string& s : edge_eal(prefix, lcore)) {
    if (g_workers && s == "-l") {
      c.push_back("--lcores");
    } else if (g_workers && s == lcore) {
      c.push_back("(0-2)@(0,1)");
    } else {
      c.push_back(s);
    }
  }
  c.insert(c.end(), {"--vdev", "net_pcap0,rx_pcap=" + dir + "/" + me + "0_in.pcap,tx_pcap=" + dir + "/" + me + "0_out.pcap",
                     "--vdev", "net_pcap1,rx_pcap=" + dir + "/" + me + "1_in.pcap,tx_pcap=" + dir + "/" + me + "1_out.pcap",
                     "--vdev", "net_memif0," + memif, "--", "--config", dir + "/" + me + ".yaml",
                     "--stats-interval", "0"});
  return c;
}

// Frames of one flow (inner UDP source port) that arrive after a later one of
// the same flow. The scheduler serves a pair's flows round robin (§4.1), so
// only per-flow order is expected, and it must hold (edge A once hashed a
// flow's frames into different FIFOs, pipeline/vm_rx.cpp).
size_t flow_inversions(const std::vector<Frame>& sent, const std::vector<Frame>& got) {
  std::map<size_t, size_t> pos;
  for (size_t i = 0; i < sent.size(); ++i) pos[sent[i].size()] = i;
  std::map<uint16_t, size_t> last;
  size_t n = 0;
  for (const Frame& f : got) {
    const auto flow = static_cast<uint16_t>(f[34] << 8 | f[35]);
    const size_t p = pos[f.size()];
    if (last.count(flow) != 0 && p < last[flow]) ++n;
    last[flow] = std::max(last[flow], p);
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]).empty() || std::string(argv[2]).empty()) {
    std::printf("SKIP: ufab-edge or ufab-core was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string edge = argv[1], core = argv[2];
  g_workers = argc > 3 && std::string(argv[3]) == "workers";
  char tmpl[] = "/tmp/ufab_edge_rt.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl, tag = std::to_string(getpid());
  const std::string pa = "ufabedgeA" + tag, pb = "ufabedgeB" + tag, pc = "ufabedgeC" + tag;
  write_text(dir + "/A.yaml", config("10.0.0.1", "10.0.0.2", "02:00:00:00:00:01", "02:00:00:00:00:02", 1, 11, "1",
                                     "192.168.0.1", "192.168.0.2"));
  write_text(dir + "/B.yaml", config("10.0.0.2", "10.0.0.1", "02:00:00:00:00:02", "02:00:00:00:00:01", 11, 1, "0",
                                     "192.168.0.2", "192.168.0.1"));
  // Tenant 100 on port 0, tenant 200 on port 1: the same addresses, other payloads and sizes.
  std::vector<Frame> t100, t200;
  for (int i = 0; i < 40; ++i) {
    t100.push_back(vm_frame(kVmA, kVmB, static_cast<uint16_t>(1000 + i % 3), 100 + 31 * static_cast<size_t>(i), 1));
    t200.push_back(vm_frame(kVmA, kVmB, static_cast<uint16_t>(2000 + i % 5), 1400 - 17 * static_cast<size_t>(i), 2));
  }
  write_pcap(dir + "/A0_in.pcap", t100);
  write_pcap(dir + "/A1_in.pcap", t200);
  write_pcap(dir + "/B0_in.pcap", {});
  write_pcap(dir + "/B1_in.pcap", {});

  // A memif peer only connects to a started device and does not retry, so
  // each side starts once its peer runs: B (server towards the switch), then
  // the switch (client of B, server towards A), then A (client).
  std::vector<std::string> b = edge_cmd(edge, pb, "0", dir, "B", "role=server,socket=" + dir + "/b.sock");
  const int pid_b = spawn(b, dir + "/b.out", dir + "/b.err");
  ITEST_CHECK(wait_for_text(dir + "/b.out", "VM-pairs", 15), "edge B did not start");
  const Spawned sw = spawn_switch_between_edges(core, pc, dir, 15);
  const int pid_c = sw.pid;
  ITEST_CHECK(sw.ready, "the switch does not listen");
  std::vector<std::string> a = edge_cmd(edge, pa, "1", dir, "A", "role=client,socket=" + dir + "/a.sock");
  a.insert(a.end(), {"--exit-after-idle-ms", "1500"});
  const int pid_a = spawn(a, dir + "/a.out", dir + "/a.err");
  const RunResult ra = wait_with_deadline(pid_a, 30);

  std::string tel;
  for (const char* cmd : {"/ufab/stats", "/ufab/pairs", "/ufab/tenants", "/ufab/paths"}) tel += telemetry(pb, cmd) + "\n";
  kill(pid_b, SIGTERM);
  const RunResult rb = wait_with_deadline(pid_b, 30);
  kill(pid_c, SIGTERM);
  const RunResult rc = wait_with_deadline(pid_c, 30);
  for (const std::string& p : {pa, pb, pc}) remove_dpdk_runtime(p);

  const std::string out_a = read_file(dir + "/a.out"), out_b = read_file(dir + "/b.out");
  std::printf("edge A:\n%sedge B:\n%sswitch:\n%stelemetry:\n%s", out_a.c_str(), out_b.c_str(),
              read_file(dir + "/c.out").c_str(), tel.c_str());
  ITEST_CHECK(!ra.timed_out && ra.exit_code == 0, "edge A failed: %s", read_file(dir + "/a.err").c_str());
  ITEST_CHECK(!rb.timed_out && rb.exit_code == 0, "edge B failed: %s", read_file(dir + "/b.err").c_str());
  ITEST_CHECK(!rc.timed_out && rc.exit_code == 0, "switch failed (timed out %d, exit %d): %s", rc.timed_out, rc.exit_code,
              read_file(dir + "/c.err").c_str());

  const std::vector<Frame> got100 = read_pcap(dir + "/B0_out.pcap"), got200 = read_pcap(dir + "/B1_out.pcap");
  const size_t inv100 = flow_inversions(t100, got100), inv200 = flow_inversions(t200, got200);
  std::printf("per-flow order inversions: tenant 100 %zu, tenant 200 %zu\n", inv100, inv200);
  ITEST_CHECK(inv100 == 0 && inv200 == 0, "frames of a flow arrived out of order (tenant 100: %zu, tenant 200: %zu)",
              inv100, inv200);
  ITEST_CHECK(same_frames(t100, got100), "tenant 100: %zu of %zu frames delivered unchanged to port 0", got100.size(), t100.size());
  ITEST_CHECK(same_frames(t200, got200), "tenant 200: %zu of %zu frames delivered unchanged to port 1", got200.size(), t200.size());

  auto fa = parse_line(out_a, "ufab-edge final "), fb = parse_line(out_b, "ufab-edge final ");
  ITEST_CHECK(fa["conserved"] == 1 && fa["dropped"] == 0 && fa["queued"] == 0 && fa["encap"] == 80, "edge A counters");
  ITEST_CHECK(fb["conserved"] == 1 && fb["dropped"] == 0 && fb["decap"] == 80 && fb["reflected"] >= 2,
              "edge B counters");
  for (const char* pair : {"ufab-edge pair=0x0001000b ", "ufab-edge pair=0x0002000c "}) {
    auto p = parse_line(out_a, pair);
    ITEST_CHECK(p["probes"] >= 1 && p["responses"] >= 1 && p["sent"] > 0 && p["sent"] == p["acked"],
                "%s: probes, responses, every byte acked", pair);
    ITEST_CHECK(p["window"] > 0 || p["state"] == 2, "%s: a window was applied (or the pair went idle)", pair);
  }
  if (g_workers)
    for (const std::string* o : {&out_a, &out_b}) {
      auto w0 = parse_line(*o, "ufab-edge worker=0 "), w1 = parse_line(*o, "ufab-edge worker=1 ");
      // One local VM per tenant, one pair each: a VM (and its pair) per worker.
      ITEST_CHECK(w0["pairs"] == 1 && w1["pairs"] == 1, "two workers with one pair each");
    }
  ITEST_CHECK(tel.find("\"conserved\":1") != std::string::npos && tel.find("pair_0x000b0001") != std::string::npos &&
                  tel.find("tenant200") != std::string::npos && tel.find("path0") != std::string::npos,
              "telemetry answers");
  if (ufab::itest::g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: 80 frames of two tenants through two edges and a switch, delivered unchanged\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", ufab::itest::g_failures, dir.c_str());
  return 1;
}
