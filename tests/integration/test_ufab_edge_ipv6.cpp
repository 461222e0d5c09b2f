// IPv6 tenants' frames (pipeline/vm_ipv6.cpp, fabric_rx.cpp) and the
// neighbour discovery proxy (nd.hpp). One edge on net_pcap ports: tenant 100
// untagged and tenant 200 on VLAN 200 share VM port 0 and the addresses
// 192.168.0.1 / fd00::1; their remote VMs at fd00::2 have MACs, c1
// (tenant 100, fd00::3) has none. Checked on the captures and counters:
//  - VM side: each VM's IPv6 UDP frames to its remote VM leave encapsulated
//    with its tenant's VNI and its pair's id, the inner frame unchanged
//    (tags stripped); to an address no remote VM has: unknown_pair; for the
//    VM's own link (a router solicitation, an MLD report, link-local UDP):
//    local_scope; one cut shorter than its payload length: malformed;
//  - solicitations for fd00::2 from a1 and (VLAN 200) a2 are answered with
//    their own tenant's remote MAC, byte for byte as written out here
//    (a2's tagged), also one with a source link-layer address option (its
//    answer trimmed to the advertisement's length); for fd00::3 (no MAC),
//    duplicate address detection (source ::), from a MAC no VM has and
//    from a3, a VM without an ip6 (it has no IPv6 pairs): nd_unanswered; a
//    bad checksum: malformed;
//  - fabric side: tunnel data with inner IPv6 to fd00::1 is delivered to
//    port 0 unchanged (VNI 200's with its VLAN tag again); to fd00::7:
//    unknown_vm;
//  - nd_replied=3, conservation.
// Once on one lcore and once with a control lcore and two workers (a1 and
// a2 on different workers: the IPv6 frames go to their VM's owner).
// An ip6 that is not global unicast or unique local (link-local,
// multicast, IPv4-mapped, site-local) or no IPv6 address is refused with
// file:line:col and the field, as are an address two VMs of a tenant share
// (on a port, across ports, local or remote) and a local VM's MAC that is
// multicast or another's on its port.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/ipv6_frames.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab;
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
  - {name: a2, id: 3, tenant: 200, mac: "02:00:00:00:0a:03", ip: 192.168.0.1, ip6: "fd00::1", port: 0}
  - {name: a3, id: 5, tenant: 100, mac: "02:00:00:00:0a:05", ip: 192.168.0.5, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100000, paths: [[1]], reply_path: [0]}
remote_vms:
  - {name: b1, id: 2, tenant: 100, mac: "02:00:00:00:0b:02", ip: 192.168.0.2, ip6: "fd00::2", host: hB}
  - {name: b2, id: 4, tenant: 200, mac: "02:00:00:00:0b:04", ip: 192.168.0.2, ip6: "fd00::2", host: hB}
  - {name: c1, id: 7, tenant: 100, ip: 192.168.0.3, ip6: "fd00::3", host: hB}
)";

constexpr uint32_t kHostB = 0x0a000002;
constexpr uint32_t kPairB1A1 = 2u << 16 | 1, kPairB2A2 = 4u << 16 | 3;
constexpr uint32_t kPairA1B1 = 1u << 16 | 2, kPairA2B2 = 3u << 16 | 4;

const Bytes kA1 = {2, 0, 0, 0, 0x0a, 0x01}, kA2 = {2, 0, 0, 0, 0x0a, 0x03}, kA3 = {2, 0, 0, 0, 0x0a, 0x05};
const Bytes kB1 = {2, 0, 0, 0, 0x0b, 0x02}, kB2 = {2, 0, 0, 0, 0x0b, 0x04};

// fe80::x and ff02::x.
Bytes link_local(uint8_t x) {
  Bytes a(16, 0);
  a[0] = 0xfe, a[1] = 0x80, a[15] = x;
  return a;
}
Bytes group(uint8_t x) {
  Bytes a(16, 0);
  a[0] = 0xff, a[1] = 0x02, a[15] = x;
  return a;
}

// A solicitation from `from` at fd00::src (0: ::) for fd00::target; with
// `sllao` its source link-layer address option too (RFC 4861 4.3), 8 bytes
// longer than the advertisement that answers it.
Frame solicit(const Bytes& from, uint8_t src, uint8_t target, bool sllao = false) {
  return solicitation(from, fd00(src), fd00(target), sllao);
}

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

