// A fabric port on net_af_packet gets edge.fabric_mtu (edge/dpdk/
// kernel_mtu.hpp). The PMD reports a largest MTU of 1500 whatever its
// kernel interface takes, so ethdev refuses 1600 before the PMD could set
// it: ufab-edge sets the kernel interface's MTU itself, within the PMD's
// ring frames, and the largest fabric frames pass.
//
// A veth pair made by the test: ufab-edge's fabric port is net_af_packet
// on one end (MTU 1500 before each run), the test reads the other end (MTU
// 1600, the "switch" that takes fabric_mtu) with an AF_PACKET socket. The
// VM port (net_pcap) replays 20 UDP frames of the VM MTU (1532 bytes with
// their Ethernet header) to remote VM b1 on a path of 15 labels, the
// longest encapsulation: fabric frames of exactly 1614 bytes (outer IPv4
// total length 1600).
//  1. The default ring (framesz 2048): the start-up line says MTU 1600, the
//     kernel interface's MTU is 1600, and the 20 frames of 1614 bytes reach
//     the other end; conservation.
//  2. framesz=1600 (ring frames that hold an MTU of 1548): the start-up
//     line keeps the PMD's 1500 and names the framesz and blocksz that
//     would hold 1600 (1664, 4096); the interface's MTU stays 1500, and the
//     kernel lets none of the 1614-byte frames out. (This is also what
//     every run did before ufab-edge set the MTU itself.)
//  3. ufab-core, which shares the port bring-up, on the same interface
//     (MTU 1500 again) with its default --mtu 1600: its port line says MTU
//     1600 and so does the interface.
// Needs root (veth) and ip; otherwise it skips and says which is missing.
//
// argv[1]: path of ufab-edge, argv[2]: ufab-core (either empty when DPDK
// was not found: exit 77).
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

constexpr uint32_t kVmA = 0xc0a80001, kVmB = 0xc0a80002;
constexpr size_t kFrames = 20, kVmFrame = 1532, kFabricFrame = 1614;

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  idle_finish_ms: 60000
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100,
     paths: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], reply_path: [0]}
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
)";


int mtu_of(const std::string& ifname) {
  std::ifstream f("/sys/class/net/" + ifname + "/mtu");
  int m = -1;
  f >> m;
  return m;
}

// The lengths of the frames waiting on `fd` (non-blocking reads until empty).
std::vector<size_t> drain(int fd) {
  std::vector<size_t> lens;
  std::vector<uint8_t> buf(16384);
  for (;;) {
    const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) break;
    lens.push_back(static_cast<size_t>(n));
  }
  return lens;
}

struct Run {
  PortsEdgeRun edge;
  std::vector<size_t> seen;  // frame lengths at the other end of the veth
};

// ufab-edge with the VM port on net_pcap (the 20 frames) and the fabric
// port net_af_packet on port_if (`ring`: more of its devargs).
Run run_edge(const std::string& exe, const std::string& dir, const std::string& tag, const std::string& port_if,
             const std::string& ring, int sniff) {
  drain(sniff);
  std::vector<Frame> vm;
  for (size_t i = 0; i < kFrames; ++i)
    vm.push_back(vm_frame(kVmA, kVmB, static_cast<uint16_t>(1000 + i), kVmFrame - 42, static_cast<uint8_t>(i)));
  Run r;
  r.edge = run_edge_on_port_pcaps(exe, dir, tag, kConfig, {vm}, false, {"net_af_packet0,iface=" + port_if + ring});
  std::printf("%s", r.edge.err.c_str());
  usleep(100 * 1000);
  r.seen = drain(sniff);
  return r;
}

