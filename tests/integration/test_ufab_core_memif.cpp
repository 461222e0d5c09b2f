// Two ufab-core processes joined by net_memif: a two-switch fabric on one
// host (issue 3). Switch A reads frames from a pcap on its port 0 and sends
// them by source route out port 1, a memif client; switch B is the memif
// server on its port 0 and sends them out its port 1, a pcap. The output is
// compared with two SwitchModels in series, in process. A runs on
// --fake-clock, so its hop record is exact; B runs on the TSC, so in B's
// record tx_l and q_l depend on real time: they are masked for the byte
// comparison and checked against bounds instead (tx_l at most twice the
// port's 10 Gb/s, q_l at most the bytes sent).
//
// argv[1]: path of ufab-core, or empty when DPDK was not found (exit 77).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "p4/model/switch_model.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;
namespace fs = std::filesystem;

constexpr Nanos kTick = 1000;

std::vector<Frame> make_inputs() {
  constexpr uint32_t a = 0x0a000001, b = 0x0a000002;
  std::vector<Frame> in;
  for (uint32_t i = 0; i < 6; ++i) {
    in.push_back(control(i % 2 ? a : b, route({1, 1}), message(wire::MsgType::probe, i, 64 * (i + 1), {100 + i, 7})));
    for (int k = 0; k < 5; ++k) in.push_back(data(a, i, route({1, 1}), 400));
  }
  in.push_back(control(a, route({1, 1}), message(wire::MsgType::finish, 1, 128, {1, 1})));
  in.push_back(data(a, 50, route({1, 9}), 64));  // bad_port at B
  return in;
}

// Copies of the frames with B's hop record (index 1) tx and q zeroed.
struct Masked {
  Frame f;
  uint32_t tx = 0, q = 0;
};
Masked mask_hop1(const Frame& f) {
  Masked m{f};
  wire::FrameView v;
  wire::Message msg;
  if (wire::parse_frame(f, v) != wire::WireError::ok || v.shim.next != wire::kNextControl) return m;
  const std::span<uint8_t> payload(m.f.data() + v.payload_offset, v.payload_len);
  if (wire::decode_message(payload, msg) != wire::WireError::ok || msg.n_hop < 2) return m;
  m.tx = msg.hop[1].tx;
  m.q = msg.hop[1].q;
  msg.hop[1].tx = msg.hop[1].q = 0;
  wire::encode_message(msg, payload);
  return m;
}

std::vector<std::string> eal(const std::string& prefix, const char* lcore) {
  return {"--no-huge", "--no-pci", "-m", "256", "-l", lcore, "--file-prefix", prefix, "--log-level", "error"};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-core was not built (libdpdk not found)\n");
    return 77;
  }
  const std::string core = argv[1];
  char tmpl[] = "/tmp/ufab_core_memif.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const std::string pa = "ufabmemifA" + std::to_string(getpid()), pb = "ufabmemifB" + std::to_string(getpid());
  const std::string sock = dir + "/memif.sock";
  const std::vector<Frame> inputs = make_inputs();
  write_pcap(dir + "/in.pcap", inputs);
  write_pcap(dir + "/empty.pcap", {});

  std::vector<std::string> b = {core};
  for (const std::string& s : eal(pb, "1")) b.push_back(s);
  b.insert(b.end(), {"--vdev", "net_memif0,role=server,socket=" + sock, "--vdev",
                     "net_pcap0,rx_pcap=" + dir + "/empty.pcap,tx_pcap=" + dir + "/outB.pcap", "--",
                     "--exit-after-idle-ms", "5000", "--stats-interval", "0"});
  std::vector<std::string> a = {core};
  for (const std::string& s : eal(pa, "0")) a.push_back(s);
  a.insert(a.end(), {"--vdev", "net_pcap0,rx_pcap=" + dir + "/in.pcap,tx_pcap=" + dir + "/outA.pcap", "--vdev",
                     "net_memif0,role=client,socket=" + sock, "--", "--fake-clock", std::to_string(kTick),
                     "--burst", "1", "--exit-after-idle-ms", "300", "--stats-interval", "0",
                     // A replays its pcap at once: its memif link must be up
                     // first, however slow the host (the default waits 2 s).
                     "--link-wait-ms", "8000"});

  const int pid_b = spawn(b, dir + "/b.out", dir + "/b.err");
  // memif's socket is abstract (no file to wait for): give the server a
  // moment, and retry the client if the server was not listening yet. B
  // exits 5 s after its last frame (or its start, if A is that late).
  RunResult ra;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ra = run_with_deadline(a, dir + "/a.out", dir + "/a.err", 10);
    if (ra.exit_code == 0 || read_file(dir + "/a.err").find("memif_connect_client") == std::string::npos) break;
  }
  const RunResult rb = wait_with_deadline(pid_b, 25);
  for (const std::string& p : {pa, pb})
    for (const char* base : {"/var/run/dpdk/", "/tmp/dpdk/"}) fs::remove_all(base + p);
  const std::string out_a = read_file(dir + "/a.out"), out_b = read_file(dir + "/b.out");
  std::printf("switch A:\n%sswitch B:\n%s", out_a.c_str(), out_b.c_str());
  ITEST_CHECK(!ra.timed_out && ra.exit_code == 0, "switch A failed: %s", read_file(dir + "/a.err").c_str());
  ITEST_CHECK(!rb.timed_out && rb.exit_code == 0, "switch B failed: %s", read_file(dir + "/b.err").c_str());

  swmodel::SwitchConfig cfg;
  cfg.n_ports = 2;
  cfg.cap_codes = {5, 5};  // 10G, the default --port-caps
  swmodel::SwitchModel sa(cfg), sb(cfg);
  std::vector<Frame> want;
  uint64_t bytes = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Nanos now = (i + 1) * kTick;
    std::vector<uint8_t> f = inputs[i];
    bytes += f.size();
    swmodel::Decision d = sa.ingress(f, 0, now);
    if (!d.forward || !sa.egress(f, d.port, 0, now, 0).forward) continue;
    d = sb.ingress(f, 0, now);  // B's time only reaches tx_l and q_l, which are masked
    if (d.forward && sb.egress(f, d.port, 0, now, 0).forward && d.port == 1) want.push_back(f);
  }
  const std::vector<Frame> got = read_pcap(dir + "/outB.pcap");
  ITEST_CHECK(got.size() == want.size(), "%zu frames out of B, models say %zu", got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const Masked g = mask_hop1(got[i]), w = mask_hop1(want[i]);
    ITEST_CHECK(g.f == w.f, "frame %zu differs from the models (outside B's tx_l/q_l)", i);
    ITEST_CHECK(g.tx <= 20'000 && uint64_t{g.q} * 64 <= bytes, "frame %zu: B stamped tx_l=%u Mb/s q_l=%u", i, g.tx,
                g.q);
  }
  auto fa = parse_line(out_a, "ufab-core final "), fb = parse_line(out_b, "ufab-core final ");
  ITEST_CHECK(fa["rx"] == inputs.size() && fa["tx"] == inputs.size() && fa["dropped"] == 0, "switch A counters");
  ITEST_CHECK(fb["rx"] == inputs.size() && fb["tx"] == want.size() && fb["drop.bad_port"] == 1 &&
                  fb["rx"] == fb["tx"] + fb["queued"] + fb["dropped"],
              "switch B counters");
  if (itest::g_failures == 0) {
    fs::remove_all(dir);
    std::printf("PASS: %zu frames through two switches over memif, %zu out\n", inputs.size(), want.size());
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", itest::g_failures, dir.c_str());
  return 1;
}
