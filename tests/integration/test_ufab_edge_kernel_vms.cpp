// Two VMs with real network stacks through two ufab-edges and a ufab-core
// (issue 4: the VM side; proxy ARP, IPv6 and its neighbour discovery
// proxy). Each "VM" is a Linux network namespace with one veth (its vNIC:
// the configured MAC and addresses, 192.168.0.1/24 and fd00::1/64, .2 and
// ::2 for the other; no static neighbour entry; transmit checksums done in
// software as a VM's virtio-net would without offloads); the veth's other
// end is the edge's VM-side port (net_af_packet). The edges' fabric ports
// are memifs to the switch, as in ufab_edge_round_trip. Checked:
//  - `ping` and `ping -6` from VM a to VM b: every echo answered (ARP for
//    192.168.0.2 and neighbour solicitations for fd00::2 and, on b's side,
//    for a's addresses, answered by the edges in the remote VM's name);
//  - a's neighbour tables hold b at the MAC remote_vms[].mac gives;
//  - a TCP stream of 4 MB from a to b over IPv4, and another over IPv6,
//    arrive whole (byte count and SHA-256);
//  - VM c, a third namespace on edge A's second VM port (192.168.0.3,
//    fd00::3, tenant 100: a local VM of a's tenant, no pair between them):
//    ping and ping -6 from a to c answered, a's neighbour entries for c at
//    c's MAC (ARP and ND answered by edge A for a local VM), a 4 MB TCP
//    stream a -> c whole; edge A counts local_delivered, and its table
//    lookups stay a small fraction of them (the exact-match cache holds
//    the local flows' keys);
//  - path MTU discovery: with a's and b's vNICs at MTU 1800, above the VM
//    MTU (1518 at the default edge.fabric_mtu), 4 MB of TCP from a to b
//    over IPv4 and over IPv6 arrive whole, a's kernel holds path MTU 1518
//    for b (learned from edge A's ICMP and ICMPv6 answers, ptb_sent);
//  - both edges answered ARP and solicitations (arp_replied, nd_replied
//    >= 1), encapsulated and decapsulated, and conserve every frame (rx +
//    generated == tx + queued + dropped + absorbed; the kernels' router
//    solicitations, MLD reports and duplicate address detection are
//    dropped under their reasons).
// Needs root (namespaces), ip, ping, ethtool and python3; otherwise it skips
// and says which is missing.
//
// argv[1]: ufab-edge, argv[2]: ufab-core (either empty: not built, exit 77).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

std::string g_ns[3], g_host_if[3];


void remove_namespaces() {
  for (const std::string& ns : g_ns)
    if (!ns.empty()) shell("ip netns del " + ns + " 2>/dev/null");
}
extern "C" void on_term(int) {
  remove_namespaces();
  _exit(1);
}

// Edge `me` (10.0.0.x) with local VM `vm` and the peer's VM as remote; the
// peer host is reached on the switch's port `label`. Edge 1 also has VM c
// on port 2 (its second VM port; the memif is port 1).
std::string config(int me, const char* label) {
  const int peer = 3 - me;
  const char vm = me == 1 ? 'a' : 'b', other = me == 1 ? 'b' : 'a';
  char buf[2048];
  std::snprintf(buf, sizeof(buf), R"(edge:
  fabric_port: 1
  ip: 10.0.0.%d
  mac: "02:00:00:00:00:0%d"
params:
  unit_bw_gbps: 1
  probe_timeout_rtts: 200  # 200 ms: a response a loaded machine delays is not a loss
tenants:
  - {vni: 100, guarantee_gbps: 1}
vms:
  - {name: %c, id: %d, tenant: 100, mac: "02:00:00:00:0%c:01", ip: 192.168.0.%d, ip6: "fd00::%d", port: 0}
%shosts:
  - {name: peer, ip: 10.0.0.%d, mac: "02:00:00:00:00:0%d", base_rtt_us: 1000, paths: [[%s]]}
remote_vms:
  - {name: %c, id: %d, tenant: 100, mac: "02:00:00:00:0%c:01", ip: 192.168.0.%d, ip6: "fd00::%d", host: peer}
)",
                me, me, vm, me, vm, me, me,
                me == 1 ? "  - {name: c, id: 3, tenant: 100, mac: \"02:00:00:00:0c:01\", ip: 192.168.0.3, ip6: \"fd00::3\", "
                          "port: 2}\n"
                        : "",
                peer, peer, label, other, peer, other, peer, peer);
  return buf;
}

