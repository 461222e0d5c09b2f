// ufab-core against the μFAB-C reference model, byte for byte (issue 3).
//
// Writes an input pcap (probes, finishes, a response, data frames, failure
// notices that grow and shrink the frame, malformed frames, non-uFAB
// frames, frames at and above --mtu with and without a VLAN tag), runs
// ufab-core on four net_pcap ports with --fake-clock and
// --burst 1, and checks that every output pcap holds exactly the frames
// SwitchModel produces in-process for the same inputs at the same times:
// the k-th poll runs at k x 1 µs and takes one frame from port 0, and with
// delay 0 and enough shaper credit a frame leaves in the poll it arrived, so
// it is stamped at now = k µs with queue depth 0 (tx_l is compared exactly).
// The two frames above the MTU are dropped before the pipeline (too_big)
// and are not fed to the reference.
// Then it checks the drop counters by reason, rx = tx + queued + dropped,
// and each link's Φ_l and W_l. --capture 0=FILE mirrors port 0's input: the
// file holds every input frame, unchanged and in order, 1 µs apart (one per
// poll); --capture of a port that does not exist, twice the same port, or
// without "=FILE" is refused with the option named (exit 2). It runs
// busy-polling (--idle-nap-us 0): with the fake clock one poll is one tick
// whether or not the loop sleeps, so the frames and times are those of the
// default naps.
//
// argv[1]: path of ufab-core, or empty when DPDK was not found (exit 77).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "p4/model/switch_model.hpp"
#include "probe/units.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;
using namespace ufab;
namespace fs = std::filesystem;

constexpr uint16_t kPorts = 4;
constexpr uint16_t kDownPort = 3;
constexpr Nanos kTick = 1000;  // --fake-clock
constexpr uint32_t kL3Dst = 0x0a090909;  // 10.9.9.9, --route 10.9.9.9=2

std::vector<Frame> make_inputs() {
  using wire::MsgType;
  constexpr uint32_t a = 0x0a000001, b = 0x0a000002;
  std::vector<Frame> in;
  in.push_back(control(a, route({1, 5, 6}), message(MsgType::probe, 1, 64, {100, 100, 100}, 0, wire::kMsgNewPair)));
  in.push_back(control(b, route({2}), message(MsgType::probe, 2, 128, {300, 1})));
  for (int i = 0; i < 40; ++i) in.push_back(data(a, 1, route({1, 5, 6}), 900));  // fills tx_l's windows
  in.push_back(control(a, route({1, 5, 6}), message(MsgType::probe, 1, 96, {150, 100, 100})));  // φ, w change
  in.push_back(control(b, route({9, 2}, 1), message(MsgType::probe, 3, 64, {40, 50}, 1)));       // 2nd hop
  in.push_back(control(a, route({1}), message(MsgType::probe, 4, 64, {10}, 0, wire::kMsgQuery)));  // §3.5 query
  in.push_back(control(b, route({2}), message(MsgType::finish, 2, 128, {1, 1})));
  in.push_back(control(b, route({2}), message(MsgType::finish, 2, 128, {1, 1}, 0, wire::kMsgRetry)));
  in.push_back(control(a, route({0}), message(MsgType::response, 5, 64, {1, 2, 3}, 3)));  // hairpin, unstamped
  in.push_back(control(a, route({1}), message(MsgType::probe, 6, 64, {1, 1}, 2)));        // hops exhausted
  in.push_back(control(a, route({kDownPort}), message(MsgType::probe, 7, 64, {5, 5, 5}, 2)));  // failure, grows
  in.push_back(control(a, route({1, 1, 1, 1, kDownPort}, 4), message(MsgType::probe, 8, 64, {5, 5})));  // shrinks
  in.push_back(data(a, 9, route({kDownPort}), 100));                                     // port_down
  in.push_back(plain_udp(kL3Dst, 53));                                                   // L3 to port 2
  in.push_back(plain_udp(0x0a0a0a0a, 53));                                               // no_route
  Frame arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  in.push_back(arp);                                                                     // no_route
  Frame bad_ver = data(a, 10, route({1}), 64);
  bad_ver[42] = static_cast<uint8_t>((2 << 4) | wire::kNextData);
  in.push_back(bad_ver);                                                                 // malformed
  Frame cut = control(a, route({1}), message(MsgType::probe, 11, 64, {1, 1, 1}));
  cut.resize(70);
  in.push_back(cut);                                                                     // malformed: truncated
  in.push_back(data(a, 12, route({1, 2}, 2), 64));                                       // route_exhausted
  in.push_back(data(a, 13, route({7}), 64));                                             // bad_port
  for (int i = 0; i < 5; ++i) in.push_back(control(b, route({2}), message(MsgType::probe, 20 + i, 64, {8})));
  return in;
}

