// ufab-edge's response handling against Eqn 3 (§3.4) in a closed loop with
// the test as the fabric: the edge's VM port and fabric port are net_tap
// interfaces; the test sends the VM's frames into the VM tap, reads what the
// edge sends on the fabric tap (AF_PACKET), and answers each probe with a
// response carrying hop records it stamps itself, built with the wire
// library (probe/wire.hpp, probe/reflect.hpp) as μFAB-C and the receiving
// edge would.
//
// Hand computation (eta = 1, B_u = 1 Mb/s = 125000 B/s, T = 1 s):
//  - the pair's token phi = 0.25 (guarantee 0.25 Mb/s), on the wire 16/64;
//  - before any response: w' = phi * B_u * T = 31250 B (Scenario 1), so its
//    first probe registers w^l = 31250 B = 489 units of 64 B (rounded up),
//    and the first round puts floor(31250 / 1054) = 29 frames = 30566 B on
//    the wire (frames: 1000 B inner + 54 B encapsulation);
//  - every response says of the one link: C'_l = 10 Mb/s (code 1, C_l T =
//    1.25e6 B), Phi_l = 0.5 tokens, W_l = 1179648 B (18432 units),
//    tx_l = 0, q_l = 73728000 B (1152000 units):
//        w = phi/Phi_l * W_l * C_l T / (tx_l T + q_l)
//          = 0.25/0.5 * 1179648 * 1.25e6 / 73728000 = 10000 B   (< C_l T)
//    and since w <= w' the pair goes straight to the steady stage: its
//    window becomes 10000 B, and the next probe carries w^l = 10000 B = 157
//    units (Eqn 3's per-link value);
//  - a response acknowledges exactly the bytes_sent of the probe it answers
//    (the data before the probe left the network). The queue q_l / C_l =
//    58.98 s it reports raises the pair's RTT estimate to about 60 s, so no
//    bytes are acknowledged by age during the test, even on a stalled host;
//  - after each response the edge sends while inflight + 1054 <= 10000:
//    floor((10000 - (sent - acked)) / 1054) frames (0 if negative).
// Two rounds of responses, then SIGTERM; the final report must show window
// 10000, acked = the last answered probe's bytes_sent, 2 responses, and the
// capture the frame counts above.
//
// Each round, the test waits for the frames and probes the hand computation
// expects (up to 20 s, so a stalled host delays the test instead of cutting
// a round short), then for 200 ms without a frame, so that one frame too
// many is seen; then it answers. That is how it knows the edge is
// window-blocked, not a timing assertion on the edge. argv[1]: ufab-edge. Skips (77) without /dev/net/tun.
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "probe/reflect.hpp"
#include "probe/units.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002, kHostB = 0x0a000002;
constexpr uint32_t kPair = 1u << 16 | 11;
constexpr uint64_t kFrame = 1054, kFrames = 40;
constexpr uint64_t kWFirst = 31250, kWEqn3 = 10000;
constexpr uint64_t kWLink = 1179648, kQLink = 73728000;  // W_l and q_l of every response

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  unit_bw_gbps: 0.001
  eta: 1
  queue_capacity: 64
  flows_per_pair: 1
tenants:
  - {vni: 100, guarantee_gbps: 0.00025}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 1000000, paths: [[1]]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.0.2, host: hB}
)";

int packet_socket(const std::string& ifname) {
  const int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (fd < 0) return -1;
  sockaddr_ll a{};
  a.sll_family = AF_PACKET;
  a.sll_protocol = htons(ETH_P_ALL);
  a.sll_ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
  if (a.sll_ifindex == 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void send_frame(int fd, const Frame& f) { (void)send(fd, f.data(), f.size(), 0); }

// One frame the edge sent (incoming on the kernel side of the tap) within
// timeout_ms; false on timeout.
bool read_frame(int fd, int timeout_ms, Frame& f) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return false;
    f.assign(2048, 0);
    sockaddr_ll from{};
    socklen_t len = sizeof(from);
    const ssize_t n = recvfrom(fd, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n <= 0 || from.sll_pkttype == PACKET_OUTGOING) continue;  // what we sent ourselves
    f.resize(static_cast<size_t>(n));
    return true;
  }
}

struct Round {
  uint64_t data_bytes = 0, data_frames = 0;
  std::vector<wire::Message> probes;
};

