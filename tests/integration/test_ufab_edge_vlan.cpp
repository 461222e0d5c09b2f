// VLAN-tagged tenants (pipeline/vlan.hpp): tenant 100 is VLAN 100 and
// tenant 200 VLAN 200 on the VM side, tenant 300 QinQ (S-VLAN 10, C-VLAN
// 100: the same C-VLAN id as tenant 100's single tag); their VMs reuse one
// IP address on the same VM port (the tags tell them apart).
//
// Edge A (net_pcap): its VM port replays 802.1Q-tagged frames of a1
// (VLAN 100) and a2 (VLAN 200), QinQ frames of a3 (10, 100), two frames with
// VLAN 300 (no tenant), one with VLAN 0 (a priority tag, no tenant either),
// a QinQ frame (10, 101) and an S-tag without a C-tag (no tenant either),
// and one untagged frame from the VMs' address (no untagged VM has it).
// Checked on A's fabric capture: each tenant's frames leave encapsulated
// with its VNI and with the tags stripped (the inner frame is the VM's frame
// without its 4 or 8 tag bytes; the frames are of different flows, so in any
// order); A counts 5 unknown_vlan and 1 unknown_pair drops; conservation.
//
// Edge B (net_pcap) replays A's fabric capture: it decapsulates each data
// frame and delivers it to its VM port with the tenant's tag inserted
// again: B's VM capture holds exactly the tagged frames A was given,
// byte-identical (QinQ frames with both tags). B also answers A's probes.
//
// Config: vlan 0, 4095 and a VLAN two tenants share are refused with
// file:line and the field (QinQ's are in test_edge_vlan_config).
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
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

constexpr uint32_t kVmA = 0xc0a80001, kVmB = 0xc0a80002;  // a1/a2 and b1/b2 share an address

const char* kEdgeA = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  idle_finish_ms: 60000
tenants:
  - {vni: 100, guarantee_gbps: 2, vlan: 100}
  - {vni: 200, guarantee_gbps: 2, vlan: 200}
  - {vni: 300, guarantee_gbps: 2, qinq: [10, 100]}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 3, tenant: 200, mac: "02:00:00:00:0a:03", ip: 192.168.0.1, port: 0}
  - {name: a3, id: 5, tenant: 300, mac: "02:00:00:00:0a:05", ip: 192.168.0.1, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]], reply_path: [0]}
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
  - {name: b2, id: 4, tenant: 200, ip: 192.168.0.2, host: hB}
  - {name: b3, id: 6, tenant: 300, ip: 192.168.0.2, host: hB}
)";

const char* kEdgeB = R"(edge:
  fabric_port: 1
  ip: 10.0.0.2
  mac: 02:00:00:00:00:02
params:
  idle_finish_ms: 60000
tenants:
  - {vni: 100, guarantee_gbps: 2, vlan: 100}
  - {vni: 200, guarantee_gbps: 2, vlan: 200}
  - {vni: 300, guarantee_gbps: 2, qinq: [10, 100]}
vms:
  - {name: b1, id: 2, tenant: 100, mac: "02:00:00:00:0b:02", ip: 192.168.0.2, port: 0}
  - {name: b2, id: 4, tenant: 200, mac: "02:00:00:00:0b:04", ip: 192.168.0.2, port: 0}
  - {name: b3, id: 6, tenant: 300, mac: "02:00:00:00:0b:06", ip: 192.168.0.2, port: 0}
hosts:
  - {name: hA, ip: 10.0.0.1, mac: "02:00:00:00:00:01", base_rtt_us: 100, paths: [[0]], reply_path: [0]}
remote_vms:
  - {name: a1, id: 1, tenant: 100, ip: 192.168.0.1, host: hA}
  - {name: a2, id: 3, tenant: 200, ip: 192.168.0.1, host: hA}
  - {name: a3, id: 5, tenant: 300, ip: 192.168.0.1, host: hA}
)";

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