// Frames at and above --mtu (1600, the default): an Ethernet payload of
// 1600 bytes passes, 1601 is dropped on arrival (too_big); a VLAN tag is
// not counted. The second element is true for the two ufab-core drops.
std::vector<std::pair<Frame, bool>> mtu_inputs() {
  constexpr uint32_t a = 0x0a000001;
  constexpr size_t kMtu = 1600, kEth = 14;
  const size_t head = data(a, 30, route({1}), 0).size();
  auto tagged = [](Frame f) {
    const uint8_t tag[4] = {0x81, 0x00, 0x00, 0x05};
    f.insert(f.begin() + 12, tag, tag + 4);
    return f;
  };
  return {{data(a, 30, route({1}), kMtu + kEth - head), false},          // 1614 bytes: forwarded
          {data(a, 31, route({1}), kMtu + kEth - head + 1), true},       // 1615: too_big
          {tagged(data(a, 32, route({1}), kMtu + kEth - head)), false},  // 1618 with its tag: to the model
          {tagged(data(a, 33, route({1}), kMtu + kEth - head + 1)), true}};
}

swmodel::SwitchConfig model_config() {
  swmodel::SwitchConfig c;
  c.n_ports = kPorts;
  c.cap_codes = {5, 5, 5, 3};  // --port-caps 10G,10G,10G,1G
  c.aging_period = 10 * kSec;
  c.tx_shift = 2;
  return c;
}

