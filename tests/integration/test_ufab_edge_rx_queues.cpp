// Per-worker RX queues (pipeline/layout.hpp RxMode): with two workers, a
// port that has an RX queue per worker is polled by each worker on its own
// queue, with no RX lcore in between; a frame on the queue of a worker that
// does not own its VM-pair is handed over through the owner's ring
// (counted: misqueued).
//
// 1. net_pcap, one rx_pcap file per queue (so the test decides which frame
//    lands on which queue) and one tx_pcap file per TX queue (so the
//    captures say which worker sent what). VMs a1 (worker 0) and a2
//    (worker 1) share VM port 0. Queue 0 carries 10 frames of a1 and 4 of
//    a2, queue 1 10 of a2 and 2 of a1; on the fabric port queue 0 has a
//    probe and a data frame for a1, queue 1 a probe and a data frame for a2
//    and one more data frame for a1. Checked by hand-computed counts:
//    worker 0 polls 16 frames of which 4 are misqueued, worker 1 polls 15,
//    3 misqueued; each worker's fabric capture holds exactly its own pair's
//    data frames, unchanged and in per-flow order, and its probe's
//    response; each worker's VM capture holds the frames decapsulated for
//    its VM; both ports print mode=spread queues=2 (net_pcap has no
//    rte_flow), /ufab/workers shows it; conservation.
// 2. net_tap as the VM port (its tun device has a queue per worker and
//    spreads frames by its own flow hash; the QUEUE rules validate but the
//    kernel refuses to create them, so the port falls back to spread and
//    the refusals are counted): 80 frames of 8 flows of a1 and a2 sent on
//    the kernel side; every pair's frames are encapsulated by its owner (its
//    TX queue's capture), unchanged, in per-flow order, and every frame the
//    PMD put on the other worker's queue is counted misqueued and handed
//    over. Skips when /dev/net/tun is missing.
// 3. --rx-queues one: the same pcap port runs in dispatch mode (one RX queue,
//    queue 1's file is never read) and says why.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
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

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002, kA2 = 0xc0a80003;
constexpr uint32_t kHostB = 0x0a000002;
constexpr uint32_t kPairA1 = 1u << 16 | 2, kPairA2 = 3u << 16 | 2;  // a1 -> b1 (worker 0), a2 -> b1 (worker 1)
constexpr uint32_t kInA1 = 2u << 16 | 1, kInA2 = 2u << 16 | 3;      // b1 -> a1, b1 -> a2

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  flows_per_pair: 4
  idle_finish_ms: 60000
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

// A VM frame whose payload carries (flow, sequence) at bytes 60..61.
Frame seq_frame(uint32_t src, uint16_t sport, uint8_t seq) {
  Frame f = vm_frame(src, kB1, sport, 200, static_cast<uint8_t>(sport + seq));
  f[60] = static_cast<uint8_t>(sport & 0xff);
  f[61] = seq;
  return f;
}

struct Capture {
  std::map<uint32_t, std::vector<Frame>> data;  // inner frames by pair id
  std::map<uint32_t, size_t> responses;         // by pair id
  size_t probes = 0;
};

Capture read_fabric(const std::string& path) {
  Capture c;
  for (const Frame& fr : read_pcap(path)) {
    wire::FrameView v;
    if (wire::parse_frame(fr, v) != wire::WireError::ok) continue;
    if (v.shim.next == wire::kNextData) {
      c.data[v.shim.pair_id].emplace_back(fr.begin() + static_cast<ptrdiff_t>(v.payload_offset), fr.end());
      continue;
    }
    wire::Message m;
    if (wire::decode_message(std::span<const uint8_t>(fr).subspan(v.payload_offset, v.payload_len), m) !=
        wire::WireError::ok)
      continue;
    if (m.type == wire::MsgType::response) ++c.responses[m.pair_id];
    if (m.type == wire::MsgType::probe) ++c.probes;
  }
  return c;
}

// Every frame of `got` is one of `sent` unchanged, each sent frame once, and
// the frames of each flow (source port) keep their order.
bool unchanged_in_flow_order(const std::vector<Frame>& sent, const std::vector<Frame>& got) {
  std::multiset<std::string> a, b;  // frames as byte strings, compared as multisets
  for (const Frame& f : sent) a.emplace(f.begin(), f.end());
  for (const Frame& f : got) b.emplace(f.begin(), f.end());
  if (a != b) return false;
  std::map<uint16_t, int> last;
  for (const Frame& f : got) {
    const uint16_t flow = static_cast<uint16_t>(f[34] << 8 | f[35]);
    if (last.count(flow) != 0 && f[61] <= last[flow]) return false;
    last[flow] = f[61];
  }
  return true;
}

