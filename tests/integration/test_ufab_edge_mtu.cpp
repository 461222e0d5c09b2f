// The fabric's MTU and the VMs' (edge.fabric_mtu; pipeline/too_big.hpp).
// ufab-edge on net_pcap ports; the VM MTU is edge.fabric_mtu less 82 bytes.
//
// Edge A at the default fabric_mtu, 1600 (VM MTU 1518, VM frames of at most
// 1532 bytes untagged), host hB's one path of 15 labels (the longest
// encapsulation, 68 bytes besides the VM frame). A's VM port replays:
//  - frames of exactly 1532 bytes: IPv4 (a1, untagged), IPv4 tagged for
//    tenant 200 (VLAN 200, 1536 bytes with the tag), IPv6: each leaves
//    encapsulated in a fabric frame whose outer IPv4 total length is 1600,
//    the fabric MTU, with the VM frame inside unchanged (the tag stripped);
//  - frames of 1533: IPv4 with DF, the same tagged, IPv6: each answered on
//    the VM port, in order, with an ICMP "fragmentation needed" (type 3
//    code 4, next-hop MTU 1518) or ICMPv6 "packet too big" (type 2, MTU
//    1518) from the destination to the source, the tag kept, the frame
//    quoted (548 or 1232 bytes of it);
//  - the same IPv4 frame without DF, and one from an address no VM of the
//    port has: dropped, not answered;
//  - a 9000-byte jumbo with DF: net_pcap hands it over in several
//    segments (the mbufs hold 2 KB), and it is answered from its first.
//  Counted: encap 3, drop.too_big 6, ptb_sent 4, conservation; the start-up
//  line names the fabric port's MTU, 1600.
//
// Edges A and B at fabric_mtu 9000 (a jumbo fabric: mbufs of ~9.2 KB): A
// carries an 8932-byte VM frame (the VM MTU 8918) and answers an 8933-byte
// one naming 8918; B, replaying A's fabric capture, delivers the 8932
// bytes to its VM unchanged.
//
// Out of range fabric_mtu values are refused with file:line:col and the field.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "pipeline/nd.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/ipv6_frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kVmA = 0xc0a80001, kVmB = 0xc0a80002;

// Edge A; mtu: its edge.fabric_mtu line ("": the default), path: hB's one path.
std::string edge_a(const std::string& mtu, const char* path) {
  char buf[2048];
  std::snprintf(buf, sizeof(buf), R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
%sparams:
  idle_finish_ms: 60000
  mbufs: 4095
tenants:
  - {vni: 100, guarantee_gbps: 2}
  - {vni: 200, guarantee_gbps: 2, vlan: 200}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, ip6: "fd00::1", port: 0}
  - {name: a2, id: 3, tenant: 200, mac: "02:00:00:00:0a:03", ip: 192.168.0.1, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [%s], reply_path: [0]}
remote_vms:
  - {name: b1, id: 2, tenant: 100, mac: "02:00:00:00:0b:02", ip: 192.168.0.2, ip6: "fd00::2", host: hB}
  - {name: b2, id: 4, tenant: 200, ip: 192.168.0.2, host: hB}
)",
                mtu.c_str(), path);
  return buf;
}

const char* kEdgeB = R"(edge:
  fabric_port: 1
  ip: 10.0.0.2
  mac: 02:00:00:00:00:02
  fabric_mtu: 9000
params:
  idle_finish_ms: 60000
  mbufs: 4095
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: b1, id: 2, tenant: 100, mac: "02:00:00:00:0b:02", ip: 192.168.0.2, port: 0}
hosts:
  - {name: hA, ip: 10.0.0.1, mac: "02:00:00:00:00:01", base_rtt_us: 100, paths: [[0]], reply_path: [0]}
remote_vms:
  - {name: a1, id: 1, tenant: 100, ip: 192.168.0.1, host: hA}
)";

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

// A UDP frame of `len` bytes from a1 to b1 (DF set, as vm_frame makes it).
Frame v4(size_t len, uint8_t seed) { return vm_frame(kVmA, kVmB, static_cast<uint16_t>(1000 + seed), len - 42, seed); }

Frame without_df(Frame f) {
  f[20] = 0;
  f[24] = f[25] = 0;
  const uint16_t c = pipeline::nd::complement(pipeline::nd::add_words(0, f.data() + 14, 20));
  f[24] = static_cast<uint8_t>(c >> 8);
  f[25] = static_cast<uint8_t>(c);
  return f;
}

