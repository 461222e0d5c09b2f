// ufab-edge as a process on random bad input, with two workers (issue 4 §6;
// the in-process ufab_edge_fuzz runs one worker): VMs a1 and a2 share VM
// port 0 and land on different workers, so each port's RX lcore reads every
// frame's headers to find its owner (dispatch.cpp) and hands the others'
// frames over through the rings. 12K frames replayed by net_pcap: on the
// VM port, a1's and a2's data, frames of unknown VMs, and uFAB frames
// (spoofing); on the fabric port, probes, finishes and tunnel data for a1
// and a2, and plain IPv4 (not uFAB); 70% of them mutated (bit flips,
// random bytes, truncation, random tails, extreme 16-bit fields). Checked:
// the edge takes every frame (rx), accounts for each (conserved=1 at the
// end, after SIGTERM's drain and finishes), counts the bad ones under
// their reasons, exits 0, and what it wrote is well formed: every fabric
// frame a uFAB frame from 10.0.0.1, every VM-port frame an IPv4 frame for
// a1 or a2; both workers handed frames over.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"
#include "tests/mutate_frame.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kA2 = 0xc0a80003, kB1 = 0xc0a80002, kHostB = 0x0a000002;
constexpr int kFramesPerPort = 6000;

const char* kConfig = R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {flows_per_pair: 2}
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 3, tenant: 100, mac: "02:00:00:00:0a:03", ip: 192.168.0.3, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]], reply_path: [0]}
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_fw"), prefix = "ufabedgefw" + std::to_string(getpid());
  if (dir.empty()) return 1;
  write_text(dir + "/edge.yaml", kConfig);

  std::mt19937_64 rng(20261129);
  const auto below = [&rng](uint64_t n) { return rng() % n; };
  const auto vm_side = [&]() -> Frame {
    switch (below(5)) {
      case 0: return vm_frame(0xc0a80063, kB1, 1000, 64, 1);  // a VM no config has
      case 1: return control(kHostB, route({0}), message(wire::MsgType::probe, 2u << 16 | 1, 64, {1}, 1), 100);
      default:
        return vm_frame(below(2) ? kA1 : kA2, kB1, static_cast<uint16_t>(1000 + below(4)), 18 + below(1400),
                        static_cast<uint8_t>(rng()));
    }
  };
  const auto fabric_side = [&]() -> Frame {
    const uint32_t local = below(2) ? 1 : 3, pair = 2u << 16 | local;  // b1 -> a1 or a2
    switch (below(5)) {
      case 0: return control(kHostB, route({0}), message(wire::MsgType::probe, pair, 64, {1}, 1), 100);
      case 1: return control(kHostB, route({0}), message(wire::MsgType::finish, pair, 0, {1}, 1), 100);
      case 2: return plain_udp(0x0a000001, 53);
      default:
        return ufab_frame(kHostB, 100, pair, route({0}), wire::kNextData,
                          vm_frame(kB1, local == 1 ? kA1 : kA2, 2000, 18 + below(1400), static_cast<uint8_t>(rng())));
    }
  };
  std::vector<Frame> vm_in, fab_in;
  for (int i = 0; i < kFramesPerPort; ++i) {
    for (std::vector<Frame>* in : {&vm_in, &fab_in}) {
      Frame f = in == &vm_in ? vm_side() : fabric_side();
      if (below(10) < 7) f = testing::mutate_frame(std::move(f), rng);
      if (f.empty()) f.push_back(0);  // a pcap record of 0 bytes is no frame
      in->push_back(std::move(f));
    }
  }
  write_pcap(dir + "/vm_in.pcap", vm_in);
  write_pcap(dir + "/fab_in.pcap", fab_in);

  const int pid = spawn_two_worker_pcap_edge(argv[1], prefix, dir);
  ITEST_CHECK(wait_for_text(dir + "/out", "VM-pairs", 20), "the edge did not start: %s", read_file(dir + "/err").c_str());
  const long long total = static_cast<long long>(vm_in.size() + fab_in.size());
  std::string stats;
  for (int i = 0; i < 400; ++i) {
    stats = telemetry(prefix, "/ufab/stats");
    if (json_number(stats, "rx") == total) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGTERM);
  const RunResult r = wait_with_deadline(pid, 30);
  remove_dpdk_runtime(prefix);
  const std::string out = read_file(dir + "/out");
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "ufab-edge: exit %d: %s", r.exit_code, read_file(dir + "/err").c_str());

  auto f = parse_line(out, "ufab-edge final ");
  ITEST_CHECK(static_cast<long long>(f["rx"]) == total && f["conserved"] == 1 &&
                  f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"],
              "final: rx=%llu of %lld, conserved=%llu", static_cast<unsigned long long>(f["rx"]), total,
              static_cast<unsigned long long>(f["conserved"]));
  for (const char* why : {"drop.spoofed", "drop.malformed", "drop.not_ufab", "drop.unknown_pair"})
    ITEST_CHECK(f[why] > 0, "no frame counted as %s", why);
  ITEST_CHECK(f["encap"] > 0 && f["decap"] > 0 && f["reflected"] > 0, "encap %llu, decap %llu, reflected %llu",
              static_cast<unsigned long long>(f["encap"]), static_cast<unsigned long long>(f["decap"]),
              static_cast<unsigned long long>(f["reflected"]));
  auto w0 = parse_line(out, "ufab-edge worker=0 "), w1 = parse_line(out, "ufab-edge worker=1 ");
  ITEST_CHECK(w0["handed_off"] > 0 && w1["handed_off"] > 0, "handed_off %llu / %llu: want both > 0",
              static_cast<unsigned long long>(w0["handed_off"]), static_cast<unsigned long long>(w1["handed_off"]));

  const std::vector<Frame> fab_out = read_pcap(dir + "/fab_out.pcap"), vm_out = read_pcap(dir + "/vm_out.pcap");
  size_t bad_fab = 0, bad_vm = 0;
  for (const Frame& fr : fab_out) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) != wire::WireError::ok || v.outer.src_ip != 0x0a000001) ++bad_fab;
  }
  for (const Frame& fr : vm_out) {
    const uint32_t dst = fr.size() >= 34 ? static_cast<uint32_t>(fr[30]) << 24 | fr[31] << 16 | fr[32] << 8 | fr[33] : 0;
    if (fr.size() < 34 || fr[12] != 0x08 || fr[13] != 0x00 || (dst != kA1 && dst != kA2)) ++bad_vm;
  }
  ITEST_CHECK(!fab_out.empty() && bad_fab == 0, "%zu of %zu fabric frames not uFAB frames from the edge", bad_fab,
              fab_out.size());
  ITEST_CHECK(!vm_out.empty() && bad_vm == 0, "%zu of %zu VM-port frames not IPv4 for a1 or a2", bad_vm, vm_out.size());
  std::printf("%s", out.c_str());
  return conclude(dir, "12K random and mutated frames through two workers: each taken, accounted for and counted "
                     "under its reason; everything written well formed");
}
