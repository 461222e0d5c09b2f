// ufab-edge with two fabric ports (uplinks; issue 4 §1: "one or more
// fabric-side ports"). One edge on three net_pcap ports: 0 the VM side, 1 and
// 2 the fabric (edge.fabric_port: [1, 2]). Host hB is reached by a path on
// port 1, host hC by a path on port 2, and hC's reply path leaves on port 1.
//
//  - VM a1 sends 5 frames to b1 (on hB) and 3 to c1 (on hC). Every data frame
//    and probe of a1 -> b1 must leave on port 1 with route [5], every one of
//    a1 -> c1 on port 2 with route [6]; nothing of either on the other port.
//    The same for the finishes each pair sends when it goes idle.
//  - Port 2 receives, as from hC: a probe of the pair c1 -> a1, answered with
//    a response that must leave on hC's reply path (port 1, route [7]); a
//    data frame of c1 -> a1, decapsulated to the VM port unchanged; and a
//    truncated frame, counted as malformed under port 2 (the port it came in
//    on), not port 1.
//  - Port 1 receives a data frame of b1 -> a1, decapsulated to the VM port
//    unchanged. With two workers port 1 is polled by worker 1 and a1 is
//    worker 0's: the frame crosses to its owner through worker 0's ring.
//  - rx + generated == tx + queued + dropped + absorbed.
// Run once on one lcore and once with a control lcore and two workers (each
// fabric port then polled by its own worker).
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <cstdio>
#include <string>
#include <vector>

#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002, kC1 = 0xc0a80003;  // 192.168.0.1 / .2 / .3
constexpr uint32_t kEdge = 0x0a000001, kHostB = 0x0a000002, kHostC = 0x0a000003;
constexpr uint32_t kPairAB = 1u << 16 | 2, kPairAC = 1u << 16 | 3, kPairCA = 3u << 16 | 1, kPairBA = 2u << 16 | 1;

const char* kConfig = R"(edge:
  fabric_port: [1, 2]
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100000, paths: [{labels: [5], port: 1}]}
  - name: hC
    ip: 10.0.0.3
    mac: 02:00:00:00:00:03
    base_rtt_us: 100000
    paths: [{labels: [6], port: 2}]
    reply_path: {labels: [7], port: 1}
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
  - {name: c1, id: 3, tenant: 100, ip: 192.168.0.3, host: hC}
)";

struct Seen {
  size_t data = 0, probes = 0, responses = 0, finishes = 0, other = 0;
};