Round classify(const std::vector<Frame>& frames) {
  Round r;
  for (const Frame& f : frames) {
    wire::FrameView v;
    if (wire::parse_frame(f, v) != wire::WireError::ok || v.shim.pair_id != kPair) continue;  // kernel noise
    if (v.shim.next == wire::kNextData) {
      r.data_bytes += f.size();
      ++r.data_frames;
      continue;
    }
    wire::Message m;
    if (wire::decode_message(std::span<const uint8_t>(f).subspan(v.payload_offset, v.payload_len), m) ==
            wire::WireError::ok &&
        m.type == wire::MsgType::probe)
      r.probes.push_back(m);
  }
  return r;
}

// What a round must contain before the test stops waiting for it: the
// frames the hand computation admits and the probes it expects.
struct Want {
  uint64_t data_frames = 0;
  size_t probes = 0;
};

// One round: the frames the edge sends until it has sent what `want` names
// (or kRoundDeadlineMs passed: the checks then fail on the counts) and then
// nothing for kQuietMs, so that a frame too many is seen. A host stalled
// while the edge still owes frames delays the round instead of cutting it.
constexpr int kQuietMs = 200, kRoundDeadlineMs = 20000;
Round read_round(int fd, const Want& want) {
  std::vector<Frame> frames;
  Round r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRoundDeadlineMs);
  for (;;) {
    const bool complete = r.data_frames >= want.data_frames && r.probes.size() >= want.probes;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!complete && left.count() <= 0) return r;
    Frame f;
    if (!read_frame(fd, complete ? kQuietMs : static_cast<int>(left.count()), f)) {
      if (complete) return r;
      continue;
    }
    frames.push_back(std::move(f));
    r = classify(frames);
  }
}

// The response μFAB-C and edge B would send back for probe p.
Frame response_to(wire::Message p) {
  p.hop[0] = wire::HopRecord{wire::window_to_wire(kWLink), wire::tokens_to_wire(0.5), 0,
                             wire::queue_to_wire(kQLink), 1, wire::kHopStamped, 0};
  p.hop_index = 1;
  return control(kHostB, route({0}), wire::reflect(p, 0xffffffffu), 100);
}

uint64_t frames_admitted(uint64_t inflight, uint64_t remaining) {
  const uint64_t n = inflight >= kWEqn3 ? 0 : (kWEqn3 - inflight) / kFrame;
  return n < remaining ? n : remaining;
}

void disable_ipv6(const std::string& ifname) {
  std::ofstream("/proc/sys/net/ipv6/conf/" + ifname + "/disable_ipv6") << "1\n";
}