// Polls /ufab/stats until rx reaches `rx` with nothing queued (at most 10 s).
std::string wait_rx(const std::string& prefix, long long rx) {
  std::string stats;
  for (int i = 0; i < 200; ++i) {
    stats = telemetry(prefix, "/ufab/stats");
    if (json_number(stats, "rx") >= rx && json_number(stats, "queued") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return stats;
}

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

void pcap_queues(const char* edge, const std::string& dir) {
  const std::string prefix = "ufabrxq" + std::to_string(getpid());
  std::vector<Frame> q0, q1, a1_sent, a2_sent;
  uint8_t seq_a1 = 0, seq_a2 = 0;
  for (int i = 0; i < 10; ++i) {  // queue 0: a1's flows 1000..1002, a2's flow 3000 (4 frames)
    q0.push_back(seq_frame(kA1, static_cast<uint16_t>(1000 + i % 3), seq_a1++));
    a1_sent.push_back(q0.back());
    if (i % 3 == 0) {
      q0.push_back(seq_frame(kA2, 3000, seq_a2++));
      a2_sent.push_back(q0.back());
    }
  }
  for (int i = 0; i < 10; ++i) {  // queue 1: a2's flows 2000..2002, a1's flow 4000 (2 frames)
    q1.push_back(seq_frame(kA2, static_cast<uint16_t>(2000 + i % 3), seq_a2++));
    a2_sent.push_back(q1.back());
    if (i % 5 == 0) {
      q1.push_back(seq_frame(kA1, 4000, seq_a1++));
      a1_sent.push_back(q1.back());
    }
  }
  const Frame to_a1 = vm_frame(kB1, kA1, 5000, 300, 77), to_a2 = vm_frame(kB1, kA2, 5001, 310, 78),
              to_a1b = vm_frame(kB1, kA1, 5002, 320, 79);
  const std::vector<Frame> f0 = {
      control(kHostB, route({0}), message(wire::MsgType::probe, kInA1, 128, {1}, 1), 100),
      ufab_frame(kHostB, 100, kInA1, route({0}), wire::kNextData, to_a1),
  };
  const std::vector<Frame> f1 = {
      control(kHostB, route({0}), message(wire::MsgType::probe, kInA2, 128, {1}, 1), 100),
      ufab_frame(kHostB, 100, kInA2, route({0}), wire::kNextData, to_a2),
      ufab_frame(kHostB, 100, kInA1, route({0}), wire::kNextData, to_a1b),
  };
  ITEST_CHECK(q0.size() == 14 && q1.size() == 12, "frame plan: %zu + %zu", q0.size(), q1.size());
  write_pcap(dir + "/q0.pcap", q0);
  write_pcap(dir + "/q1.pcap", q1);
  write_pcap(dir + "/f0.pcap", f0);
  write_pcap(dir + "/f1.pcap", f1);

  std::vector<std::string> cmd = {edge};
  for (const std::string& s : edge_eal_three_lcores(prefix)) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev",
                         "net_pcap0,rx_pcap=" + dir + "/q0.pcap,rx_pcap=" + dir + "/q1.pcap,tx_pcap=" + dir +
                             "/vo0.pcap,tx_pcap=" + dir + "/vo1.pcap",
                         "--vdev",
                         "net_pcap1,rx_pcap=" + dir + "/f0.pcap,rx_pcap=" + dir + "/f1.pcap,tx_pcap=" + dir +
                             "/fo0.pcap,tx_pcap=" + dir + "/fo1.pcap",
                         "--", "--config", dir + "/edge.yaml", "--workers", "2", "--stats-interval", "0",
                         "--stop-timeout-ms", "200"});
  const int pid = spawn(cmd, dir + "/out", dir + "/err");
  ITEST_CHECK(wait_for_text(dir + "/out", "VM-pairs", 20), "the edge did not start: %s", read_file(dir + "/err").c_str());
  const size_t offered = q0.size() + q1.size() + f0.size() + f1.size();
  const std::string stats = wait_rx(prefix, static_cast<long long>(offered));
  const std::string workers = telemetry(prefix, "/ufab/workers");
  kill(pid, SIGTERM);
  const RunResult r = wait_with_deadline(pid, 20);
  remove_dpdk_runtime(prefix);
  const std::string out = read_file(dir + "/out");
  std::printf("%s/ufab/workers: %s\n", out.c_str(), workers.c_str());
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "ufab-edge: exit %d: %s", r.exit_code, read_file(dir + "/err").c_str());

  // net_pcap has no RSS: the VM port's redirection table is not programmed
  // (pipeline/rss_reta.hpp), and the fabric port has none to program.
  ITEST_CHECK(out.find("ufab-edge rx port=0 mode=spread queues=2 reta=\"not programmed: the port has no RSS") !=
                      std::string::npos &&
                  out.find("ufab-edge rx port=1 mode=spread queues=2\n") != std::string::npos,
              "both ports: an RX queue per worker, the VM port's reta not programmed (no RSS)");
  ITEST_CHECK(workers.find("\"rx_port0\":\"spread queues=2\"") != std::string::npos &&
                  workers.find("\"rx_port1\":\"spread queues=2\"") != std::string::npos,
              "/ufab/workers shows the RX mode of each port");
  ITEST_CHECK(workers.find("\"rx_reta0\":\"not programmed: the port has no RSS") != std::string::npos &&
                  workers.find("\"rx_reta1\"") == std::string::npos,
              "/ufab/workers shows the VM port's redirection table (not programmed, why), none for the fabric port");
  auto f = parse_line(out, "ufab-edge final ");
  ITEST_CHECK(f["rx"] == offered && f["conserved"] == 1 && f["dropped"] == 0 && f["encap"] == 26 &&
                  f["decap"] == 3 && f["reflected"] == 2,
              "final: rx=%llu dropped=%llu encap=%llu decap=%llu", U(f["rx"]), U(f["dropped"]), U(f["encap"]),
              U(f["decap"]));
  auto w0 = parse_line(out, "ufab-edge worker=0 "), w1 = parse_line(out, "ufab-edge worker=1 ");
  // Worker 0: 14 + 2 polled, 4 (a2's) misqueued; worker 1: 12 + 3 polled,
  // 2 (a1's VM frames) + 1 (a1's fabric frame) misqueued. Each has its own
  // TX queue, so nothing else goes through a ring.
  ITEST_CHECK(w0["rxq_polled"] == 16 && w0["misqueued"] == 4 && w0["handed_off"] == 4 && w0["taken_over"] == 3,
              "worker 0: polled=%llu misqueued=%llu handed_off=%llu taken_over=%llu", U(w0["rxq_polled"]),
              U(w0["misqueued"]), U(w0["handed_off"]), U(w0["taken_over"]));
  ITEST_CHECK(w1["rxq_polled"] == 15 && w1["misqueued"] == 3 && w1["handed_off"] == 3 && w1["taken_over"] == 4,
              "worker 1: polled=%llu misqueued=%llu handed_off=%llu taken_over=%llu", U(w1["rxq_polled"]),
              U(w1["misqueued"]), U(w1["handed_off"]), U(w1["taken_over"]));

  // Which worker sent what: its own TX queue, its own capture file.
  const Capture c0 = read_fabric(dir + "/fo0.pcap"), c1 = read_fabric(dir + "/fo1.pcap");
  ITEST_CHECK(c0.data.size() == 1 && c0.data.count(kPairA1) == 1 && c0.data.at(kPairA1).size() == 12 &&
                  unchanged_in_flow_order(a1_sent, c0.data.at(kPairA1)),
              "worker 0's fabric queue: exactly a1's 12 frames, unchanged, in flow order (%zu pairs)", c0.data.size());
  ITEST_CHECK(c1.data.size() == 1 && c1.data.count(kPairA2) == 1 && c1.data.at(kPairA2).size() == 14 &&
                  unchanged_in_flow_order(a2_sent, c1.data.at(kPairA2)),
              "worker 1's fabric queue: exactly a2's 14 frames, unchanged, in flow order (%zu pairs)", c1.data.size());
  ITEST_CHECK(c0.responses.size() == 1 && c0.responses.count(kInA1) == 1 && c1.responses.size() == 1 &&
                  c1.responses.count(kInA2) == 1,
              "each probe answered by the owner of its VM");
  const std::vector<Frame> vo0 = read_pcap(dir + "/vo0.pcap"), vo1 = read_pcap(dir + "/vo1.pcap");
  ITEST_CHECK(same_frames({to_a1, to_a1b}, vo0) && same_frames({to_a2}, vo1),
              "VM queues: worker 0 delivered %zu frames (want a1's 2), worker 1 %zu (want a2's 1)", vo0.size(),
              vo1.size());

  // 3. --rx-queues one: one RX queue (dispatch), queue 1's files unread.
  const std::string p1 = prefix + "o";
  std::vector<std::string> one = {edge};
  for (const std::string& s : edge_eal_three_lcores(p1)) one.push_back(s);
  one.insert(one.end(), {"--vdev",
                         "net_pcap0,rx_pcap=" + dir + "/q0.pcap,rx_pcap=" + dir + "/q1.pcap,tx_pcap=" + dir +
                             "/vd0.pcap,tx_pcap=" + dir + "/vd1.pcap",
                         "--vdev", "net_pcap1,rx_pcap=" + dir + "/f0.pcap,tx_pcap=" + dir + "/fd0.pcap", "--",
                         "--config", dir + "/edge.yaml", "--workers", "2", "--stats-interval", "0",
                         "--exit-after-idle-ms", "500", "--rx-queues", "one"});
  const RunResult ro = run_with_deadline(one, dir + "/one.out", dir + "/one.err", 30);
  remove_dpdk_runtime(p1);
  const std::string oo = read_file(dir + "/one.out");
  std::printf("--rx-queues one:\n%s", oo.c_str());
  ITEST_CHECK(!ro.timed_out && ro.exit_code == 0, "--rx-queues one: exit %d: %s", ro.exit_code,
              read_file(dir + "/one.err").c_str());
  ITEST_CHECK(oo.find("ufab-edge rx port=0 mode=dispatch queues=1 rx_worker=0 why=\"--rx-queues one\"") !=
                  std::string::npos,
              "--rx-queues one: port 0 in dispatch mode, with the reason");
  auto fo = parse_line(oo, "ufab-edge final ");
  auto o0 = parse_line(oo, "ufab-edge worker=0 ");
  // Only queue 0's 14 VM frames and f0's 2: worker 0, the VM port's RX
  // lcore, dispatches a2's 4 frames (not misqueued: there is no own queue).
  ITEST_CHECK(fo["rx"] == 16 && fo["conserved"] == 1 && o0["rxq_polled"] == 0 && o0["misqueued"] == 0 &&
                  o0["handed_off"] == 4,
              "--rx-queues one: rx=%llu polled=%llu misqueued=%llu handed_off=%llu", U(fo["rx"]), U(o0["rxq_polled"]),
              U(o0["misqueued"]), U(o0["handed_off"]));
}

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