void config_errors(const char* edge, const std::string& dir) {
  const std::string not_unicast = "' is not a unicast global (2000::/3) or unique-local (fc00::/7) IPv6 address";
  const std::vector<std::string> w = {
      ":9:84: vms[0].ip6: 'fe80::1" + not_unicast, ":9:84: vms[0].ip6: 'ff02::1" + not_unicast,
      ":9:84: vms[0].ip6: '::ffff:192.168.0.9" + not_unicast, ":9:84: vms[0].ip6: 'fec0::1" + not_unicast};
  check_config_errors(edge, dir, kConfig, {
      {"ip6: \"fd00::1\", port: 0}", "ip6: \"fe80::1\", port: 0}", w[0].c_str()},
      {"ip6: \"fd00::1\", port: 0}", "ip6: \"ff02::1\", port: 0}", w[1].c_str()},
      {"ip6: \"fd00::1\", port: 0}", "ip6: \"::ffff:192.168.0.9\", port: 0}", w[2].c_str()},  // IPv4-mapped
      {"ip6: \"fd00::1\", port: 0}", "ip6: \"fec0::1\", port: 0}", w[3].c_str()},             // site-local
      {"ip6: \"fd00::1\", port: 0}", "ip6: \"10.0.0.1\", port: 0}", ":9:84: vms[0].ip6: '10.0.0.1' is not an IPv6 address"},
      {"tenant: 200, mac: \"02:00:00:00:0a:03\", ip: 192.168.0.1,", "tenant: 100, mac: \"02:00:00:00:0a:03\", ip: 192.168.0.5,",
       ":10:84: vms[1].ip6: another VM on this port has this IPv6 address"},
      // The same tenant's address on another port: delivery by (VNI, address) could not tell them apart.
      {"ip: 192.168.0.5, port: 0}", "ip: 192.168.0.5, ip6: \"fd00::1\", port: 2}",
       ":11:84: vms[2].ip6: VM a1 of tenant 100 has this IPv6 address"},
      {"ip: 192.168.0.5, port: 0}", "ip: 192.168.0.1, port: 2}", ":11:66: vms[2].ip: VM a1 of tenant 100 has this IP"},
      // A local VM's MAC names it to neighbour discovery: unicast, one per port and tags.
      {"mac: \"02:00:00:00:0a:01\"", "mac: \"03:00:00:00:0a:01\"", ":9:41: vms[0].mac: must be a unicast MAC, not all zeros"},
      {"mac: \"02:00:00:00:0a:05\"", "mac: \"02:00:00:00:0a:01\"", ":11:41: vms[2].mac: another VM on this port has this MAC"},
      {"ip: 192.168.0.3, ip6: \"fd00::3\"", "ip: 192.168.0.3, ip6: \"fd00::1\"",
       ":17:58: remote_vms[2].ip6: local VM a1 of tenant 100 has this IPv6 address"},
      {"ip: 192.168.0.3, ip6: \"fd00::3\"", "ip: 192.168.0.3, ip6: \"fd00::2\"",
       ":17:58: remote_vms[2].ip6: remote VM b1 of tenant 100 has this IPv6 address"},
      {"ip: 192.168.0.3, ip6: \"fd00::3\"", "ip: 192.168.0.2, ip6: \"fd00::3\"",
       ":17:40: remote_vms[2].ip: remote VM b1 of tenant 100 has this IP"},
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_ipv6");
  if (dir.empty()) return 1;

  // VM side. Data frames of distinct lengths (same_frames tells them apart).
  const std::vector<Frame> a1_data = {udp6(kA1, kB1, 1, 2, 4000, 100), udp6(kA1, kB1, 1, 2, 4001, 130),
                                      udp6(kA1, kB1, 1, 2, 4000, 170)};
  const Frame a2_inner = udp6(kA2, kB2, 1, 2, 5000, 210);
  Frame bad_sum = solicit(kA1, 1, 2);
  bad_sum[57] ^= 0x40;
  Frame cut = udp6(kA1, kB1, 1, 2, 4000, 100);
  cut.resize(cut.size() - 10);
  std::vector<Frame> vm_in = {solicit(kA1, 1, 2), tagged(solicit(kA2, 1, 2), 200), solicit(kA1, 1, 2, true)};
  vm_in.insert(vm_in.end(), a1_data.begin(), a1_data.end());
  vm_in.insert(vm_in.end(), {tagged(a2_inner, 200),
                             solicit(kA1, 1, 3),                              // c1 has no MAC
                             solicit(kA1, 0, 1),                              // duplicate address detection
                             solicit({2, 0, 0, 0, 0x0a, 0x99}, 1, 2),         // no VM has this MAC
                             solicit(kA3, 5, 2),                              // a3 has no ip6
                             bad_sum,                                         // malformed
                             udp6(kA1, kB1, 1, 9, 4000, 100),                 // unknown_pair
                             // For the VM's own link (local_scope): a router solicitation,
                             // an MLD report (behind hop-by-hop) and link-local UDP.
                             ip6_frame({0x33, 0x33, 0, 0, 0, 2}, kA1, link_local(0xa1), group(2), 58, 255,
                                       {133, 0, 0, 0, 0, 0, 0, 0}),
                             ip6_frame({0x33, 0x33, 0, 0, 0, 0x16}, kA1, link_local(0xa1), group(0x16), 0, 1,
                                       {58, 0, 5, 2, 0, 0, 1, 0, 143, 0, 0, 0, 0, 0, 0, 0}),
                             ip6_frame(kB1, kA1, link_local(0xa1), link_local(0xb1), 17, 64, {0x13, 0x88, 0x13, 0x89, 0, 8, 0, 0}),
                             cut});                                           // malformed
  const std::vector<Frame> want_na = {advertise(kA1, 1, 2, kB1), tagged(advertise(kA2, 1, 2, kB2), 200),
                                      advertise(kA1, 1, 2, kB1)};

  // Fabric side: b1 -> a1 and b2 -> a2 in IPv6, and one for no VM.
  const Frame to_a1 = udp6(kB1, kA1, 2, 1, 6000, 250), to_a2 = udp6(kB2, kA2, 2, 1, 6001, 290);
  const std::vector<Frame> fab_in = {
      ufab_frame(kHostB, 100, kPairB1A1, route({0}), wire::kNextData, to_a1),
      ufab_frame(kHostB, 200, kPairB2A2, route({0}), wire::kNextData, to_a2),
      ufab_frame(kHostB, 100, kPairB1A1, route({0}), wire::kNextData, udp6(kB1, kA1, 2, 7, 6000, 60)),  // unknown_vm
  };

  for (const bool two : {false, true}) {
    const PortsEdgeRun run = run_edge_on_port_pcaps(argv[1], dir, two ? "v6w" : "v6", kConfig, {vm_in, fab_in}, two);
    const char* how = two ? "two workers" : "one lcore";
    // Port 0: the two advertisements and the two delivered frames (a2's tagged again).
    std::vector<Frame> want0 = want_na;
    want0.push_back(to_a1);
    want0.push_back(tagged(to_a2, 200));
    ITEST_CHECK(same_frames(want0, run.port_out[0]), "%s: port 0 has %zu frames, want the 3 advertisements and 2 deliveries",
                how, run.port_out[0].size());
    // Port 1: the data frames, with their VNI and pair, inner unchanged.
    std::map<uint32_t, std::vector<Frame>> inner;  // by pair id
    for (const Frame& f : run.port_out[1]) {
      wire::FrameView v;
      if (wire::parse_frame(f, v) != wire::WireError::ok || v.shim.next != wire::kNextData) continue;
      const uint32_t want_vni = v.shim.pair_id == kPairA1B1 ? 100 : v.shim.pair_id == kPairA2B2 ? 200 : 0;
      ITEST_CHECK(v.shim.vni == want_vni, "%s: pair %08x's data with VNI %u", how, v.shim.pair_id, v.shim.vni);
      inner[v.shim.pair_id].emplace_back(f.begin() + static_cast<ptrdiff_t>(v.payload_offset), f.end());
    }
    ITEST_CHECK(same_frames(a1_data, inner[kPairA1B1]), "%s: a1 -> b1: %zu IPv6 frames, want its 3 unchanged", how,
                inner[kPairA1B1].size());
    ITEST_CHECK(same_frames({a2_inner}, inner[kPairA2B2]), "%s: a2 -> b2: %zu IPv6 frames, want its one untagged", how,
                inner[kPairA2B2].size());
    auto f = run.final;
    ITEST_CHECK(f["nd_replied"] == 3 && f["drop.nd_unanswered"] == 4 && f["drop.malformed"] == 2 &&
                    f["drop.unknown_pair"] == 1 && f["drop.local_scope"] == 3 && f["drop.unknown_vm"] == 1 && f["encap"] == 4 &&
                    f["decap"] == 2,
                "%s: nd_replied=%llu nd_unanswered=%llu malformed=%llu unknown_pair=%llu local_scope=%llu unknown_vm=%llu "
                "encap=%llu decap=%llu",
                how, U(f["nd_replied"]), U(f["drop.nd_unanswered"]), U(f["drop.malformed"]), U(f["drop.unknown_pair"]),
                U(f["drop.local_scope"]),
                U(f["drop.unknown_vm"]), U(f["encap"]), U(f["decap"]));
    ITEST_CHECK(f["conserved"] == 1 && f["queued"] == 0 &&
                    f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"],
                "%s: conservation, nothing left queued", how);
    if (two) {
      auto w0 = parse_line(run.out, "ufab-edge worker=0 "), w1 = parse_line(run.out, "ufab-edge worker=1 ");
      ITEST_CHECK(w0["handed_off"] + w1["handed_off"] >= 1, "two workers: a VM's IPv6 frames handed to its owner");
    }
  }
  config_errors(argv[1], dir);
  return conclude(dir, "IPv6 frames classified, encapsulated and delivered; solicitations answered byte for byte");
}