// Runs ufab-edge on two taps with `yaml`, sends the 40 VM frames, then
// reads `n_rounds` rounds (read_round, with want(rounds so far) as the
// round's expected content), answering the last probe of each of the first
// n_rounds - 1. out: the edge's stdout.
template <class WantFn>
std::vector<Round> closed_loop(const std::string& edge, const std::string& dir, const std::string& name,
                               const std::string& yaml, int n_rounds, WantFn want, std::string& out) {
  const std::string tag = std::to_string(getpid() % 100000) + name, prefix = "ufabresp" + tag;
  const std::string vm_if = "ufV" + tag, fab_if = "ufF" + tag;
  write_text(dir + "/" + name + ".yaml", yaml);
  std::vector<std::string> cmd = {edge};
  for (const std::string& a : edge_eal(prefix, "0")) cmd.push_back(a);
  cmd.insert(cmd.end(), {"--vdev", "net_tap0,iface=" + vm_if, "--vdev", "net_tap1,iface=" + fab_if, "--", "--config",
                         dir + "/" + name + ".yaml", "--stats-interval", "0"});
  const std::string o = dir + "/" + name + ".out", e = dir + "/" + name + ".err";
  const int pid = spawn(cmd, o, e);
  bool started = false;
  for (int i = 0; i < 750 && !started; ++i) {
    started = read_file(o).find("VM-pairs") != std::string::npos;
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ITEST_CHECK(started, "%s: ufab-edge did not start: %s", name.c_str(), read_file(e).c_str());
  disable_ipv6(vm_if);
  disable_ipv6(fab_if);
  const int vm = packet_socket(vm_if), fab = packet_socket(fab_if);
  ITEST_CHECK(vm >= 0 && fab >= 0, "AF_PACKET sockets on %s / %s", vm_if.c_str(), fab_if.c_str());
  std::vector<Round> rounds;
  if (started && vm >= 0 && fab >= 0) {
    for (Frame f; read_frame(fab, 50, f);) {
    }  // whatever the kernel sent before
    for (uint64_t i = 0; i < kFrames; ++i)
      send_frame(vm, vm_frame(kA1, kB1, 1000, 1000 - 42, static_cast<uint8_t>(i)));
    for (int r = 0; r < n_rounds; ++r) {
      rounds.push_back(read_round(fab, want(rounds)));
      if (r + 1 < n_rounds && !rounds.back().probes.empty()) send_frame(fab, response_to(rounds.back().probes.back()));
    }
  }
  kill(pid, SIGTERM);
  const RunResult rr = wait_with_deadline(pid, 10);
  if (vm >= 0) close(vm);
  if (fab >= 0) close(fab);
  remove_dpdk_runtime(prefix);
  out = read_file(o);
  std::printf("--- %s\n%s", name.c_str(), out.c_str());
  ITEST_CHECK(!rr.timed_out && rr.exit_code == 0, "%s: ufab-edge failed: %s", name.c_str(), read_file(e).c_str());
  for (size_t i = 0; i < rounds.size(); ++i) {
    std::printf("%s round %zu: %llu data frames (%llu B), probes at bytes_sent", name.c_str(), i,
                static_cast<unsigned long long>(rounds[i].data_frames),
                static_cast<unsigned long long>(rounds[i].data_bytes));
    for (const wire::Message& m : rounds[i].probes) std::printf(" %llu", static_cast<unsigned long long>(m.bytes_sent));
    std::printf("\n");
  }
  return rounds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  if (!std::filesystem::exists("/dev/net/tun")) {
    std::printf("SKIP: /dev/net/tun is missing: the test needs net_tap ports to act as the fabric\n");
    return 77;
  }
  // Hand computation checks.
  ITEST_CHECK(wire::window_to_wire(kWFirst) == 489 && wire::window_to_wire(kWEqn3) == 157 &&
                  wire::window_to_wire(kWLink) * 64 == kWLink && wire::queue_to_wire(kQLink) * 64 == kQLink &&
                  wire::capacity_code_bps(1) == 10'000'000 &&
                  wire::tokens_to_wire(0.25) == 16 && kWFirst / kFrame == 29,
              "units");
  char tmpl[] = "/tmp/ufab_edge_resp.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  std::string out;
  // Each round's expected content, from the rounds before it (the checks
  // below recompute and assert it).
  auto eqn3_want = [](const std::vector<Round>& done) -> Want {
    if (done.empty()) return {kWFirst / kFrame, 1};
    uint64_t sent = 0, frames = 0;
    for (const Round& r : done) {
      sent += r.data_bytes;
      frames += r.data_frames;
    }
    const uint64_t acked = done.back().probes.empty() ? 0 : done.back().probes.back().bytes_sent;
    return {frames_admitted(sent - acked, kFrames - frames), done.size() == 1 ? size_t{1} : size_t{0}};
  };
  const std::vector<Round> rounds = closed_loop(argv[1], dir, "eqn3", kConfig, 3, eqn3_want, out);
  if (rounds.size() == 3) {
    const Round &r0 = rounds[0], &r1 = rounds[1], &r2 = rounds[2];
    // Round 0: w' on the wire, the registering probe.
    ITEST_CHECK(r0.data_frames == 29 && r0.data_bytes == 30566, "round 0: %llu frames, want 29",
                static_cast<unsigned long long>(r0.data_frames));
    ITEST_CHECK(r0.probes.size() == 1 && r0.probes[0].hop[0].w == 489 && r0.probes[0].phi == 16 &&
                    (r0.probes[0].flags & wire::kMsgNewPair) != 0,
                "round 0: one registering probe with w^l = 489 units, phi = 16/64");
    // Round 1: after the first response, the Eqn 3 window.
    const uint64_t b0 = r0.probes.empty() ? 0 : r0.probes[0].bytes_sent;
    const uint64_t s0 = r0.data_bytes;
    const uint64_t n1 = frames_admitted(s0 - b0, kFrames - r0.data_frames);
    ITEST_CHECK(r1.data_frames == n1, "round 1: %llu frames, want %llu (acked %llu of %llu, window 10000)",
                static_cast<unsigned long long>(r1.data_frames), static_cast<unsigned long long>(n1),
                static_cast<unsigned long long>(b0), static_cast<unsigned long long>(s0));
    ITEST_CHECK(r1.probes.size() == 1 && r1.probes[0].hop[0].w == 157,
                "round 1: one probe carrying Eqn 3's w^l = 157 units (%zu probes, w %u)", r1.probes.size(),
                r1.probes.empty() ? 0u : r1.probes[0].hop[0].w);
    // Round 2: after the second response.
    const uint64_t b1 = r1.probes.empty() ? 0 : r1.probes[0].bytes_sent;
    const uint64_t s1 = s0 + r1.data_bytes;
    const uint64_t n2 = frames_admitted(s1 - b1, kFrames - r0.data_frames - r1.data_frames);
    ITEST_CHECK(b1 >= s0 && b1 <= s1, "probe 1 counts the bytes sent before it: %llu",
                static_cast<unsigned long long>(b1));
    ITEST_CHECK(r2.data_frames == n2, "round 2: %llu frames, want %llu", static_cast<unsigned long long>(r2.data_frames),
                static_cast<unsigned long long>(n2));
    auto p = parse_line(out, "ufab-edge pair=0x0001000b ");
    const uint64_t sent = s1 + r2.data_bytes;
    // SIGTERM finishes the pair (graceful stop, pipeline/stop.cpp): the
    // report shows it idle with window 0 and one finish sent; Eqn 3's window
    // showed in round 1's frame count above.
    ITEST_CHECK(p["window"] == 0 && p["state"] == 2 && p["finishes"] == 1 && p["acked"] == b1 && p["sent"] == sent &&
                    p["responses"] == 2 && p["token_x1000"] == 250,
                "final pair: window %llu acked %llu (want %llu) sent %llu (want %llu) responses %llu",
                static_cast<unsigned long long>(p["window"]), static_cast<unsigned long long>(p["acked"]),
                static_cast<unsigned long long>(b1), static_cast<unsigned long long>(p["sent"]),
                static_cast<unsigned long long>(sent), static_cast<unsigned long long>(p["responses"]));
    auto f = parse_line(out, "ufab-edge final ");
    ITEST_CHECK(f["conserved"] == 1 && f["absorbed"] == 2 && f["drop.queue_full"] == 0, "final counters");
  }

  // Probe generation (§4.1 scalable probing): L_w = 2108 B (two frames),
  // burst 1 (the pacer is asked after every frame), the same responses.
  //  round 0: the registering probe at join, before any data (bytes_sent 0),
  //           then w' = 29 frames; no other probe (one outstanding);
  //  round 1: response 0 acks 0 B: inflight 30566 >= 10000, the pair is
  //           window-blocked and probes at once (bytes_sent 30566), no data;
  //  round 2: response 1 acks 30566: 9 frames (9486 B) under the window, the
  //           probe after the first L_w bytes: bytes_sent 30566 + 2108 = 32674;
  //  round 3: response 2 acks 32674: inflight 7378, 2 frames fit and are the
  //           last ones, the probe after them: 40052 + 2108 = 42160.
  // One probe per L_w bytes since the last response, none while one is out.
  std::string cfg = kConfig;
  cfg.replace(cfg.find("  flows_per_pair: 1\n"), 19, "  flows_per_pair: 1\n  probe_every_bytes: 2108\n  burst: 1\n");
  std::string out2;
  const uint64_t want_frames[4] = {29, 0, 9, 2}, want_probe[4] = {0, 30566, 32674, 42160};
  auto rate_want = [&want_frames](const std::vector<Round>& done) -> Want {
    return {want_frames[done.size() < 4 ? done.size() : 3], 1};
  };
  const std::vector<Round> pr = closed_loop(argv[1], dir, "rate", cfg, 4, rate_want, out2);
  ITEST_CHECK(pr.size() == 4, "rate: %zu rounds", pr.size());
  for (size_t i = 0; i < pr.size() && i < 4; ++i)
    ITEST_CHECK(pr[i].data_frames == want_frames[i] && pr[i].probes.size() == 1 &&
                    pr[i].probes[0].bytes_sent == want_probe[i],
                "rate round %zu: %llu frames (want %llu), %zu probes, first at %llu (want %llu)", i,
                static_cast<unsigned long long>(pr[i].data_frames), static_cast<unsigned long long>(want_frames[i]),
                pr[i].probes.size(), static_cast<unsigned long long>(pr[i].probes.empty() ? 0 : pr[i].probes[0].bytes_sent),
                static_cast<unsigned long long>(want_probe[i]));

  if (itest::g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: responses moved the window to Eqn 3's 10000 B and the acks to the probes' bytes_sent\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", itest::g_failures, dir.c_str());
  return 1;
}