// host_if2: a second VM port after the memif (port 2), "" for none.
std::vector<std::string> edge_cmd(const std::string& exe, const std::string& prefix, const char* lcore,
                                  const std::string& host_if, const std::string& memif, const std::string& yaml,
                                  const std::string& host_if2 = "") {
  std::vector<std::string> c = {exe};
  for (const std::string& s : edge_eal(prefix, lcore)) c.push_back(s);
  c.insert(c.end(), {"--vdev", "net_af_packet0,iface=" + host_if, "--vdev", "net_memif0," + memif});
  if (!host_if2.empty()) c.insert(c.end(), {"--vdev", "net_af_packet1,iface=" + host_if2});
  c.insert(c.end(), {"--", "--config", yaml, "--stats-interval", "0"});
  return c;
}

// argv[1]: the address to listen on (IPv4 or IPv6).
const char* kSink = R"(import hashlib, socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5001))
s.listen(1)
s.settimeout(30)
print("listening", flush=True)
c, _ = s.accept()
c.settimeout(30)
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(65536)
    if not b:
        break
    h.update(b)
    n += len(b)
print(n, h.hexdigest(), flush=True)
)";

// argv[1]: the address to connect to.
const char* kSource = R"(import hashlib, socket, sys
data = bytes((i * 7 + i // 251) & 0xff for i in range(4 << 20))
s = socket.create_connection((sys.argv[1], 5001), timeout=30)
s.sendall(data)
s.close()
print(len(data), hashlib.sha256(data).hexdigest(), flush=True)
)";

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

// ping from VM a to addr: every echo answered, and a's neighbour entry
// for addr at `mac` (the configuration's `whose`).
void ping_from_a(const char* addr, const char* mac, const char* whose) {
  const std::string ping = shell_output("ip netns exec " + g_ns[0] + " ping -c 5 -i 0.2 -W 5 " + addr + " 2>&1");
  std::printf("ping %s:\n%s", addr, ping.c_str());
  ITEST_CHECK(ping.find("5 packets transmitted, 5 received") != std::string::npos, "%s: every echo answered", addr);
  const std::string neigh = shell_output("ip -n " + g_ns[0] + " neigh show " + addr);
  std::printf("a's neighbour entry: %s", neigh.c_str());
  ITEST_CHECK(neigh.find(std::string("lladdr ") + mac) != std::string::npos, "a resolved %s to %s", addr, whose);
}

// 4 MB of TCP from VM a to addr, received in namespace g_ns[to]: both
// ends exit 0 and the bytes arrive whole. tag names the files in dir.
void tcp_from_a(const std::string& dir, int to, const char* addr, const std::string& tag) {
  const std::string sink_out = dir + "/sink" + tag + ".out", source_out = dir + "/source" + tag + ".out";
  const std::string sink_err = dir + "/sink" + tag + ".err", source_err = dir + "/source" + tag + ".err";
  const int pid_sink = spawn({"/bin/sh", "-c", "exec ip netns exec " + g_ns[to] + " python3 " + dir + "/sink.py " + addr},
                             sink_out, sink_err);
  ITEST_CHECK(wait_for_text(sink_out, "listening", 15), "%s: the TCP sink did not start", addr);
  const RunResult src = run_with_deadline(
      {"/bin/sh", "-c", "exec ip netns exec " + g_ns[0] + " python3 " + dir + "/source.py " + addr}, source_out,
      source_err, 60);
  const RunResult sink = wait_with_deadline(pid_sink, 60);
  const std::string sent = read_file(source_out), got = read_file(sink_out);
  std::printf("TCP to %s sent: %sreceived: %s", addr, sent.c_str(), got.c_str());
  ITEST_CHECK(src.exit_code == 0 && sink.exit_code == 0, "%s: TCP source exit %d (%s), sink exit %d (%s)", addr,
              src.exit_code, read_file(source_err).c_str(), sink.exit_code, read_file(sink_err).c_str());
  ITEST_CHECK(!sent.empty() && got.find(sent) != std::string::npos, "%s: the 4 MB arrived whole", addr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]).empty() || std::string(argv[2]).empty()) {
    std::printf("SKIP: ufab-edge or ufab-core was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  if (geteuid() != 0) {
    std::printf("SKIP: the VMs are network namespaces, which need root; run the tests as root\n");
    return 77;
  }
  for (const char* tool : {"ip", "ping", "ethtool", "python3"})
    if (shell(std::string("command -v ") + tool + " >/dev/null 2>&1") != 0) {
      std::printf("SKIP: %s is not on PATH (Debian packages iproute2, iputils-ping, ethtool, python3)\n", tool);
      return 77;
    }
  const std::string edge = argv[1], core = argv[2];
  const std::string dir = make_test_dir("ufab_edge_kernel_vms");
  if (dir.empty()) return 1;
  const std::string tag = std::to_string(getpid());
  g_ns[0] = "ufkva" + tag;
  g_ns[1] = "ufkvb" + tag;
  g_host_if[0] = "ufka" + tag;
  g_host_if[1] = "ufkb" + tag;
  g_ns[2] = "ufkvc" + tag;
  g_host_if[2] = "ufkc" + tag;
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);

  // Each VM: a namespace with one veth end (its vNIC), the other end in
  // this namespace for the edge. No offloads on the vNIC: the edges see
  // frames of at most the MTU with their checksums filled in.
  bool setup = true;
  for (int i = 0; i < 3; ++i) {
    const char x = static_cast<char>('a' + i);  // VM a, b, c
    const std::string ns = g_ns[i], vnic = std::string("v") + x, h = g_host_if[i];
    const std::string mac = std::string("02:00:00:00:0") + x + ":01";
    const std::string ip = "192.168.0." + std::to_string(i + 1) + "/24", ip6 = "fd00::" + std::to_string(i + 1) + "/64";
    setup = setup && shell("ip netns add " + ns + " && ip link add " + h + " type veth peer name " + vnic + " netns " + ns +
                        " && sysctl -qw net.ipv6.conf." + h + ".disable_ipv6=1" +
                        " && ip -n " + ns + " link set " + vnic + " address " + mac +
                        " && ip -n " + ns + " addr add " + ip + " dev " + vnic +
                        " && ip -n " + ns + " addr add " + ip6 + " dev " + vnic + " nodad" +
                        " && ip netns exec " + ns + " ethtool -K " + vnic + " tx off sg off tso off gso off >/dev/null" +
                        " && ethtool -K " + h + " gro off >/dev/null" +
                        " && ip -n " + ns + " link set lo up && ip -n " + ns + " link set " + vnic + " up" +
                        " && ip link set " + h + " up") == 0;
  }
  ITEST_CHECK(setup, "namespaces and veths");
  if (!setup) {
    remove_namespaces();
    return conclude(dir, "");
  }
  write_text(dir + "/A.yaml", config(1, "1"));
  write_text(dir + "/B.yaml", config(2, "0"));
  write_text(dir + "/sink.py", kSink);
  write_text(dir + "/source.py", kSource);

  // B (memif server towards the switch), the switch, then A, as in
  // ufab_edge_round_trip: a memif client connects only to a started server.
  const std::string pa = "ufabkvA" + tag, pb = "ufabkvB" + tag, pc = "ufabkvC" + tag;
  const int pid_b = spawn(edge_cmd(edge, pb, "0", g_host_if[1], "role=server,socket=" + dir + "/b.sock", dir + "/B.yaml"),
                          dir + "/b.out", dir + "/b.err");
  ITEST_CHECK(wait_for_text(dir + "/b.out", "VM-pairs", 15), "edge B did not start");
  const Spawned sw = spawn_switch_between_edges(core, pc, dir, 15);
  const int pid_c = sw.pid;
  ITEST_CHECK(sw.ready, "the switch does not listen");
  const int pid_a = spawn(edge_cmd(edge, pa, "1", g_host_if[0], "role=client,socket=" + dir + "/a.sock", dir + "/A.yaml", g_host_if[2]),
                          dir + "/a.out", dir + "/a.err");
  ITEST_CHECK(wait_for_text(dir + "/a.out", "VM-pairs", 15), "edge A did not start");
  std::this_thread::sleep_for(std::chrono::seconds(1));

  for (const char* b : {"192.168.0.2", "fd00::2"}) {
    // ping: ARP or neighbour discovery on both sides, then the echoes.
    ping_from_a(b, "02:00:00:00:0b:01", "remote_vms[].mac");
    tcp_from_a(dir, 1, b, std::string(b).find(':') != std::string::npos ? "6" : "4");
  }
  // a -> c: two local VMs of one tenant on edge A, switched by it (no pair).
  for (const char* c : {"192.168.0.3", "fd00::3"}) ping_from_a(c, "02:00:00:00:0c:01", "c's vms[].mac");
  tcp_from_a(dir, 2, "192.168.0.3", "c");

  const std::string tel = telemetry(pa, "/ufab/stats");
  std::printf("A /ufab/stats: %s\n", tel.c_str());
  ITEST_CHECK(json_number(tel, "arp_replied") >= 1, "/ufab/stats shows arp_replied");
  // 4 MB at most 1500 B a frame, plus the echoes, each way; the local flows'
  // keys held in the exact-match cache after their first bursts.
  const long long local = json_number(tel, "local_delivered"), lookups = json_number(tel, "classify_lookups");
  ITEST_CHECK(local >= 2800 && lookups >= 0 && lookups * 10 < local, "/ufab/stats local_delivered=%lld "
              "classify_lookups=%lld", local, lookups);

  // Path MTU discovery: a's and b's vNICs (and their host ends) at MTU 1800,
  // above the VM MTU (1518 at the default edge.fabric_mtu, 1600). Edge A
  // answers a's 1814-byte TCP frames with ICMP "fragmentation needed" /
  // ICMPv6 "packet too big"; a's kernel caches path MTU 1518 for b and sends
  // smaller segments, so the 4 MB arrive whole. Without the answers those
  // frames would vanish in the edge and the stream would stall.
  bool mtu_set = true;
  for (int i = 0; i < 2; ++i)
    mtu_set = mtu_set && shell("ip link set " + g_host_if[i] + " mtu 1800 && ip -n " + g_ns[i] + " link set v" +
                            std::string(1, static_cast<char>('a' + i)) + " mtu 1800") == 0;
  ITEST_CHECK(mtu_set, "the vNICs of a and b at MTU 1800");
  for (const char* b : {"192.168.0.2", "fd00::2"}) {
    tcp_from_a(dir, 1, b, std::string(b).find(':') != std::string::npos ? "6big" : "4big");
    const std::string route = shell_output("ip -n " + g_ns[0] + " route get " + b + " 2>&1");
    std::printf("a's route to %s: %s", b, route.c_str());
    ITEST_CHECK(route.find("mtu 1518") != std::string::npos, "a's kernel learned path MTU 1518 for %s", b);
  }

  for (const int pid : {pid_a, pid_b, pid_c}) kill(pid, SIGTERM);
  const RunResult ra = wait_with_deadline(pid_a, 30), rb = wait_with_deadline(pid_b, 30), rc = wait_with_deadline(pid_c, 30);
  for (const std::string& p : {pa, pb, pc}) remove_dpdk_runtime(p);
  remove_namespaces();

  const std::string out_a = read_file(dir + "/a.out"), out_b = read_file(dir + "/b.out");
  std::printf("edge A:\n%sedge B:\n%sswitch:\n%s", out_a.c_str(), out_b.c_str(), read_file(dir + "/c.out").c_str());
  ITEST_CHECK(!ra.timed_out && ra.exit_code == 0, "edge A: %s", read_file(dir + "/a.err").c_str());
  ITEST_CHECK(!rb.timed_out && rb.exit_code == 0, "edge B: %s", read_file(dir + "/b.err").c_str());
  ITEST_CHECK(!rc.timed_out && rc.exit_code == 0, "switch: %s", read_file(dir + "/c.err").c_str());
  for (const std::string* out : {&out_a, &out_b}) {
    auto f = parse_line(*out, "ufab-edge final ");
    const char* who = out == &out_a ? "A" : "B";
    ITEST_CHECK(f["arp_replied"] >= 1 && f["nd_replied"] >= 1 && f["encap"] > 0 && f["decap"] > 0,
                "edge %s: arp_replied=%llu nd_replied=%llu encap=%llu decap=%llu", who, U(f["arp_replied"]),
                U(f["nd_replied"]), U(f["encap"]), U(f["decap"]));
    ITEST_CHECK(f["conserved"] == 1 && f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"],
                "edge %s: conservation", who);
  }
  // At least one answer per family (a resends what was dropped: every
  // too_big frame of a's is counted, answered or not).
  auto fa = parse_line(out_a, "ufab-edge final ");
  ITEST_CHECK(fa["ptb_sent"] >= 2 && fa["drop.too_big"] >= fa["ptb_sent"], "edge A: ptb_sent=%llu too_big=%llu",
              U(fa["ptb_sent"]), U(fa["drop.too_big"]));
  return conclude(dir, "kernel VMs in namespaces ping and stream TCP over IPv4 and IPv6 through two ufab-edges, "
                      "and between two local VMs of edge A, ARP and neighbour discovery answered by the edges, "
                      "path MTU learned from edge A's too-big answers");
}