// What one fabric port sent: frames of `pair` must go to `host` on route
// [label]; a response (to `resp_pair`, on route [resp_label]) may come too.
Seen check_port(const std::vector<Frame>& out, int port, uint32_t pair, uint32_t host, uint16_t label,
                uint32_t resp_pair, uint16_t resp_label) {
  Seen s;
  for (const Frame& fr : out) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) != wire::WireError::ok) {
      ITEST_CHECK(false, "port %d: a frame that is not uFAB", port);
      ++s.other;
      continue;
    }
    ITEST_CHECK(v.outer.src_ip == kEdge && v.shim.vni == 100 && v.route.n_labels == 1, "port %d: outer/shim/route",
                port);
    if (v.shim.next == wire::kNextData) {
      ++s.data;
      ITEST_CHECK(v.shim.pair_id == pair && v.outer.dst_ip == host && v.route.label[0] == label,
                  "port %d: data frame of pair %08x to %08x on [%u], want pair %08x to %08x on [%u]", port,
                  v.shim.pair_id, v.outer.dst_ip, v.route.label[0], pair, host, label);
      continue;
    }
    wire::Message m;
    if (wire::decode_message(std::span<const uint8_t>(fr).subspan(v.payload_offset, v.payload_len), m) !=
        wire::WireError::ok) {
      ITEST_CHECK(false, "port %d: a control frame that does not decode", port);
      ++s.other;
      continue;
    }
    if (m.type == wire::MsgType::probe) {
      ++s.probes;
      ITEST_CHECK(m.pair_id == pair && v.outer.dst_ip == host && v.route.label[0] == label,
                  "port %d: probe of pair %08x on [%u], want pair %08x on [%u]", port, m.pair_id, v.route.label[0],
                  pair, label);
    } else if (m.type == wire::MsgType::response) {
      ++s.responses;
      ITEST_CHECK(m.pair_id == resp_pair && v.outer.dst_ip == kHostC && v.route.label[0] == resp_label,
                  "port %d: response of pair %08x on [%u], want pair %08x on [%u]", port, m.pair_id, v.route.label[0],
                  resp_pair, resp_label);
    } else if (m.type == wire::MsgType::finish) {  // the pair went idle (idle_finish_ms) and says so on its path
      ++s.finishes;
      ITEST_CHECK(m.pair_id == pair && v.outer.dst_ip == host && v.route.label[0] == label,
                  "port %d: finish of pair %08x on [%u], want pair %08x on [%u]", port, m.pair_id, v.route.label[0],
                  pair, label);
    } else {
      ++s.other;
      ITEST_CHECK(false, "port %d: unexpected message type %d", port, static_cast<int>(m.type));
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_uplinks");
  if (dir.empty()) return 1;

  std::vector<Frame> vm_in;
  for (int i = 0; i < 5; ++i) vm_in.push_back(vm_frame(kA1, kB1, 1000, 200 + i, static_cast<uint8_t>(i)));
  for (int i = 0; i < 3; ++i) vm_in.push_back(vm_frame(kA1, kC1, 1000, 300 + i, static_cast<uint8_t>(i)));
  const Frame inner = vm_frame(kC1, kA1, 2000, 400, 9);
  std::vector<Frame> fab2_in;
  fab2_in.push_back(control(kHostC, route({0}), message(wire::MsgType::probe, kPairCA, 128, {1}, 1), 100));
  fab2_in.push_back(ufab_frame(kHostC, 100, kPairCA, route({0}), wire::kNextData, inner));
  Frame cut = ufab_frame(kHostC, 100, kPairCA, route({0}), wire::kNextData, inner);
  cut.resize(45);
  fab2_in.push_back(cut);
  const Frame inner_b = vm_frame(kB1, kA1, 2001, 410, 8);
  const std::vector<Frame> fab1_in = {ufab_frame(kHostB, 100, kPairBA, route({0}), wire::kNextData, inner_b)};

  // One lcore, then a control lcore and two workers: worker 0 owns a1 and
  // polls the VM port, so port 1 goes to worker 1 and port 2 to worker 0 (the
  // fewest ports so far, ties to the lower worker; pipeline/layout.cpp).
  for (const bool two : {false, true}) {
    const PortsEdgeRun run =
        run_edge_on_port_pcaps(argv[1], dir, two ? "up2" : "up1", kConfig, {vm_in, fab1_in, fab2_in}, two);
    if (two) {
      ITEST_CHECK(run.out.find("ufab-edge rx port=1 mode=dispatch queues=1 rx_worker=1") != std::string::npos &&
                      run.out.find("ufab-edge rx port=2 mode=dispatch queues=1 rx_worker=0") != std::string::npos,
                  "two workers: port 1 polled by worker 1, port 2 by worker 0");
      // b1 -> a1's data frame: taken by worker 1 from port 1, handed to worker 0.
      auto w0 = parse_line(run.out, "ufab-edge worker=0 "), w1 = parse_line(run.out, "ufab-edge worker=1 ");
      ITEST_CHECK(w1["handed_off"] == 1 && w0["taken_over"] == 1, "hand-off: worker 1 handed_off=%llu, worker 0 taken_over=%llu",
                  static_cast<unsigned long long>(w1["handed_off"]), static_cast<unsigned long long>(w0["taken_over"]));
    }
    auto f = run.final;
    // The start-up lines name each port's role ("... link up, <role>, link events ...").
    const auto role = [&](int port) {
      const std::string head = "ufab-edge port " + std::to_string(port) + " ";
      const size_t at = run.out.find(head);
      if (at == std::string::npos) return std::string();
      const std::string line = run.out.substr(at, run.out.find('\n', at) - at);
      const size_t from = line.find(", ") + 2, to = line.find(", ", from);
      return line.substr(from, to == std::string::npos ? std::string::npos : to - from);
    };
    ITEST_CHECK(role(0) == "VM side" && role(1) == "fabric" && role(2) == "fabric", "roles: %s / %s / %s",
                role(0).c_str(), role(1).c_str(), role(2).c_str());
    ITEST_CHECK(f["rx"] == vm_in.size() + fab1_in.size() + fab2_in.size(), "rx=%llu",
                static_cast<unsigned long long>(f["rx"]));
    ITEST_CHECK(f["conserved"] == 1 && f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"],
                "conservation");
    ITEST_CHECK(f["encap"] == 8 && f["queued"] == 0, "encap=%llu queued=%llu", static_cast<unsigned long long>(f["encap"]),
                static_cast<unsigned long long>(f["queued"]));
    ITEST_CHECK(f["reflected"] == 1 && f["decap"] == 2 && f["drop.malformed"] == 1, "reflected/decap/malformed");

    // Port 1: a1 -> b1's 5 data frames and probes, and the response to hC.
    const Seen p1 = check_port(run.port_out[1], 1, kPairAB, kHostB, 5, kPairCA, 7);
    ITEST_CHECK(p1.data == 5 && p1.probes >= 1 && p1.responses == 1,
                "port 1: %zu data frames (want 5), %zu probes (want >= 1), %zu responses (want 1)", p1.data, p1.probes,
                p1.responses);
    // Port 2: a1 -> c1's 3 data frames and probes, nothing else.
    const Seen p2 = check_port(run.port_out[2], 2, kPairAC, kHostC, 6, 0, 0);
    ITEST_CHECK(p2.data == 3 && p2.probes >= 1 && p2.responses == 0,
                "port 2: %zu data frames (want 3), %zu probes (want >= 1), %zu responses (want 0)", p2.data, p2.probes,
                p2.responses);
    ITEST_CHECK(same_frames({inner, inner_b}, run.port_out[0]),
                "VM port got %zu frames, want the inner frames of c1 -> a1 and b1 -> a1 unchanged", run.port_out[0].size());

    // Per-port counters: what came in on port 2 and was bad is counted there.
    auto port1 = parse_line(run.out, "ufab-edge port=1 ");
    auto port2 = parse_line(run.out, "ufab-edge port=2 ");
    ITEST_CHECK(port2["rx"] == 3 && port2["drop.malformed"] == 1 && port1["rx"] == 1 && port1["drop.malformed"] == 0,
                "port 2 rx=%llu malformed=%llu; port 1 rx=%llu malformed=%llu",
                static_cast<unsigned long long>(port2["rx"]), static_cast<unsigned long long>(port2["drop.malformed"]),
                static_cast<unsigned long long>(port1["rx"]), static_cast<unsigned long long>(port1["drop.malformed"]));
    ITEST_CHECK(port1["tx"] == run.port_out[1].size() && port2["tx"] == run.port_out[2].size(),
                "port tx counters match the captures");
  }
  return conclude(dir, "two uplinks: each path's frames on its port, both ports polled, the reply path's port");
}