void tap_queues(const char* edge, const std::string& dir) {
  const std::string tag = std::to_string(getpid() % 100000), ifname = "uftQ" + tag;
  const std::string prefix = "ufabrxqt" + tag;
  write_pcap(dir + "/empty.pcap", {});
  std::vector<std::string> cmd = {edge};
  for (const std::string& s : edge_eal_three_lcores(prefix)) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev", "net_tap0,iface=" + ifname, "--vdev",
                         "net_pcap0,rx_pcap=" + dir + "/empty.pcap,rx_pcap=" + dir + "/empty.pcap,tx_pcap=" + dir +
                             "/t0.pcap,tx_pcap=" + dir + "/t1.pcap",
                         "--", "--config", dir + "/edge.yaml", "--workers", "2", "--stats-interval", "0",
                         "--stop-timeout-ms", "200"});
  const int pid = spawn(cmd, dir + "/tap.out", dir + "/tap.err");
  ITEST_CHECK(wait_for_text(dir + "/tap.out", "VM-pairs", 20), "the edge did not start: %s",
              read_file(dir + "/tap.err").c_str());
  const int fd = packet_socket(ifname);
  ITEST_CHECK(fd >= 0, "AF_PACKET socket on %s", ifname.c_str());
  // 8 flows (4 per VM), 10 frames each, interleaved.
  std::vector<Frame> a1_sent, a2_sent;
  for (uint8_t seq = 0; seq < 10; ++seq)
    for (uint16_t flow = 0; flow < 4; ++flow) {
      a1_sent.push_back(seq_frame(kA1, static_cast<uint16_t>(6000 + flow), seq));
      a2_sent.push_back(seq_frame(kA2, static_cast<uint16_t>(7000 + flow), seq));
      if (fd >= 0) {
        (void)send(fd, a1_sent.back().data(), a1_sent.back().size(), 0);
        (void)send(fd, a2_sent.back().data(), a2_sent.back().size(), 0);
      }
    }
  if (fd >= 0) close(fd);
  // The kernel may add frames of its own (IPv6 neighbour discovery): wait
  // for our 80 (or more), then stop.
  const std::string stats = wait_rx(prefix, 80);
  const std::string workers = telemetry(prefix, "/ufab/workers");
  kill(pid, SIGTERM);
  const RunResult r = wait_with_deadline(pid, 20);
  remove_dpdk_runtime(prefix);
  const std::string out = read_file(dir + "/tap.out");
  std::printf("net_tap:\n%s/ufab/workers: %s\n", out.c_str(), workers.c_str());
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "ufab-edge on net_tap: exit %d: %s", r.exit_code,
              read_file(dir + "/tap.err").c_str());
  // The QUEUE rules validate, creating them fails here: spread, refusals counted.
  auto off = parse_line(out, "ufab-edge offload port=0 mode=software ");
  // validated=2: the QUEUE form of both pairs, one to queue 0 and one to queue 1 (the owners).
  // net_tap hashes source and destination, not the source alone: its
  // redirection table is left as it is, and the output says why.
  ITEST_CHECK(out.find("ufab-edge rx port=0 mode=spread queues=2 reta=\"not programmed: the PMD does not hash by "
                       "source address alone") != std::string::npos &&
                  workers.find("\"rx_reta0\":\"not programmed: the PMD does not hash by source address alone") !=
                      std::string::npos &&
                  off["validated"] == 2 &&
                  off["refused"] >= 1 && off["installed"] == 0,
              "net_tap: rules refused (validated=%llu refused=%llu), the port spread over two queues",
              U(off["validated"]), U(off["refused"]));
  auto f = parse_line(out, "ufab-edge final ");
  auto p0 = parse_line(out, "ufab-edge port=0 ");
  auto w0 = parse_line(out, "ufab-edge worker=0 "), w1 = parse_line(out, "ufab-edge worker=1 ");
  // Every frame of the tap came through a worker's own queue; what another
  // worker owned was handed over (the only ring traffic: each has a TX queue).
  ITEST_CHECK(f["conserved"] == 1 && f["encap"] == 80 && p0["rx"] >= 80 &&
                  w0["rxq_polled"] + w1["rxq_polled"] == p0["rx"] &&
                  w0["handed_off"] == w0["misqueued"] && w1["handed_off"] == w1["misqueued"] &&
                  w0["taken_over"] == w1["misqueued"] && w1["taken_over"] == w0["misqueued"],
              "net_tap: rx=%llu polled %llu + %llu, misqueued %llu + %llu, taken over %llu + %llu", U(p0["rx"]),
              U(w0["rxq_polled"]), U(w1["rxq_polled"]), U(w0["misqueued"]), U(w1["misqueued"]), U(w0["taken_over"]),
              U(w1["taken_over"]));
  std::printf("net_tap spread: worker 0 polled %llu (%llu misqueued), worker 1 polled %llu (%llu misqueued)\n",
              U(w0["rxq_polled"]), U(w0["misqueued"]), U(w1["rxq_polled"]), U(w1["misqueued"]));
  const Capture c0 = read_fabric(dir + "/t0.pcap"), c1 = read_fabric(dir + "/t1.pcap");
  ITEST_CHECK(c0.data.size() == 1 && c0.data.count(kPairA1) == 1 && unchanged_in_flow_order(a1_sent, c0.data.at(kPairA1)),
              "net_tap: worker 0 sent exactly a1's 40 frames, unchanged, in flow order");
  ITEST_CHECK(c1.data.size() == 1 && c1.data.count(kPairA2) == 1 && unchanged_in_flow_order(a2_sent, c1.data.at(kPairA2)),
              "net_tap: worker 1 sent exactly a2's 40 frames, unchanged, in flow order");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  char tmpl[] = "/tmp/ufab_edge_rxq.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  write_text(dir + "/edge.yaml", kConfig);
  pcap_queues(argv[1], dir);
  const bool tun = access("/dev/net/tun", R_OK | W_OK) == 0;
  if (tun)
    tap_queues(argv[1], dir);
  else
    std::printf("net_tap part skipped: /dev/net/tun is missing\n");
  if (itest::g_failures != 0) {
    std::printf("%d checks failed; files kept in %s\n", itest::g_failures, dir.c_str());
    return 1;
  }
  std::filesystem::remove_all(dir);
  std::printf("PASS: per-worker RX queues on net_pcap%s, dispatch with --rx-queues one\n", tun ? " and net_tap" : "");
  return 0;
}
