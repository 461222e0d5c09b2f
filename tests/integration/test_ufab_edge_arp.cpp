// Proxy ARP on the VM side (pipeline/vm_arp.cpp). One edge on net_pcap
// ports: three tenants share VM port 0 and the address 192.168.0.1 (100
// untagged, 200 on VLAN 200, 300 on QinQ [10, 100]); their remote VMs at
// 192.168.0.2 have MACs in the configuration, c1 (tenant 100, .3) has none,
// and b4 (.4) is tenant 200's. VM port 0 replays ARP frames; checked on its
// capture and the counters:
//  - a1's, a2's and a3's requests for .2 are answered, each with its own
//    tenant's remote MAC and with the tags it came with, byte for byte as
//    written out here; a padded request's reply keeps its 60 bytes;
//  - unanswered (drop.arp_unanswered, nothing sent): a1 asking for .4 (a
//    VM of another tenant), for .3 (no MAC), a sender address that is no
//    VM's, a gratuitous announcement, a DAD probe (sender 0.0.0.0), a reply;
//  - a truncated ARP frame is malformed, an LLDP frame stays not_ipv4;
//  - arp_replied=4, the port's rx and tx, conservation.
// Run on one lcore and with a control lcore and two workers (the ARP frames
// are answered by the worker polling the port). A remote VM MAC that is
// multicast or all zeros is refused with file:line:col and the field, and
// so is a remote VM at a local VM's address of its tenant (its gratuitous
// announcement would otherwise be answered).
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <cstdio>
#include <string>
#include <vector>

#include "tests/integration/arp_frames.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
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
  - {vni: 300, guarantee_gbps: 2, qinq: [10, 100]}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 3, tenant: 200, mac: "02:00:00:00:0a:03", ip: 192.168.0.1, port: 0}
  - {name: a3, id: 5, tenant: 300, mac: "02:00:00:00:0a:05", ip: 192.168.0.1, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
  - {name: b1, id: 2, tenant: 100, mac: "02:00:00:00:0b:02", ip: 192.168.0.2, host: hB}
  - {name: b2, id: 4, tenant: 200, mac: "02:00:00:00:0b:04", ip: 192.168.0.2, host: hB}
  - {name: b3, id: 6, tenant: 300, mac: "02:00:00:00:0b:06", ip: 192.168.0.2, host: hB}
  - {name: c1, id: 7, tenant: 100, ip: 192.168.0.3, host: hB}
  - {name: b4, id: 8, tenant: 200, mac: "02:00:00:00:0b:08", ip: 192.168.0.4, host: hB}
)";

const Mac kA1 = {2, 0, 0, 0, 0x0a, 0x01}, kA2 = {2, 0, 0, 0, 0x0a, 0x03}, kA3 = {2, 0, 0, 0, 0x0a, 0x05};
const Mac kB1 = {2, 0, 0, 0, 0x0b, 0x02}, kB2 = {2, 0, 0, 0, 0x0b, 0x04}, kB3 = {2, 0, 0, 0, 0x0b, 0x06};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_arp");
  if (dir.empty()) return 1;

  Frame padded = who_has(kA1, 1, 2);
  padded.resize(60, 0x5a);
  Frame padded_reply = is_at(kA1, 1, kB1, 2);
  padded_reply.resize(60, 0x5a);
  Frame cut = who_has(kA1, 1, 2);
  cut.resize(38);
  Frame lldp = vm_frame(0xc0a80001, 0xc0a80002, 1000, 60, 1);
  lldp[12] = 0x88;
  lldp[13] = 0xcc;
  const std::vector<Frame> vm_in = {
      who_has(kA1, 1, 2),                   // answered: b1
      tagged(who_has(kA2, 1, 2), 200),      // answered: b2, VLAN 200
      qinq(who_has(kA3, 1, 2), 10, 100),    // answered: b3, QinQ
      who_has(kA1, 1, 4),                   // .4 is tenant 200's
      who_has(kA1, 1, 3),                   // c1 has no MAC
      who_has(kA1, 9, 2),                   // 192.168.0.9 is no VM's address
      who_has(kA1, 1, 1),                   // gratuitous
      who_has(kA1, 0, 1),                   // DAD probe
      is_at(kB1, 2, kA1, 1),                // a reply
      cut,                                  // malformed
      padded,                               // answered, 60 bytes
      lldp,                                 // neither IPv4, IPv6 nor ARP
  };
  const std::vector<Frame> want = {is_at(kA1, 1, kB1, 2), tagged(is_at(kA2, 1, kB2, 2), 200),
                                   qinq(is_at(kA3, 1, kB3, 2), 10, 100), padded_reply};

  for (const bool two : {false, true}) {
    const PortsEdgeRun run = run_edge_on_port_pcaps(argv[1], dir, two ? "arp2" : "arp1", kConfig, {vm_in, {}}, two);
    const char* how = two ? "two workers" : "one lcore";
    const std::vector<Frame>& got = run.port_out[0];
    ITEST_CHECK(got.size() == want.size(), "%s: %zu frames on the VM port, want %zu replies", how, got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i)
      ITEST_CHECK(got[i] == want[i], "%s: reply %zu differs from the one written out here (%zu vs %zu bytes)", how, i,
                  got[i].size(), want[i].size());
    auto f = run.final;
    ITEST_CHECK(f["arp_replied"] == 4 && f["drop.arp_unanswered"] == 6 && f["drop.malformed"] == 1 &&
                    f["drop.not_ipv4"] == 1,
                "%s: arp_replied=%llu arp_unanswered=%llu malformed=%llu not_ipv4=%llu", how,
                static_cast<unsigned long long>(f["arp_replied"]), static_cast<unsigned long long>(f["drop.arp_unanswered"]),
                static_cast<unsigned long long>(f["drop.malformed"]), static_cast<unsigned long long>(f["drop.not_ipv4"]));
    auto p0 = parse_line(run.out, "ufab-edge port=0 ");
    ITEST_CHECK(p0["rx"] == vm_in.size() && p0["tx"] == 4 && p0["drop.arp_unanswered"] == 6, "%s: port 0 rx=%llu tx=%llu",
                how, static_cast<unsigned long long>(p0["rx"]), static_cast<unsigned long long>(p0["tx"]));
    ITEST_CHECK(f["conserved"] == 1 && f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"] &&
                    f["encap"] == 0,
                "%s: conservation, nothing encapsulated", how);
  }

  // Remote VM MACs an ARP answer cannot carry, and a remote VM at a local VM's address.
  check_config_errors(argv[1], dir, kConfig, {
      {"02:00:00:00:0b:02", "01:00:5e:00:00:01", ":16:41: remote_vms[0].mac: must be a unicast MAC, not all zeros"},
      {"02:00:00:00:0b:02", "00:00:00:00:00:00", ":16:41: remote_vms[0].mac: must be a unicast MAC, not all zeros"},
      {"ip: 192.168.0.3, host: hB", "ip: 192.168.0.1, host: hB",
       ":19:40: remote_vms[3].ip: local VM a1 of tenant 100 has this IP"},
  });
  return conclude(dir, "proxy ARP answered 4 requests byte for byte, 6 unanswered, tags kept, bad MACs refused");
}
