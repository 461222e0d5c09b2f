// Frames between two local VMs of a tenant (pipeline/vm_local.cpp): no
// VM-pair joins them, so the edge switches them to the other VM's port.
// One edge on net_pcap ports 0 and 2 (VM side) and 1 (the fabric). Tenant
// 100 (untagged) has a1 (.1, fd00::1, port 0), a3 (.5, fd00::5, port 2) and
// a5 (.9, port 0, no ip6); tenant 200 (VLAN 200) has a2 (.1, port 0) and a4
// (.5, port 2): both tenants use .1 and .5. Each tenant has one remote VM.
// Checked on the captures and counters:
//  - delivered unchanged (local_delivered): a1 -> .5 (three frames, in
//    order) on port 2 untagged, so to a3 and not to a4; a2 -> .5 on port 2
//    with VLAN 200 again, so to a4; a1 -> .9 back out of port 0 (a5 shares
//    a1's port); a1 fd00::1 -> fd00::5 on port 2; a3 -> .1 on port 0
//    untagged (a1, not a2);
//  - unknown_pair: a1 to its own address, a source address that is no VM's
//    (.7 -> .5), tenant 200's .1 to .9 (a5 is tenant 100's), IPv6 to
//    fd00::9 (a5 has no ip6);
//  - ARP and ND answered for local VMs: a1's request for .5 with a3's MAC,
//    a2's (VLAN 200) for .5 with a4's, a1's solicitation for fd00::5 with
//    a3's; a gratuitous request (.1 for .1) stays arp_unanswered;
//  - a1 -> .2 (its remote VM b1) is still encapsulated;
//  - the ports' rx and tx, conservation.
// Once on one lcore and once with a control lcore and two workers: layout
// puts a1 and a2 on worker 0, a3 and a4 on worker 1 (each VM to the worker
// with the fewest pairs, in configuration order), so the deliveries cross
// workers both ways.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <cstdio>
#include <string>
#include <vector>

#include "tests/integration/arp_frames.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/ipv6_frames.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
tenants:
  - {vni: 100, guarantee_gbps: 2}
  - {vni: 200, guarantee_gbps: 2, vlan: 200}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, ip6: "fd00::1", port: 0}
  - {name: a3, id: 5, tenant: 100, mac: "02:00:00:00:0a:05", ip: 192.168.0.5, ip6: "fd00::5", port: 2}
  - {name: a2, id: 3, tenant: 200, mac: "02:00:00:00:0a:03", ip: 192.168.0.1, port: 0}
  - {name: a4, id: 7, tenant: 200, mac: "02:00:00:00:0a:07", ip: 192.168.0.5, port: 2}
  - {name: a5, id: 9, tenant: 100, mac: "02:00:00:00:0a:09", ip: 192.168.0.9, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
  - {name: b1, id: 2, tenant: 100, mac: "02:00:00:00:0b:02", ip: 192.168.0.2, host: hB}
  - {name: b2, id: 4, tenant: 200, mac: "02:00:00:00:0b:04", ip: 192.168.0.2, host: hB}
)";

const Mac kA1 = {2, 0, 0, 0, 0x0a, 0x01}, kA2 = {2, 0, 0, 0, 0x0a, 0x03}, kA3 = {2, 0, 0, 0, 0x0a, 0x05};
const Mac kA4 = {2, 0, 0, 0, 0x0a, 0x07};