// Runs ufab-edge on two net_pcap ports until idle; its stdout.
std::string run_edge(const char* edge, const std::string& dir, const std::string& name, const std::string& vm_in,
                     const std::string& fab_in) {
  const std::string prefix = "ufabvlan" + name + std::to_string(getpid());
  std::vector<std::string> cmd = {edge};
  for (const std::string& s : edge_eal(prefix, "0")) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev", "net_pcap0,rx_pcap=" + vm_in + ",tx_pcap=" + dir + "/" + name + "_vm_out.pcap",
                         "--vdev", "net_pcap1,rx_pcap=" + fab_in + ",tx_pcap=" + dir + "/" + name + "_fab_out.pcap",
                         "--", "--config", dir + "/" + name + ".yaml", "--stats-interval", "0",
                         "--exit-after-idle-ms", "400"});
  const RunResult r = run_with_deadline(cmd, dir + "/" + name + ".out", dir + "/" + name + ".err", 30);
  remove_dpdk_runtime(prefix);
  const std::string out = read_file(dir + "/" + name + ".out");
  std::printf("edge %s:\n%s", name.c_str(), out.c_str());
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "edge %s: exit %d: %s", name.c_str(), r.exit_code,
              read_file(dir + "/" + name + ".err").c_str());
  return out;
}

