// ufab-edge with a control lcore and two workers (issue 4 item 1, issue 8
// item 6), on net_pcap ports: VMs a1 and a2 share VM port 0 and land on
// different workers (sharding by local VM), so worker 0 (the port's RX lcore)
// hands a2's frames to worker 1 through its ring; worker 1 is the fabric
// port's RX lcore and hands a1's fabric frames to worker 0; the pcap port has
// one TX queue, so worker 1 transmits through the port's TX ring. Checked:
//  - every VM frame leaves on the fabric encapsulated, unchanged, for its own
//    pair, and no flow is reordered; the fabric's data frames reach the VM
//    port unchanged; each probe is answered;
//  - /ufab/workers shows both workers with one pair each; /ufab/pair,1 has a
//    history; /ufab/stats balances across workers and rings;
//  - a reload adds remote VM b2 (pipeline/remote_vms.hpp): each worker makes
//    the pair of its local VM (a1 -> b2 on worker 0 with index 2, a2 -> b2
//    on worker 1 with index 3), in a command through its ring; a second
//    adds local VMs a3 and a4 (pipeline/local_vms.hpp): a3 to worker 0
//    (pairs 4, 5), a4 to worker 1 (pairs 6, 7), the one with fewer pairs;
//  - /ufab/port_add attaches net_pcap2 (port 2, pipeline/ports.hpp) while
//    the workers run: polled by worker 0 (both workers poll one port), its
//    5 frames (from an address no VM has) are unknown_pair on port 2; then
//    /ufab/port_remove detaches it and /ufab/stats keeps its counts;
//  - SIGTERM: the edge drains, sends finish for both active pairs (counted in
//    the fabric capture), prints the report (conservation, no drops, frames
//    handed between workers) and exits 0;
//  - too few lcores for --workers: exit 2 and a message naming what to add.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
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

// Port 2's unknown_pair count in /ufab/stats (-1: no port 2).
long long port_unknown(const std::string& stats) {
  const size_t at = stats.find("\"port2\":{");
  if (at == std::string::npos) return -1;
  return ufab::itest::json_number(stats.substr(at, stats.find('}', at) - at), "unknown_pair");
}

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002, kA2 = 0xc0a80003;
constexpr uint32_t kHostB = 0x0a000002;
constexpr uint32_t kPairA1 = 1u << 16 | 2, kPairA2 = 3u << 16 | 2;  // a1 -> b1, a2 -> b1
constexpr uint32_t kInA1 = 2u << 16 | 1, kInA2 = 2u << 16 | 3;      // b1 -> a1, b1 -> a2

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  flows_per_pair: 2
  idle_finish_ms: 60000   # the pairs stay active until the stop sequence finishes them
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 3, tenant: 100, mac: "02:00:00:00:0a:03", ip: 192.168.0.3, port: 0}
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