// A UDP datagram over IPv6 of `len` bytes from a1 (fd00::1) to b1 (fd00::2).
Frame v6(size_t len) {
  return udp6({2, 0, 0, 0, 0x0a, 0x01}, {2, 0, 0, 0, 0x0b, 0x02}, 1, 2, 2000, len - 62);
}

uint32_t be16(const Frame& f, size_t o) { return uint32_t{f[o]} << 8 | f[o + 1]; }

// The answer `a` to frame `f` with l2 bytes before its IP header: from
// f's destination MAC to its source, f's tags and EtherType, and its ICMP
// (l2 + 20: type 3, code 4) or ICMPv6 (l2 + 40: type 2) message naming
// `mtu`, quoting `quote` bytes of f's IP packet.
bool answers(const Frame& a, const Frame& f, size_t l2, uint32_t mtu, size_t quote) {
  if (a.size() < l2 + 48 || !std::equal(a.begin(), a.begin() + 6, f.begin() + 6) ||
      !std::equal(a.begin() + 6, a.begin() + 12, f.begin()) || !std::equal(a.begin() + 12, a.begin() + l2, f.begin() + 12))
    return false;
  const bool v6 = f[l2 - 2] == 0x86;
  const size_t ip = v6 ? 40 : 20, icmp = l2 + ip;
  if (a.size() != icmp + 8 + quote || !std::equal(a.begin() + icmp + 8, a.end(), f.begin() + l2)) return false;
  if (v6)
    return a[icmp] == 2 && a[icmp + 1] == 0 && be16(a, icmp + 4) == 0 && be16(a, icmp + 6) == mtu &&
           std::equal(a.begin() + l2 + 8, a.begin() + l2 + 24, f.begin() + l2 + 24) &&  // from f's destination
           std::equal(a.begin() + l2 + 24, a.begin() + l2 + 40, f.begin() + l2 + 8);    // to its source
  return a[l2 + 9] == 1 && a[icmp] == 3 && a[icmp + 1] == 4 && be16(a, icmp + 6) == mtu &&
         std::equal(a.begin() + l2 + 12, a.begin() + l2 + 16, f.begin() + l2 + 16) &&
         std::equal(a.begin() + l2 + 16, a.begin() + l2 + 20, f.begin() + l2 + 12);
}