size_t count_len(const std::vector<size_t>& lens, size_t len) {
  size_t n = 0;
  for (const size_t l : lens) n += l == len ? 1 : 0;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]).empty() || std::string(argv[2]).empty()) {
    std::printf("SKIP: ufab-edge or ufab-core was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  if (geteuid() != 0) {
    std::printf("SKIP: the fabric port is a veth the test makes, which needs root; run the tests as root\n");
    return 77;
  }
  if (shell("command -v ip >/dev/null 2>&1") != 0) {
    std::printf("SKIP: ip is not on PATH (Debian package iproute2)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_af_packet_mtu");
  const std::string id = std::to_string(getpid() % 100000), port_if = "ufm" + id + "a", far_if = "ufm" + id + "b";
  ITEST_CHECK(shell("ip link add " + port_if + " type veth peer name " + far_if + " && ip link set " + far_if +
                 " mtu 1600 up && ip link set " + port_if + " up") == 0,
              "the veth pair %s / %s", port_if.c_str(), far_if.c_str());
  const int sniff = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(ETH_P_ALL);
  at.sll_ifindex = static_cast<int>(if_nametoindex(far_if.c_str()));
  ITEST_CHECK(sniff >= 0 && at.sll_ifindex != 0 && bind(sniff, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0,
              "an AF_PACKET socket on %s", far_if.c_str());

  if (sniff >= 0 && at.sll_ifindex != 0) {
    // 1.
    shell("ip link set " + port_if + " mtu 1500");
    const Run a = run_edge(argv[1], dir, "default", port_if, "", sniff);
    ITEST_CHECK(a.edge.out.find("ufab-edge port 1 net_af_packet0 (net_af_packet) link up, fabric, MTU 1600,") !=
                    std::string::npos,
                "1: the start-up line names MTU 1600");
    ITEST_CHECK(mtu_of(port_if) == 1600, "1: %s's MTU is %d", port_if.c_str(), mtu_of(port_if));
    ITEST_CHECK(count_len(a.seen, kFabricFrame) == kFrames,
                "1: %zu of the %zu fabric frames of %zu bytes reached %s (%zu frames seen)",
                count_len(a.seen, kFabricFrame), kFrames, kFabricFrame, far_if.c_str(), a.seen.size());
    const auto& fa = a.edge.final;
    ITEST_CHECK(fa.count("conserved") != 0 && fa.at("conserved") == 1 && fa.at("encap") == kFrames,
                "1: conserved, %zu frames encapsulated", kFrames);

    // 2.
    shell("ip link set " + port_if + " mtu 1500");
    const Run b = run_edge(argv[1], dir, "small_ring", port_if, ",framesz=1600,blocksz=4096", sniff);
    ITEST_CHECK(b.edge.out.find("MTU 1500 (net_af_packet's ring frames hold an MTU of 1548, below edge.fabric_mtu 1600: "
                           "give it framesz=1664,blocksz=4096)") != std::string::npos,
                "2: the start-up line keeps 1500 and names the ring that holds 1600");
    ITEST_CHECK(mtu_of(port_if) == 1500, "2: %s's MTU is %d", port_if.c_str(), mtu_of(port_if));
    ITEST_CHECK(count_len(b.seen, kFabricFrame) == 0, "2: %zu fabric frames of %zu bytes passed a 1500 MTU",
                count_len(b.seen, kFabricFrame), kFabricFrame);

    // 3.
    shell("ip link set " + port_if + " mtu 1500");
    const std::string prefix = "ufabafpcore" + std::to_string(getpid());
    std::vector<std::string> cmd = {argv[2]};
    for (const std::string& a : edge_eal(prefix, "0")) cmd.push_back(a);
    cmd.insert(cmd.end(), {"--vdev", "net_af_packet0,iface=" + port_if, "--", "--exit-after-idle-ms", "300",
                           "--stats-interval", "0"});
    const RunResult rc = run_with_deadline(cmd, dir + "/core.out", dir + "/core.err", 30);
    remove_dpdk_runtime(prefix);
    const std::string core_out = read_file(dir + "/core.out");
    std::printf("ufab-core:\n%s%s", core_out.c_str(), read_file(dir + "/core.err").c_str());
    ITEST_CHECK(!rc.timed_out && rc.exit_code == 0 &&
                    core_out.find("ufab-core port 0 net_af_packet0 (net_af_packet) link up, MTU 1600,") !=
                        std::string::npos &&
                    mtu_of(port_if) == 1600,
                "3: ufab-core's port line names MTU 1600 (exit %d), %s at %d", rc.exit_code, port_if.c_str(),
                mtu_of(port_if));
  }
  if (sniff >= 0) close(sniff);
  shell("ip link del " + port_if + " 2>/dev/null");
  return conclude(dir, "ufab_edge_af_packet_mtu: net_af_packet's kernel interface took fabric_mtu 1600 and carried "
                       "the largest fabric frames; a ring too small for it is named; ufab-core's --mtu the same");
}