void compare_frames(uint16_t port, const std::vector<Frame>& got, const std::vector<Frame>& want) {
  ITEST_CHECK(got.size() == want.size(), "port %u: %zu frames out, model says %zu", port, got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    size_t at = 0;
    while (at < got[i].size() && at < want[i].size() && got[i][at] == want[i][at]) ++at;
    ITEST_CHECK(false, "port %u frame %zu differs at byte %zu (len %zu vs %zu)", port, i, at, got[i].size(),
          want[i].size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-core was not built (libdpdk not found)\n");
    return 77;
  }
  const std::string core = argv[1];
  char tmpl[] = "/tmp/ufab_core_pcap.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const std::string prefix = "ufabcorepcap" + std::to_string(getpid());

  std::vector<Frame> inputs = make_inputs();
  std::vector<bool> giant(inputs.size(), false);
  for (const auto& [f, drop] : mtu_inputs()) {
    inputs.push_back(f);
    giant.push_back(drop);
  }
  ITEST_CHECK(inputs[inputs.size() - 4].size() == 1614 && inputs.back().size() == 1619, "the MTU frames' sizes");
  itest::write_pcap(dir + "/in.pcap", inputs);
  itest::write_pcap(dir + "/empty.pcap", {});

  std::vector<std::string> args = {core, "--no-huge", "--no-pci", "-m", "256", "-l", "0", "--file-prefix", prefix,
                                   "--log-level", "error"};
  for (uint16_t p = 0; p < kPorts; ++p) {
    const std::string rx = p == 0 ? dir + "/in.pcap" : dir + "/empty.pcap";
    args.insert(args.end(), {"--vdev", "net_pcap" + std::to_string(p) + ",rx_pcap=" + rx + ",tx_pcap=" + dir +
                                           "/out" + std::to_string(p) + ".pcap"});
  }
  args.insert(args.end(), {"--", "--fake-clock", std::to_string(kTick), "--burst", "1", "--exit-after-idle-ms",
                           "300", "--stats-interval", "0", "--route", "10.9.9.9=2", "--down-ports",
                           std::to_string(kDownPort), "--port-caps", "10G,10G,10G,1G", "--queue-bytes", "65536",
                           "--capture", "0=" + dir + "/capture0.pcap",
                           // busy-poll: the fake clock makes the result the same as with naps
                           "--idle-nap-us", "0"});
  const itest::RunResult r = itest::run_with_deadline(args, dir + "/stdout.txt", dir + "/stderr.txt", 40);
  for (const char* base : {"/var/run/dpdk/", "/tmp/dpdk/"}) fs::remove_all(std::string(base) + prefix);
  const std::string out = itest::read_file(dir + "/stdout.txt");
  std::printf("%s", out.c_str());
  ITEST_CHECK(!r.timed_out, "ufab-core did not exit within 40 s");
  ITEST_CHECK(r.exit_code == 0, "ufab-core exit code %d; stderr: %s", r.exit_code,
        itest::read_file(dir + "/stderr.txt").c_str());
  ITEST_CHECK(out.find("ufab-core naps: busy-poll\n") != std::string::npos, "--idle-nap-us 0 is printed as busy-poll");

  // The reference: the same model, in process, at the same times.
  swmodel::SwitchModel model(model_config());
  model.l3().add_host_route(kL3Dst, {2});
  model.set_port_up(kDownPort, false);
  std::vector<std::vector<Frame>> want(kPorts);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Nanos now = (i + 1) * kTick;
    if (giant[i]) continue;  // dropped by ufab-core before its pipeline
    std::vector<uint8_t> f = inputs[i];
    const swmodel::Decision d = model.ingress(f, 0, now);
    if (d.forward && model.egress(f, d.port, 0, now, 0).forward) want[d.port].push_back(f);
  }
  size_t want_tx = 0;
  for (uint16_t p = 0; p < kPorts; ++p) {
    const std::string path = dir + "/out" + std::to_string(p) + ".pcap";
    const std::vector<Frame> got = fs::exists(path) ? itest::read_pcap(path) : std::vector<Frame>{};
    compare_frames(p, got, want[p]);
    want_tx += want[p].size();
  }

  // The comparison covers real telemetry: the last pair-1 probe read a
  // non-zero tx_l (the data frames before it filled the tx windows).
  uint32_t stamped_tx = 0;
  for (const Frame& f : want[1]) {
    wire::FrameView v;
    wire::Message m;
    if (wire::parse_frame(f, v) == wire::WireError::ok && v.shim.next == wire::kNextControl &&
        wire::decode_message(std::span<const uint8_t>(f).subspan(v.payload_offset, v.payload_len), m) ==
            wire::WireError::ok &&
        m.type == wire::MsgType::probe && m.pair_id == 1)
      stamped_tx = m.hop[0].tx;
  }
  ITEST_CHECK(stamped_tx > 0, "the reference stamped tx_l = 0: the test does not exercise tx_l");

  // The mirror of port 0: the inputs as they arrived, one per poll.
  const std::vector<Frame> mirrored = fs::exists(dir + "/capture0.pcap") ? itest::read_pcap(dir + "/capture0.pcap")
                                                                         : std::vector<Frame>{};
  ITEST_CHECK(mirrored == inputs, "--capture 0: %zu frames, want the %zu inputs unchanged and in order",
              mirrored.size(), inputs.size());
  if (mirrored.size() == inputs.size()) {
    const std::vector<uint64_t> t = itest::read_pcap_times_us(dir + "/capture0.pcap");
    bool one_us = true;
    for (size_t i = 1; i < t.size(); ++i) one_us = one_us && t[i] - t[i - 1] == kTick / 1000;
    ITEST_CHECK(one_us, "--capture 0: frames are not 1 us apart (the k-th poll runs at k us)");
  }
  ITEST_CHECK(out.find("ufab-core capture port 0: " + std::to_string(inputs.size()) + " frames to") != std::string::npos,
              "no capture line with %zu frames in the output", inputs.size());

  // Bad --capture values: refused with the option named, exit 2.
  const std::pair<std::vector<std::string>, std::string> refused[] = {
      {{"--capture", "9=" + dir + "/x.pcap"}, "--capture: port 9 does not exist (4 ports)"},
      {{"--capture", "0"}, "--capture: '0' is not PORT=FILE"},
      {{"--capture", "1=" + dir + "/a.pcap", "--capture", "1=" + dir + "/b.pcap"}, "--capture: port 1 is captured twice"},
  };
  for (const auto& [extra, why] : refused) {
    std::vector<std::string> bad(args.begin(), args.end() - 2);  // without the good --capture
    bad.insert(bad.end(), extra.begin(), extra.end());
    const itest::RunResult rb = itest::run_with_deadline(bad, dir + "/bad.out", dir + "/bad.err", 40);
    for (const char* base : {"/var/run/dpdk/", "/tmp/dpdk/"}) fs::remove_all(std::string(base) + prefix);
    const std::string err = itest::read_file(dir + "/bad.err");
    ITEST_CHECK(!rb.timed_out && rb.exit_code == 2 && err.find(why) != std::string::npos,
                "%s: exit %d, stderr '%s' (want exit 2 and '%s')", extra.back().c_str(), rb.exit_code, err.c_str(),
                why.c_str());
  }

  auto fin = parse_line(out, "ufab-core final ");
  const swmodel::SwitchCounters& c = model.counters();
  ITEST_CHECK(fin["rx"] == inputs.size(), "rx=%llu, sent %zu", static_cast<unsigned long long>(fin["rx"]), inputs.size());
  ITEST_CHECK(fin["tx"] == want_tx, "tx=%llu, model forwarded %zu", static_cast<unsigned long long>(fin["tx"]), want_tx);
  ITEST_CHECK(fin["queued"] == 0, "queued=%llu", static_cast<unsigned long long>(fin["queued"]));
  ITEST_CHECK(fin["rx"] == fin["tx"] + fin["queued"] + fin["dropped"], "rx != tx + queued + dropped");
  const std::pair<const char*, swmodel::DropReason> reasons[] = {
      {"drop.malformed", swmodel::DropReason::malformed},       {"drop.route_exhausted", swmodel::DropReason::route_exhausted},
      {"drop.bad_port", swmodel::DropReason::bad_port},         {"drop.port_down", swmodel::DropReason::port_down},
      {"drop.no_route", swmodel::DropReason::no_route},
  };
  for (const auto& [key, reason] : reasons) {
    ITEST_CHECK(c.drops_of(reason) > 0, "the input should exercise %s", key);
    ITEST_CHECK(fin[key] == c.drops_of(reason), "%s=%llu, model %llu", key, static_cast<unsigned long long>(fin[key]),
          static_cast<unsigned long long>(c.drops_of(reason)));
  }
  ITEST_CHECK(fin["drop.too_big"] == 2, "drop.too_big=%llu, want the 2 frames above --mtu 1600",
              static_cast<unsigned long long>(fin["drop.too_big"]));
  ITEST_CHECK(fin["malformed.truncated"] == 1 && fin["malformed.bad_version"] == 1, "malformed by WireError");
  ITEST_CHECK(fin["failures"] == 2 && c.failures_generated == 2, "two failure notices");
  for (uint16_t p = 0; p < kPorts; ++p) {
    auto port = parse_line(out, "ufab-core port " + std::to_string(p) + " rx=");
    ITEST_CHECK(port["Phi_l"] == model.link(p).phi_sum() && port["W_l"] == model.link(p).w_sum(),
          "port %u: Phi_l/W_l differ from the model", p);
  }
  if (itest::g_failures == 0) {
    fs::remove_all(dir);
    std::printf("PASS: %zu frames in, %zu out, byte-identical to SwitchModel\n", inputs.size(), want_tx);
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", itest::g_failures, dir.c_str());
  return 1;
}
