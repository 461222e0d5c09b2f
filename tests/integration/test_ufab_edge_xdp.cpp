// Host mode on AF_XDP (issue 7 item 4): ufab-edge's fabric port is
// net_af_xdp on one end of a veth pair, with edge/xdp/ufab_steer.bpf.o as
// its XDP program; the other end is a "remote host" in a second network
// namespace (both made and removed by this test). From there the test sends
// uFAB frames (10 tunnel data frames and a probe), 5 UDP datagrams to
// another port and 3 ICMP echo requests, all addressed to the edge host. The
// tunnel uses UDP port 7400 (not the default 7341), which ufab-edge writes
// into the program's ufab_cfg map.
//  1. XDP: the uFAB frames reach ufab-edge (decapsulated to the VM port
//     unchanged, the probe reflected) and nothing else does (not_ufab = 0);
//     the kernel gets exactly the rest (/proc/net/snmp: Udp NoPorts +5,
//     Icmp InEchos +3), and the program is gone once ufab-edge exits.
//  2. Forced attach failure (another XDP program already on the interface):
//     ufab-edge says so and falls back to net_af_packet; the uFAB frames
//     still reach it, and the kernel still answers the pings.
//  3. UFAB_AF_XDP_NO_FALLBACK=1 with the same failure: exit with the reason.
//
// argv[1]: ufab-edge, argv[2]: ufab_steer.bpf.o (either empty: not built, 77).
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002;
constexpr uint32_t kHostB = 0x0a000002;  // 10.0.0.2: the peer namespace's address
constexpr uint32_t kPairIn = 2u << 16 | 1;
constexpr int kData = 10, kOtherUdp = 5, kEchos = 3;
constexpr uint16_t kUdpPort = 7400;  // edge.udp_port: ufab-edge writes it into the program's ufab_cfg

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.99
  mac: 02:00:00:00:01:01
  udp_port: 7400
tenants:
  - vni: 100
    guarantee_gbps: 2
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
hosts:
  - name: hB
    ip: 10.0.0.2
    mac: 02:00:00:00:00:02
    base_rtt_us: 100
    paths: [[1]]
    reply_path: [0]
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
)";

std::string g_ns_e, g_ns_p;

std::string sh_out(const std::string& cmd) { return shell_output(cmd); }

void remove_namespaces() {
  if (!g_ns_e.empty()) shell("ip netns del " + g_ns_e + " 2>/dev/null");
  if (!g_ns_p.empty()) shell("ip netns del " + g_ns_p + " 2>/dev/null");
}
extern "C" void on_term(int) {
  remove_namespaces();
  _exit(1);
}

uint16_t csum(const uint8_t* p, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i + 1 < n; i += 2) s += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n % 2 != 0) s += static_cast<uint32_t>(p[n - 1] << 8);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

// Ethernet/IPv4/ICMP echo request from 10.0.0.2 to 10.0.0.99.
Frame echo_request(uint16_t seq) {
  Frame f(14 + 20 + 8 + 32, 0);
  const uint8_t hdr[14] = {2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00};
  std::copy(hdr, hdr + 14, f.begin());
  uint8_t* ip = f.data() + 14;
  const uint8_t iph[20] = {0x45, 0, 0, 60, 0, 0, 0x40, 0, 64, 1, 0, 0, 10, 0, 0, 2, 10, 0, 0, 99};
  std::copy(iph, iph + 20, ip);
  const uint16_t ic = csum(ip, 20);
  ip[10] = static_cast<uint8_t>(ic >> 8);
  ip[11] = static_cast<uint8_t>(ic);
  uint8_t* icmp = ip + 20;
  icmp[0] = 8;
  icmp[4] = 0x12;
  icmp[5] = 0x34;
  icmp[6] = static_cast<uint8_t>(seq >> 8);
  icmp[7] = static_cast<uint8_t>(seq);
  for (int i = 0; i < 32; ++i) icmp[8 + i] = static_cast<uint8_t>(i);
  const uint16_t cc = csum(icmp, 40);
  icmp[2] = static_cast<uint8_t>(cc >> 8);
  icmp[3] = static_cast<uint8_t>(cc);
  return f;
}

