// params.window_gating (the switch `deploy/ufab bench edge` uses, because
// nothing answers probes on its net_null fabric port). One edge on two
// net_pcap ports; the tenant's guarantee is 0, so its pair's window is 0
// (w' = phi * B_u * T with phi = 0, §3.4) and no response ever arrives:
//  - window_gating: true (default): not one data frame leaves, all 20 stay
//    queued in the scheduler;
//  - window_gating: false: all 20 leave, encapsulated unchanged, in order;
// in both runs rx + generated == tx + queued + dropped + absorbed.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <unistd.h>

#include <cstdio>
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

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002;  // 192.168.0.1 / .2
constexpr uint32_t kPairOut = 1u << 16 | 2;
constexpr size_t kFrames = 20;

std::string config(bool gating) {
  return std::string(R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  queue_capacity: 64
  flows_per_pair: 1
  window_gating: )") +
         (gating ? "true" : "false") + R"(
tenants:
  - vni: 100
    guarantee_gbps: 0
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
hosts:
  - name: hB
    ip: 10.0.0.2
    mac: 02:00:00:00:00:02
    base_rtt_us: 100
    paths: [[1]]
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
)";
}

// Runs the edge on vm_in; returns the final counters and the data frames
// that reached the fabric (decapsulated).
std::map<std::string, uint64_t> run_edge(const char* exe, const std::string& dir, bool gating,
                                         const std::vector<Frame>& vm_in, std::vector<Frame>& sent) {
  const PcapEdgeRun run = run_edge_on_pcaps(exe, dir, gating ? "on" : "off", config(gating), vm_in, {});  // nothing answers
  for (const Frame& fr : run.fab_out) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) == wire::WireError::ok && v.shim.next == wire::kNextData) {
      ITEST_CHECK(v.shim.pair_id == kPairOut && v.shim.vni == 100, "data frame of a1 -> b1");
      sent.emplace_back(fr.begin() + static_cast<ptrdiff_t>(v.payload_offset), fr.end());
    }
  }
  auto f = run.final;
  ITEST_CHECK(f["rx"] == vm_in.size(), "rx=%llu", static_cast<unsigned long long>(f["rx"]));
  ITEST_CHECK(f["conserved"] == 1 && f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"],
              "conservation");
  ITEST_CHECK(f["dropped"] == 0, "dropped=%llu", static_cast<unsigned long long>(f["dropped"]));
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_gate");
  if (dir.empty()) return 1;
  std::vector<Frame> vm_in;
  for (size_t i = 0; i < kFrames; ++i) vm_in.push_back(vm_frame(kA1, kB1, 1000, 500, static_cast<uint8_t>(i)));

  std::vector<Frame> sent_on, sent_off;
  auto on = run_edge(argv[1], dir, true, vm_in, sent_on);
  ITEST_CHECK(on["encap"] == 0 && sent_on.empty() && on["queued"] == kFrames,
              "gating on, window 0: encap=%llu queued=%llu, want 0 and %zu", static_cast<unsigned long long>(on["encap"]),
              static_cast<unsigned long long>(on["queued"]), kFrames);

  auto off = run_edge(argv[1], dir, false, vm_in, sent_off);
  ITEST_CHECK(off["encap"] == kFrames && off["queued"] == 0, "gating off: encap=%llu queued=%llu, want %zu and 0",
              static_cast<unsigned long long>(off["encap"]), static_cast<unsigned long long>(off["queued"]), kFrames);
  ITEST_CHECK(sent_off == vm_in, "gating off: %zu data frames on the fabric, want the %zu VM frames unchanged, in order",
              sent_off.size(), kFrames);

  return conclude(dir, "window 0 holds every frame with gating on; with window_gating: false all leave");
}