// The VM frames inside A's fabric data frames, each checked for an outer
// IPv4 total length of `outer_ip`.
std::vector<Frame> carried(const std::vector<Frame>& fab, uint32_t outer_ip, size_t* wrong_len) {
  std::vector<Frame> inner;
  for (const Frame& fr : fab) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) != wire::WireError::ok || v.shim.next != wire::kNextData) continue;
    if (be16(fr, 16) != outer_ip || fr.size() != 14 + outer_ip) ++*wrong_len;
    inner.emplace_back(fr.begin() + static_cast<ptrdiff_t>(v.payload_offset), fr.end());
  }
  return inner;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_mtu");
  if (dir.empty()) return 1;

  // The default fabric MTU, and the longest route: 15 labels.
  {
    const Frame max4 = v4(1532, 1), big4 = v4(1533, 2), nodf = without_df(v4(1533, 3));
    const Frame max_t = tagged(v4(1532, 4), 200), big_t = tagged(v4(1533, 5), 200);
    const Frame max6 = v6(1532), big6 = v6(1533), jumbo = v4(9000, 6);
    const Frame stranger = vm_frame(0xc0a80009, kVmB, 1009, 1533 - 42, 9);  // 192.168.0.9: no VM of port 0
    const std::vector<Frame> in = {max4, big4, nodf, max_t, big_t, max6, big6, jumbo, stranger};
    const PortsEdgeRun run = run_edge_on_port_pcaps(argv[1], dir, "a1600",
                                                    edge_a("", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]"),
                                                    {in, {}});
    auto f = run.final;
    ITEST_CHECK(f["rx"] == in.size() && f["encap"] == 3 && f["drop.too_big"] == 6 && f["ptb_sent"] == 4 &&
                    f["dropped"] == 6 && f["conserved"] == 1,
                "fabric_mtu 1600: rx=%llu encap=%llu too_big=%llu ptb_sent=%llu dropped=%llu conserved=%llu",
                U(f["rx"]), U(f["encap"]), U(f["drop.too_big"]), U(f["ptb_sent"]), U(f["dropped"]), U(f["conserved"]));
    ITEST_CHECK(run.out.find("ufab-edge port 1 net_pcap1 (net_pcap) link up, fabric, MTU 1600,") != std::string::npos,
                "the fabric port's start-up line names MTU 1600");
    size_t wrong = 0;
    const std::vector<Frame> inner = carried(run.port_out[1], 1600, &wrong);
    const Frame max_t_inner = v4(1532, 4);
    ITEST_CHECK(same_frames({max4, max_t_inner, max6}, inner) && wrong == 0,
                "fabric_mtu 1600: %zu VM frames carried (%zu not in a fabric frame of IPv4 length 1600), want the "
                "three of 1532 bytes unchanged",
                inner.size(), wrong);
    const std::vector<Frame>& a = run.port_out[0];
    ITEST_CHECK(a.size() == 4, "fabric_mtu 1600: %zu answers on the VM port, want 4", a.size());
    if (a.size() == 4) {
      ITEST_CHECK(answers(a[0], big4, 14, 1518, 548), "IPv4 with DF: fragmentation needed, MTU 1518, 548 bytes quoted");
      ITEST_CHECK(answers(a[1], big_t, 18, 1518, 548), "tagged IPv4: the same, with VLAN 200 kept");
      ITEST_CHECK(answers(a[2], big6, 14, 1518, 1232), "IPv6: packet too big, MTU 1518, 1232 bytes quoted");
      ITEST_CHECK(answers(a[3], jumbo, 14, 1518, 548), "the chained jumbo: answered from its first segment");
    }
  }

  // A jumbo fabric: A carries the largest VM frame, B delivers it.
  {
    const Frame max = v4(8932, 7), big = v4(8933, 8);
    const PortsEdgeRun a = run_edge_on_port_pcaps(argv[1], dir, "a9000", edge_a("  fabric_mtu: 9000\n", "[1]"),
                                                  {{max, big}, {}});
    auto f = a.final;
    ITEST_CHECK(f["encap"] == 1 && f["drop.too_big"] == 1 && f["ptb_sent"] == 1 && f["conserved"] == 1,
                "fabric_mtu 9000: encap=%llu too_big=%llu ptb_sent=%llu", U(f["encap"]), U(f["drop.too_big"]),
                U(f["ptb_sent"]));
    size_t wrong = 0;
    // One label: 40 bytes besides the VM frame.
    const std::vector<Frame> inner = carried(a.port_out[1], 8932 + 40, &wrong);
    ITEST_CHECK(same_frames({max}, inner) && wrong == 0, "fabric_mtu 9000: the 8932-byte frame carried whole");
    ITEST_CHECK(a.port_out[0].size() == 1 && answers(a.port_out[0][0], big, 14, 8918, 548),
                "fabric_mtu 9000: the 8933-byte frame answered, MTU 8918");
    const PortsEdgeRun b = run_edge_on_port_pcaps(argv[1], dir, "b9000", kEdgeB, {{}, a.port_out[1]});
    auto g = b.final;
    ITEST_CHECK(g["decap"] == 1 && g["dropped"] == 0 && g["conserved"] == 1, "edge B: decap=%llu dropped=%llu",
                U(g["decap"]), U(g["dropped"]));
    ITEST_CHECK(same_frames({max}, b.port_out[0]), "edge B delivered %zu frames, want the 8932 bytes unchanged",
                b.port_out[0].size());
  }

  check_config_errors(argv[1], dir, edge_a("  fabric_mtu: 1600\n", "[1]"), {
      {"fabric_mtu: 1600", "fabric_mtu: 1361", ":5:15: edge.fabric_mtu: '1361' is out of range [1362, 9200]"},
      {"fabric_mtu: 1600", "fabric_mtu: 9201", ":5:15: edge.fabric_mtu: '9201' is out of range [1362, 9200]"},
      {"fabric_mtu: 1600", "fabric_mtu: big", ":5:15: edge.fabric_mtu: 'big' is not a non-negative integer"},
  });
  return conclude(dir, "VM frames up to the VM MTU carried in fabric frames of the fabric MTU, larger ones answered "
                       "with ICMP fragmentation needed / ICMPv6 packet too big, a jumbo fabric end to end");
}