// Sends frames on iface inside namespace ns (a child enters it); the number sent.
int send_in_ns(const std::string& ns, const std::string& iface, const std::vector<Frame>& frames) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int nsfd = open(("/var/run/netns/" + ns).c_str(), O_RDONLY);
    if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0) _exit(255);
    const int s = socket(AF_PACKET, SOCK_RAW, 0);
    sockaddr_ll a{};
    a.sll_family = AF_PACKET;
    a.sll_ifindex = static_cast<int>(if_nametoindex(iface.c_str()));
    a.sll_halen = 6;
    if (s < 0 || a.sll_ifindex == 0) _exit(254);
    int sent = 0;
    for (const Frame& f : frames) {
      if (sendto(s, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == static_cast<ssize_t>(f.size())) ++sent;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a small rate: no socket ring overflows
    }
    _exit(sent);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// One counter of /proc/net/snmp in namespace ns, e.g. ("Udp", "NoPorts").
long long snmp(const std::string& ns, const std::string& proto, const std::string& field) {
  std::istringstream in(sh_out("ip netns exec " + ns + " cat /proc/net/snmp"));
  std::string names, values;
  while (std::getline(in, names) && std::getline(in, values)) {
    if (names.rfind(proto + ":", 0) != 0) continue;
    std::istringstream n(names), v(values);
    std::string a, b;
    while (n >> a && v >> b)
      if (a == field) return std::atoll(b.c_str());
  }
  return -1;
}

struct CaseResult {
  std::string out, err;
  RunResult run;
  long long no_ports = 0, in_echos = 0;
  std::vector<Frame> vm_out;
};

CaseResult run_case(const std::string& edge, const std::string& prog, const std::string& dir, const std::string& name,
                    const std::string& env) {
  CaseResult r;
  const std::string prefix = "ufabxdp" + name + std::to_string(getpid());
  std::vector<std::string> cmd = {"/usr/bin/env"};
  if (!env.empty()) cmd.push_back(env);
  cmd.insert(cmd.end(), {"ip", "netns", "exec", g_ns_e, edge});
  for (const std::string& s : edge_eal(prefix, "0")) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev", "net_pcap0,rx_pcap=" + dir + "/empty.pcap,tx_pcap=" + dir + "/vm_" + name + ".pcap",
                         "--vdev", "net_af_xdp0,iface=uxa,start_queue=0,queue_count=1,xdp_prog=" + prog, "--", "--config",
                         dir + "/edge.yaml", "--stats-interval", "0"});
  const int pid = spawn(cmd, dir + "/" + name + ".out", dir + "/" + name + ".err");
  if (!wait_for_text(dir + "/" + name + ".out", "VM-pairs", 30)) {
    r.run = wait_with_deadline(pid, 10);  // exited (the no-fallback case) or killed
    r.out = read_file(dir + "/" + name + ".out");
    r.err = read_file(dir + "/" + name + ".err");
    remove_dpdk_runtime(prefix);
    return r;
  }
  const long long np0 = snmp(g_ns_e, "Udp", "NoPorts"), ie0 = snmp(g_ns_e, "Icmp", "InEchos");

  std::vector<Frame> frames;
  for (int i = 0; i < kData; ++i)
    frames.push_back(ufab_frame(kHostB, 100, kPairIn, route({0}), wire::kNextData,
                                vm_frame(kB1, kA1, 2000, 300 + 10 * static_cast<size_t>(i), 77)));
  frames.push_back(control(kHostB, route({0}), message(wire::MsgType::probe, kPairIn, 128, {1}, 1), 100));
  for (Frame& fr : frames) {  // the configured tunnel port, not the program's default (7341)
    fr[36] = kUdpPort >> 8;
    fr[37] = kUdpPort & 0xff;
  }
  for (int i = 0; i < kOtherUdp; ++i) frames.push_back(plain_udp(0x0a000063, 9999));
  for (int i = 0; i < kEchos; ++i) frames.push_back(echo_request(static_cast<uint16_t>(i)));
  const int sent = send_in_ns(g_ns_p, "uxb", frames);
  ITEST_CHECK(sent == static_cast<int>(frames.size()), "%s: sent %d of %zu frames", name.c_str(), sent, frames.size());
  // The kernel's counters settle within a moment; bounded wait, then a margin for stragglers.
  for (int i = 0; i < 100; ++i) {
    if (snmp(g_ns_e, "Icmp", "InEchos") - ie0 >= kEchos && snmp(g_ns_e, "Udp", "NoPorts") - np0 >= kOtherUdp) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  r.no_ports = snmp(g_ns_e, "Udp", "NoPorts") - np0;
  r.in_echos = snmp(g_ns_e, "Icmp", "InEchos") - ie0;
  kill(pid, SIGTERM);
  r.run = wait_with_deadline(pid, 15);
  remove_dpdk_runtime(prefix);
  r.out = read_file(dir + "/" + name + ".out");
  r.err = read_file(dir + "/" + name + ".err");
  r.vm_out = read_pcap(dir + "/vm_" + name + ".pcap");
  return r;
}