void config_errors(const char* edge, const std::string& dir) {
  check_config_errors(edge, dir, kEdgeA, {
      {"guarantee_gbps: 2, vlan: 200}", "guarantee_gbps: 2, vlan: 0}", ":9:41: tenants[1].vlan: "},
      {"guarantee_gbps: 2, vlan: 200}", "guarantee_gbps: 2, vlan: 4095}", ":9:41: tenants[1].vlan: "},
      {"guarantee_gbps: 2, vlan: 200}", "guarantee_gbps: 2, vlan: 100}",
       ":9:41: tenants[1].vlan: VLAN 100 already names tenant 100"},
      {"tenant: 200, mac: \"02:00:00:00:0a:03\"", "tenant: 100, mac: \"02:00:00:00:0a:03\"",
       ":13:66: vms[1].ip: another VM on this port and VLAN has this IP"},
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  char tmpl[] = "/tmp/ufab_edge_vlan.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  write_text(dir + "/a.yaml", kEdgeA);
  write_text(dir + "/b.yaml", kEdgeB);

  // 6 frames per tenant (distinct lengths: same_frames identifies them so),
  // interleaved, and the frames no tenant takes.
  std::vector<Frame> vm_in, want_tagged;
  std::map<uint32_t, std::vector<Frame>> want_inner;  // by VNI: the untagged frames
  for (int i = 0; i < 6; ++i)
    for (const auto& [vid, vni] : {std::pair<uint16_t, uint32_t>{100, 100}, {200, 200}}) {
      const Frame u = vm_frame(kVmA, kVmB, static_cast<uint16_t>(1000 + i), 100 + 10 * i + vid / 100,
                               static_cast<uint8_t>(i + vid));
      vm_in.push_back(tagged(u, vid));
      want_tagged.push_back(vm_in.back());
      want_inner[vni].push_back(u);
    }
  for (int i = 0; i < 6; ++i) {  // tenant 300, QinQ (10, 100); tagged lengths 2 mod 10 (the others 5, 6)
    const Frame u = vm_frame(kVmA, kVmB, static_cast<uint16_t>(1000 + i), 104 + 10 * i, static_cast<uint8_t>(i + 77));
    vm_in.push_back(qinq(u, 10, 100));
    want_tagged.push_back(vm_in.back());
    want_inner[300].push_back(u);
  }
  const Frame u = vm_frame(kVmA, kVmB, 999, 64, 1);
  vm_in.push_back(tagged(u, 300));  // no tenant has VLAN 300
  vm_in.push_back(tagged(u, 300));
  vm_in.push_back(tagged(u, 0));    // priority tag: no tenant has VLAN 0
  vm_in.push_back(qinq(u, 10, 101));  // no tenant has QinQ (10, 101)
  vm_in.push_back(qinq(u, 10, 0, false));  // an S-tag without a C-tag
  vm_in.push_back(u);               // untagged: no untagged VM has this address
  write_pcap(dir + "/a_vm_in.pcap", vm_in);
  write_pcap(dir + "/empty.pcap", {});

  const std::string out_a = run_edge(argv[1], dir, "a", dir + "/a_vm_in.pcap", dir + "/empty.pcap");
  auto fa = parse_line(out_a, "ufab-edge final ");
  ITEST_CHECK(fa["rx"] == vm_in.size() && fa["encap"] == 18 && fa["conserved"] == 1 &&
                  fa["drop.unknown_vlan"] == 5 && fa["drop.unknown_pair"] == 1 && fa["dropped"] == 6,
              "edge A: rx=%llu encap=%llu unknown_vlan=%llu unknown_pair=%llu dropped=%llu", U(fa["rx"]),
              U(fa["encap"]), U(fa["drop.unknown_vlan"]), U(fa["drop.unknown_pair"]), U(fa["dropped"]));
  std::map<uint32_t, std::vector<Frame>> got_inner;
  for (const Frame& fr : read_pcap(dir + "/a_fab_out.pcap")) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) == wire::WireError::ok && v.shim.next == wire::kNextData)
      got_inner[v.shim.vni].emplace_back(fr.begin() + static_cast<ptrdiff_t>(v.payload_offset), fr.end());
  }
  for (const uint32_t vni : {100u, 200u, 300u})
    ITEST_CHECK(same_frames(want_inner[vni], got_inner[vni]),
                "edge A, VNI %u: %zu data frames, want the %zu VM frames without their tag, unchanged",
                vni, got_inner[vni].size(), want_inner[vni].size());
  ITEST_CHECK(got_inner.size() == 3, "edge A: data of %zu VNIs", got_inner.size());

  const std::string out_b = run_edge(argv[1], dir, "b", dir + "/empty.pcap", dir + "/a_fab_out.pcap");
  auto fb = parse_line(out_b, "ufab-edge final ");
  ITEST_CHECK(fb["decap"] == 18 && fb["conserved"] == 1 && fb["dropped"] == 0 && fb["reflected"] >= 2,
              "edge B: decap=%llu reflected=%llu dropped=%llu", U(fb["decap"]), U(fb["reflected"]), U(fb["dropped"]));
  const std::vector<Frame> vm_out = read_pcap(dir + "/b_vm_out.pcap");
  ITEST_CHECK(same_frames(want_tagged, vm_out), "edge B's VM port: %zu frames, want the %zu tagged frames byte-identical",
              vm_out.size(), want_tagged.size());
  size_t n_qinq = 0;
  for (const Frame& f : vm_out) {
    const uint16_t vid = static_cast<uint16_t>((f[14] << 8 | f[15]) & 0xfff);
    if (f[12] == 0x88 && f[13] == 0xa8) {  // tenant 300: S-tag 10, then C-tag 100
      ++n_qinq;
      ITEST_CHECK(vid == 10 && f[16] == 0x81 && f[17] == 0x00 && ((f[18] << 8 | f[19]) & 0xfff) == 100,
                  "QinQ frame delivered without its tenant's tags");
      continue;
    }
    ITEST_CHECK(f[12] == 0x81 && f[13] == 0x00 && (vid == 100 || vid == 200), "delivered frame without its tenant's tag");
  }
  ITEST_CHECK(n_qinq == 6, "%zu QinQ frames delivered, want 6", n_qinq);

  config_errors(argv[1], dir);
  if (itest::g_failures != 0) {
    std::printf("%d checks failed; files kept in %s\n", itest::g_failures, dir.c_str());
    return 1;
  }
  std::filesystem::remove_all(dir);
  std::printf("PASS: VLAN and QinQ tenants: tags stripped before encap, re-inserted on delivery, unknown tags counted\n");
  return 0;
}