// Sequence number written in the payload: byte 60..61 of a VM frame.
uint16_t seq_of(const Frame& f) { return static_cast<uint16_t>(f[60] << 8 | f[61]); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  char tmpl[] = "/tmp/ufab_edge_wk.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl, prefix = "ufabedgewk" + std::to_string(getpid());
  write_text(dir + "/edge.yaml", kConfig);

  // 20 frames of a1 and 20 of a2, interleaved, 3 flows each; the payload
  // carries a sequence number per VM.
  std::vector<Frame> vm_in;
  std::map<uint32_t, std::vector<Frame>> sent;  // by source VM
  for (int i = 0; i < 40; ++i) {
    const uint32_t src = i % 2 == 0 ? kA1 : kA2;
    Frame f = vm_frame(src, kB1, static_cast<uint16_t>(1000 + (i / 2) % 3), 200, static_cast<uint8_t>(i));
    f[60] = 0;
    f[61] = static_cast<uint8_t>(i / 2);
    sent[src].push_back(f);
    vm_in.push_back(f);
  }
  const Frame to_a1 = vm_frame(kB1, kA1, 2000, 300, 77), to_a2 = vm_frame(kB1, kA2, 2001, 310, 78);
  const std::vector<Frame> fab_in = {
      control(kHostB, route({0}), message(wire::MsgType::probe, kInA1, 128, {1}, 1), 100),
      ufab_frame(kHostB, 100, kInA1, route({0}), wire::kNextData, to_a1),
      control(kHostB, route({0}), message(wire::MsgType::probe, kInA2, 128, {1}, 1), 100),
      ufab_frame(kHostB, 100, kInA2, route({0}), wire::kNextData, to_a2),
  };
  write_pcap(dir + "/vm_in.pcap", vm_in);
  write_pcap(dir + "/fab_in.pcap", fab_in);

  const int pid = spawn_two_worker_pcap_edge(argv[1], prefix, dir);
  ITEST_CHECK(wait_for_text(dir + "/out", "VM-pairs", 20), "the edge did not start: %s", read_file(dir + "/err").c_str());
  // Until every input frame was received (the pcaps replay at once).
  std::string stats;
  for (int i = 0; i < 200; ++i) {
    stats = telemetry(prefix, "/ufab/stats");
    if (json_number(stats, "rx") == static_cast<long long>(vm_in.size() + fab_in.size()) &&
        json_number(stats, "queued") == 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string workers = telemetry(prefix, "/ufab/workers"), pair1 = telemetry(prefix, "/ufab/pair,1");
  {
    std::string more = kConfig;
    more += "  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}\n";
    write_text(dir + "/edge.yaml", more);
  }
  const std::string reload = telemetry(prefix, "/ufab/reload"), workers2 = telemetry(prefix, "/ufab/workers");
  const std::string pair2 = telemetry(prefix, "/ufab/pair,2"), pair3 = telemetry(prefix, "/ufab/pair,3");
  std::printf("%s\n%s\n%s\n%s\n", reload.c_str(), workers2.c_str(), pair2.c_str(), pair3.c_str());
  ITEST_CHECK(reload.find("\"changes\":[\"remote VM b2 added (host hB): 2 pair(s)\"]") != std::string::npos,
              "reload adding b2: %s", reload.c_str());
  ITEST_CHECK(workers2.find("\"worker0\":{\"lcore\":1,\"pairs\":2") != std::string::npos &&
                  workers2.find("\"worker1\":{\"lcore\":2,\"pairs\":2") != std::string::npos,
              "/ufab/workers after the reload: two pairs each");
  ITEST_CHECK(json_number(pair2, "worker") == 0 && pair2.find("\"local\":\"a1\",\"remote\":\"b2\"") != std::string::npos &&
                  json_number(pair3, "worker") == 1 && pair3.find("\"local\":\"a2\",\"remote\":\"b2\"") != std::string::npos,
              "/ufab/pair,2 and 3: b2's pairs on the owners of a1 and a2");
  // Local VMs a3 and a4 added on port 0 (pipeline/local_vms.hpp): a3 to
  // worker 0 (both have 2 pairs; ties to the lower), a4 then to worker 1.
  {
    std::string more = kConfig;
    more.insert(more.find("hosts:"), "  - {name: a3, id: 5, tenant: 100, mac: \"02:00:00:00:0a:05\", ip: 192.168.0.5, port: 0}\n"
                                     "  - {name: a4, id: 6, tenant: 100, mac: \"02:00:00:00:0a:06\", ip: 192.168.0.6, port: 0}\n");
    more += "  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}\n";
    write_text(dir + "/edge.yaml", more);
  }
  const std::string reload2 = telemetry(prefix, "/ufab/reload"), workers3 = telemetry(prefix, "/ufab/workers");
  const std::string pair5 = telemetry(prefix, "/ufab/pair,5"), pair6 = telemetry(prefix, "/ufab/pair,6");
  std::printf("%s\n%s\n%s\n%s\n", reload2.c_str(), workers3.c_str(), pair5.c_str(), pair6.c_str());
  ITEST_CHECK(reload2.find("\"changes\":[\"local VM a3 added (port 0, worker 0): 2 pair(s)\","
                           "\"local VM a4 added (port 0, worker 1): 2 pair(s)\"]") != std::string::npos,
              "reload adding a3 and a4: %s", reload2.c_str());
  ITEST_CHECK(workers3.find("\"local_vm_room\":62,") != std::string::npos &&
                  workers3.find("\"worker0\":{\"lcore\":1,\"pairs\":4") != std::string::npos &&
                  workers3.find("\"worker1\":{\"lcore\":2,\"pairs\":4") != std::string::npos,
              "/ufab/workers after a3 and a4: four pairs each");
  ITEST_CHECK(json_number(pair5, "worker") == 0 && pair5.find("\"local\":\"a3\",\"remote\":\"b2\"") != std::string::npos &&
                  json_number(pair6, "worker") == 1 && pair6.find("\"local\":\"a4\",\"remote\":\"b1\"") != std::string::npos,
              "/ufab/pair,5 and 6: a3's on worker 0, a4's on worker 1");
  // A port attached and detached while both workers run.
  std::vector<Frame> hot_in;
  for (uint8_t i = 0; i < 5; ++i) hot_in.push_back(vm_frame(0xc0a80063, kB1, 3000, 100, i));  // 192.168.0.99: no VM
  write_pcap(dir + "/hot_in.pcap", hot_in);
  const std::string hot = telemetry(prefix, "/ufab/port_add,net_pcap2,rx_pcap=" + dir + "/hot_in.pcap,tx_pcap=" + dir +
                                                "/hot_out.pcap");
  ITEST_CHECK(hot.find("\"ok\":1") != std::string::npos && json_number(hot, "port") == 2 &&
                  hot.find("\"rx_mode\":\"dispatch\",\"rx_worker\":0") != std::string::npos,
              "port_add: %s", hot.c_str());
  std::string hot_stats;
  for (int i = 0; i < 100 && port_unknown(hot_stats = telemetry(prefix, "/ufab/stats")) != 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ITEST_CHECK(port_unknown(hot_stats) == 5, "port 2's 5 frames unknown_pair: %s", hot_stats.c_str());
  const std::string hot_removed = telemetry(prefix, "/ufab/port_remove,2");
  const std::string after = telemetry(prefix, "/ufab/stats");
  ITEST_CHECK(hot_removed.find("\"ok\":1,\"removed\":2") != std::string::npos && port_unknown(after) == 5 &&
                  after.find("\"removed\":1") != std::string::npos,
              "port_remove: %s %s", hot_removed.c_str(), after.c_str());
  kill(pid, SIGTERM);
  const RunResult r = wait_with_deadline(pid, 20);
  remove_dpdk_runtime(prefix);
  const std::string out = read_file(dir + "/out");
  std::printf("%stelemetry:\n%s\n%s\n%s\n", out.c_str(), stats.c_str(), workers.c_str(), pair1.c_str());
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "ufab-edge: exit %d: %s", r.exit_code, read_file(dir + "/err").c_str());

  ITEST_CHECK(json_number(stats, "conserved") == 1 && json_number(stats, "workers") == 2, "/ufab/stats: %s", stats.c_str());
  ITEST_CHECK(workers.find("\"worker0\":{\"lcore\":1,\"pairs\":1") != std::string::npos &&
                  workers.find("\"worker1\":{\"lcore\":2,\"pairs\":1") != std::string::npos,
              "/ufab/workers: a worker per lcore with one pair each");
  ITEST_CHECK(pair1.find("\"history\":[\"t_ns=") != std::string::npos && json_number(pair1, "worker") == 1,
              "/ufab/pair,1: a2's pair on worker 1, with history");

  auto f = parse_line(out, "ufab-edge final ");
  ITEST_CHECK(f["rx"] == vm_in.size() + fab_in.size() + hot_in.size() && f["conserved"] == 1 &&
                  f["dropped"] == hot_in.size() && f["drop.unknown_pair"] == hot_in.size(),
              "final: rx=%llu dropped=%llu", static_cast<unsigned long long>(f["rx"]),
              static_cast<unsigned long long>(f["dropped"]));
  ITEST_CHECK(f["encap"] == 40 && f["decap"] == 2 && f["reflected"] == 2, "encap/decap/reflected");
  auto w0 = parse_line(out, "ufab-edge worker=0 "), w1 = parse_line(out, "ufab-edge worker=1 ");
  // Worker 0 hands over a2's 20 VM frames; worker 1 a1's 2 fabric frames and
  // every frame it sends on the fabric (through the TX ring). Four pairs each after the reloads.
  ITEST_CHECK(w0["pairs"] == 4 && w1["pairs"] == 4 && w0["handed_off"] == 20 && w1["handed_off"] >= 2 + 20,
              "workers: handed_off %llu / %llu", static_cast<unsigned long long>(w0["handed_off"]),
              static_cast<unsigned long long>(w1["handed_off"]));
  ITEST_CHECK(out.find("ufab-edge stop: drained (queued=0), finishing 2 active pairs") != std::string::npos,
              "stop sequence");

  // Fabric capture: data per pair in per-flow order, unchanged; finishes; responses.
  std::map<uint32_t, std::vector<Frame>> got;
  std::map<uint32_t, size_t> finishes;
  size_t responses = 0;
  for (const Frame& fr : read_pcap(dir + "/fab_out.pcap")) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) != wire::WireError::ok) continue;
    if (v.shim.next == wire::kNextData) {
      got[v.shim.pair_id].emplace_back(fr.begin() + static_cast<ptrdiff_t>(v.payload_offset), fr.end());
      continue;
    }
    wire::Message m;
    if (wire::decode_message(std::span<const uint8_t>(fr).subspan(v.payload_offset, v.payload_len), m) !=
        wire::WireError::ok)
      continue;
    if (m.type == wire::MsgType::finish) ++finishes[m.pair_id];
    if (m.type == wire::MsgType::response) ++responses;
  }
  for (const auto& [pair, src] : {std::pair{kPairA1, kA1}, std::pair{kPairA2, kA2}}) {
    const std::vector<Frame>& g = got[pair];
    ITEST_CHECK(g.size() == 20, "pair 0x%08x: %zu data frames", pair, g.size());
    std::map<uint16_t, int> last;  // per flow (source port)
    size_t inversions = 0, changed = 0;
    for (const Frame& fr : g) {
      const uint16_t seq = seq_of(fr), flow = static_cast<uint16_t>(fr[34] << 8 | fr[35]);
      if (seq >= 20 || fr != sent[src][seq]) ++changed;
      if (last.count(flow) != 0 && seq < last[flow]) ++inversions;
      last[flow] = seq;
    }
    ITEST_CHECK(changed == 0 && inversions == 0, "pair 0x%08x: %zu changed, %zu per-flow inversions", pair, changed,
                inversions);
    ITEST_CHECK(finishes[pair] >= 1, "pair 0x%08x: no finish on the fabric", pair);
  }
  ITEST_CHECK(responses == 2, "responses=%zu", responses);
  const std::vector<Frame> vm_out = read_pcap(dir + "/vm_out.pcap");
  ITEST_CHECK(vm_out.size() == 2 && ((vm_out[0] == to_a1 && vm_out[1] == to_a2) || (vm_out[0] == to_a2 && vm_out[1] == to_a1)),
              "VM port got %zu frames, want the two inner frames unchanged", vm_out.size());

  // Too few lcores: named, with the fix.
  std::vector<std::string> few = {argv[1]};
  for (const std::string& s : edge_eal(prefix + "x", "0")) few.push_back(s);
  few.insert(few.end(), {"--vdev", "net_null0", "--vdev", "net_null1", "--", "--config", dir + "/edge.yaml",
                         "--workers", "2"});
  const RunResult rf = run_with_deadline(few, dir + "/few.out", dir + "/few.err", 20);
  remove_dpdk_runtime(prefix + "x");
  const std::string err = read_file(dir + "/few.err");
  std::printf("too few lcores: %s", err.c_str());
  ITEST_CHECK(rf.exit_code == 2 && err.find("--workers 2 needs 3 lcores") != std::string::npos &&
                  err.find("-l 0-2") != std::string::npos,
              "too few lcores: exit %d", rf.exit_code);

  if (ufab::itest::g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: two workers, dispatch both ways, per-flow order, graceful stop with finishes\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", ufab::itest::g_failures, dir.c_str());
  return 1;
}