bool delivered(const CaseResult& r) {
  if (r.vm_out.size() != kData) return false;
  for (int i = 0; i < kData; ++i)
    if (r.vm_out[static_cast<size_t>(i)] != vm_frame(kB1, kA1, 2000, 300 + 10 * static_cast<size_t>(i), 77)) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]).empty() || std::string(argv[2]).empty()) {
    std::printf("SKIP: ufab-edge or edge/ufab_steer.bpf.o was not built (libdpdk, yaml-cpp, clang or libbpf missing)\n");
    return 77;
  }
  if (geteuid() != 0) {
    std::printf("SKIP: network namespaces and XDP need root; run the tests as root\n");
    return 77;
  }
  const std::string edge = argv[1], prog = argv[2];
  char tmpl[] = "/tmp/ufab_edge_xdp.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl, tag = std::to_string(getpid());
  g_ns_e = "ufabxdpE" + tag;
  g_ns_p = "ufabxdpP" + tag;
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  write_text(dir + "/edge.yaml", kConfig);
  write_pcap(dir + "/empty.pcap", {});

  // Two namespaces joined by a veth pair: uxa (the edge host, 10.0.0.99,
  // the MAC the frames are sent to) and uxb (the remote host, 10.0.0.2).
  const std::string E = g_ns_e, P = g_ns_p;
  const int setup = shell("ip netns add " + E + " && ip netns add " + P + " && ip -n " + E +
                       " link add uxa type veth peer name uxb netns " + P + " && ip netns exec " + E +
                       " sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && ip netns exec " + P +
                       " sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && ip -n " + E +
                       " link set uxa address 02:00:00:00:01:01 && ip -n " + E + " addr add 10.0.0.99/24 dev uxa && ip -n " +
                       P + " addr add 10.0.0.2/24 dev uxb && ip -n " + E + " link set uxa up && ip -n " + P +
                       " link set uxb up");
  if (setup != 0) {
    remove_namespaces();
    std::printf("FAIL: could not create the namespaces and the veth pair\n");
    return 1;
  }

  // 1. XDP steering.
  const CaseResult x = run_case(edge, prog, dir, "xdp", "");
  std::printf("== XDP ==\n%s%s", x.out.c_str(), x.err.c_str());
  auto fx = parse_line(x.out, "ufab-edge final ");
  auto px = parse_line(x.out, "ufab-edge port=1 ");
  ITEST_CHECK(!x.run.timed_out && x.run.exit_code == 0, "XDP: ufab-edge failed");
  ITEST_CHECK(x.out.find("net_af_xdp0 (net_af_xdp) link up, fabric") != std::string::npos, "XDP: the fabric port is AF_XDP");
  ITEST_CHECK(delivered(x), "XDP: %zu of %d tunnel frames decapsulated to the VM unchanged", x.vm_out.size(), kData);
  ITEST_CHECK(fx["decap"] == kData && fx["reflected"] == 1 && px["rx"] == kData + 1 && fx["drop.not_ufab"] == 0 &&
                  fx["conserved"] == 1,
              "XDP: ufab-edge got exactly the uFAB frames (port rx=%llu, not_ufab=%llu)",
              static_cast<unsigned long long>(px["rx"]), static_cast<unsigned long long>(fx["drop.not_ufab"]));
  ITEST_CHECK(x.no_ports == kOtherUdp && x.in_echos == kEchos,
              "XDP: the kernel got the other UDP datagrams and the pings, and no uFAB frame (NoPorts +%lld, InEchos +%lld)",
              x.no_ports, x.in_echos);
  ITEST_CHECK(sh_out("ip -n " + E + " link show dev uxa").find("prog/xdp") == std::string::npos,
              "XDP: the program is detached after ufab-edge exits");

  // 2. Attach refused: another XDP program holds the interface.
  ITEST_CHECK(shell("ip -n " + E + " link set dev uxa xdpgeneric obj " + prog + " sec xdp") == 0, "pre-attaching a program");
  const CaseResult f = run_case(edge, prog, dir, "fallback", "");
  std::printf("== fallback ==\n%s%s", f.out.c_str(), f.err.c_str());
  auto ff = parse_line(f.out, "ufab-edge final ");
  ITEST_CHECK(!f.run.timed_out && f.run.exit_code == 0, "fallback: ufab-edge failed");
  ITEST_CHECK(f.err.find("XDP cannot attach to uxa") != std::string::npos &&
                  f.err.find("another XDP program is attached") != std::string::npos &&
                  f.err.find("falling back to net_af_packet0,iface=uxa") != std::string::npos,
              "fallback: the message names the interface, the reason and the fallback");
  ITEST_CHECK(f.out.find("net_af_packet0 (net_af_packet) link up, fabric") != std::string::npos, "fallback: af_packet port");
  ITEST_CHECK(delivered(f) && ff["decap"] == kData && ff["reflected"] == 1 && ff["conserved"] == 1,
              "fallback: %zu of %d tunnel frames still reach the VM", f.vm_out.size(), kData);
  ITEST_CHECK(ff["drop.not_ufab"] >= kOtherUdp + kEchos, "fallback: ufab-edge sees the other traffic too (not_ufab=%llu)",
              static_cast<unsigned long long>(ff["drop.not_ufab"]));
  ITEST_CHECK(f.in_echos == kEchos && f.no_ports == kOtherUdp + kData + 1,
              "fallback: the kernel gets everything, uFAB frames included (NoPorts +%lld, InEchos +%lld)", f.no_ports,
              f.in_echos);

  // 3. The same failure with the fallback turned off: a clear error, exit 1.
  const CaseResult n = run_case(edge, prog, dir, "nofallback", "UFAB_AF_XDP_NO_FALLBACK=1");
  std::printf("== no fallback ==\n%s", n.err.c_str());
  ITEST_CHECK(!n.run.timed_out && n.run.exit_code == 1 && n.err.find("XDP cannot attach to uxa") != std::string::npos &&
                  n.err.find("UFAB_AF_XDP_NO_FALLBACK=1") != std::string::npos,
              "no fallback: exit %d", n.run.exit_code);
  shell("ip -n " + E + " link set dev uxa xdpgeneric off");

  remove_namespaces();
  ITEST_CHECK(sh_out("ip netns list").find(E) == std::string::npos, "namespaces removed");
  if (g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: uFAB frames to ufab-edge over AF_XDP, the rest to the kernel; af_packet fallback on a refused attach\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", g_failures, dir.c_str());
  return 1;
}