constexpr uint32_t ip(uint8_t x) { return 0xc0a80000u | x; }  // 192.168.0.x
unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_local");
  if (dir.empty()) return 1;

  const Frame a1_a3[] = {vm_frame(ip(1), ip(5), 1000, 100, 1), vm_frame(ip(1), ip(5), 1000, 200, 2),
                         vm_frame(ip(1), ip(5), 1001, 300, 3)};
  const Frame a2_a4 = vm_frame(ip(1), ip(5), 2000, 80, 4);
  const Frame a1_a5 = vm_frame(ip(1), ip(9), 3000, 90, 5);
  const Frame a1_a3_v6 = udp6(kA1, kA3, 1, 5, 4000, 120);
  const Frame a3_a1 = vm_frame(ip(5), ip(1), 5000, 110, 6);
  const std::vector<Frame> port0_in = {
      a1_a3[0], a1_a3[1], a1_a3[2],                  // to a3 on port 2
      tagged(a2_a4, 200),                            // to a4 on port 2, VLAN 200
      a1_a5,                                         // back out of port 0
      a1_a3_v6,                                      // IPv6 to a3
      vm_frame(ip(1), ip(1), 6000, 60, 7),           // to itself: unknown_pair
      vm_frame(ip(7), ip(5), 6001, 60, 8),           // no VM at .7: unknown_pair
      tagged(vm_frame(ip(1), ip(9), 6002, 60, 9), 200),  // tenant 200 has no .9: unknown_pair
      udp6(kA1, kA3, 1, 9, 6003, 40),                // a5 has no ip6: unknown_pair
      who_has(kA1, 1, 5),                            // answered with a3's MAC
      tagged(who_has(kA2, 1, 5), 200),               // answered with a4's MAC, VLAN 200
      who_has(kA1, 1, 1),                            // gratuitous: unanswered
      solicitation(kA1, fd00(1), fd00(5)),           // answered with a3's MAC
      vm_frame(ip(1), ip(2), 7000, 64, 10),          // to b1: encapsulated
  };
  const std::vector<Frame> port2_in = {a3_a1};
  const std::vector<Frame> want0 = {a1_a5, is_at(kA1, 1, kA3, 5), tagged(is_at(kA2, 1, kA4, 5), 200),
                                    advertise(kA1, 1, 5, kA3), a3_a1};
  const std::vector<Frame> want2 = {a1_a3[0], a1_a3[1], a1_a3[2], tagged(a2_a4, 200), a1_a3_v6};

  for (const bool two : {false, true}) {
    const PortsEdgeRun run =
        run_edge_on_port_pcaps(argv[1], dir, two ? "local2" : "local1", kConfig, {port0_in, {}, port2_in}, two);
    const char* how = two ? "two workers" : "one lcore";
    ITEST_CHECK(run.port_out.size() == 3, "%s: %zu port captures", how, run.port_out.size());
    if (run.port_out.size() != 3) continue;
    ITEST_CHECK(same_frames(want0, run.port_out[0]), "%s: port 0 has %zu frames, want a1 -> a5, 2 ARP replies, 1 "
                "advertisement and a3 -> a1, each unchanged", how, run.port_out[0].size());
    ITEST_CHECK(same_frames(want2, run.port_out[2]), "%s: port 2 has %zu frames, want a1 -> a3 (3), a2 -> a4 "
                "tagged, IPv6 a1 -> a3, each unchanged", how, run.port_out[2].size());
    // A flow keeps its order (an IPv6 frame, out of line, may pass the
    // IPv4 frames of its burst: another flow).
    std::vector<Frame> v4;
    for (const Frame& g : run.port_out[2])
      if (g == a1_a3[0] || g == a1_a3[1] || g == a1_a3[2]) v4.push_back(g);
    ITEST_CHECK(v4.size() == 3 && v4[0] == a1_a3[0] && v4[1] == a1_a3[1] && v4[2] == a1_a3[2],
                "%s: a1 -> a3 out of order on port 2", how);
    auto f = run.final;
    ITEST_CHECK(f["local_delivered"] == 7 && f["drop.unknown_pair"] == 4 && f["arp_replied"] == 2 &&
                    f["nd_replied"] == 1 && f["drop.arp_unanswered"] == 1 && f["encap"] == 1,
                "%s: local_delivered=%llu unknown_pair=%llu arp_replied=%llu nd_replied=%llu arp_unanswered=%llu "
                "encap=%llu",
                how, U(f["local_delivered"]), U(f["drop.unknown_pair"]), U(f["arp_replied"]), U(f["nd_replied"]),
                U(f["drop.arp_unanswered"]), U(f["encap"]));
    auto p0 = parse_line(run.out, "ufab-edge port=0 "), p2 = parse_line(run.out, "ufab-edge port=2 ");
    ITEST_CHECK(p0["rx"] == port0_in.size() && p0["tx"] == want0.size() && p2["rx"] == 1 && p2["tx"] == want2.size(),
                "%s: port 0 rx=%llu tx=%llu, port 2 rx=%llu tx=%llu", how, U(p0["rx"]), U(p0["tx"]), U(p2["rx"]),
                U(p2["tx"]));
    ITEST_CHECK(f["conserved"] == 1 && f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"],
                "%s: conservation", how);
  }
  return conclude(dir, "frames between local VMs delivered to their ports (7, tags kept, tenants apart), ARP and ND "
                       "answered for local VMs, spoofed and foreign-tenant frames unknown_pair");
}
