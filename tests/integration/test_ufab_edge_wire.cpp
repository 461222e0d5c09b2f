// ufab-edge measured at the wire (issue 4 §7): one edge, VM ports replayed
// from pcaps, the fabric port captured by net_pcap, no switch and no peer
// (so no response ever comes back: every window stays at its join value).
// Each case runs ufab-edge once and checks the capture and the final report
// against values computed by hand from the configuration:
//
//  1. window gating (§3.4, Scenario 1): a new pair may have w' = phi * B_u * T
//     bytes in flight before its first response. B_u = 1 Mb/s, a guarantee
//     of 0.2 Mb/s (phi = 0.2 tokens) and T = 1 s give w' = 0.2 * 125000 B/s
//     * 1 s = 25000 B. (VmPair also counts bytes older than its RTT estimate
//     as delivered, at least T after they left: T = 1 s keeps that outside
//     the run, which ends 400 ms after the last VM frame.) Frames are 1000 B
//     inner + 54 B encapsulation (outer 42 + shim 8 + route of one label 4)
//     = 1054 B, and the gate admits a frame while inflight + len <= window,
//     so exactly floor(25000 / 1054) = 23 frames = 24242 B leave (within one
//     frame of w'), the other 17 stay queued.
//  2. scheduling shares (§4.1): two tenants in weight classes 0 and 1 (WFQ
//     weights 1 and 2), both backlogged with equal frames and windows far
//     above what they send (T = 100 ms: w' >= 12.5 MB). Over the interval
//     in which both are backlogged (up to the last frame of the faster one)
//     the bytes must split 1:2. Start-time fair queueing bounds the lag of
//     any two backlogged flows: |S_A/w_A - S_B/w_B| <= L/w_A + L/w_B, i.e.
//     |2 S_A - S_B| <= 3L with L = 1054 B. Again with the classes from the
//     tenants' guarantees, 1 and 4 Gb/s (classes 0 and 2, weights 1 and 4):
//     |4 S_A - S_B| <= 5L; and with the classes spread over [1, 10] Gb/s,
//     guarantees of 1 and 10 (weights 409 and 4090): |10 S_A - S_B| <= 11L.
//  3. 2x overload: 78 frames offered to a pair whose window admits 23 and
//     whose flow FIFO holds 16 (twice the 39 the edge can take); 5 frames
//     to a VM with no pair; a response on the VM port (spoofing). Exactly:
//     23 sent, 16 queued, 39 queue_full, 5 unknown_pair, 1 spoofed, and
//     rx + generated == tx + queued + dropped + absorbed.
//  4. mbuf exhaustion: mbufs: 255 (the smallest pool the configuration
//     takes), 400 frames offered: the edge sends its 23, holds what it
//     received in the scheduler, the PMD counts the frames it had no mbuf
//     for (rx + rx_nombuf == 400). With probe_timeout_rtts: 1 the first probe
//     is lost after T = 1 s and the next one is due in the same control tick
//     that acks the first window by time, before the scheduler sends (and
//     frees) anything: it finds the pool empty and is counted as
//     mbuf_exhausted. Nothing crashes; conservation holds.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
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

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002;
constexpr size_t kInner = 1000;                 // inner frame bytes
constexpr size_t kWire = kInner + 42 + 8 + 4;   // + outer + shim + one-label route
constexpr double kUnitBps = 125000;             // B_u = 1 Mb/s (cases 1, 3, 4)

std::string config(const std::string& params, const std::string& tenants, const std::string& vms, double rtt_us,
                   const std::string& remotes) {
  char rtt[32];
  std::snprintf(rtt, sizeof(rtt), "%g", rtt_us);
  return "edge:\n  fabric_port: 2\n  ip: 10.0.0.1\n  mac: 02:00:00:00:00:01\nparams:\n" + params +
         "tenants:\n" + tenants + "vms:\n" + vms +
         "hosts:\n  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: " + rtt +
         ", paths: [[1]]}\nremote_vms:\n" + remotes;
}

struct Run {
  std::string out;
  std::vector<Frame> fabric;  // the fabric port's capture
  std::map<std::string, uint64_t> fin;
  bool ok = false;
};

std::string g_edge;

// One ufab-edge: VM ports 0 and 1 from vm0/vm1, fabric port 2 (empty input).
Run run(const std::string& dir, const std::string& name, const std::string& yaml, const std::vector<Frame>& vm0,
        const std::vector<Frame>& vm1, const char* idle_ms = "400") {
  const std::string base = dir + "/" + name;
  write_text(base + ".yaml", yaml);
  write_pcap(base + "_vm0.pcap", vm0);
  write_pcap(base + "_vm1.pcap", vm1);
  write_pcap(base + "_fab_in.pcap", {});
  const std::string prefix = "ufabwire" + name + std::to_string(getpid());
  std::vector<std::string> cmd = {g_edge};
  for (const std::string& s : edge_eal(prefix, "0")) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev", "net_pcap0,rx_pcap=" + base + "_vm0.pcap,tx_pcap=" + base + "_vm0_out.pcap",
                         "--vdev", "net_pcap1,rx_pcap=" + base + "_vm1.pcap,tx_pcap=" + base + "_vm1_out.pcap",
                         "--vdev", "net_pcap2,rx_pcap=" + base + "_fab_in.pcap,tx_pcap=" + base + "_fab.pcap", "--",
                         "--config", base + ".yaml", "--exit-after-idle-ms", idle_ms, "--stats-interval", "0"});
  const RunResult r = run_with_deadline(cmd, base + ".out", base + ".err", 30);
  remove_dpdk_runtime(prefix);
  Run res;
  res.out = read_file(base + ".out");
  std::printf("--- %s\n%s", name.c_str(), res.out.c_str());
  res.ok = !r.timed_out && r.exit_code == 0;
  ITEST_CHECK(res.ok, "%s: ufab-edge failed (exit %d): %s", name.c_str(), r.exit_code, read_file(base + ".err").c_str());
  if (res.ok) res.fabric = read_pcap(base + "_fab.pcap");
  res.fin = parse_line(res.out, "ufab-edge final ");
  return res;
}

struct WireCount {
  std::map<uint32_t, uint64_t> data_bytes, data_frames;  // by VNI
  uint64_t probes = 0, other = 0;
};

// Data frames per VNI, in capture order up to (and including) frame `upto`.
WireCount count(const std::vector<Frame>& cap, size_t upto = SIZE_MAX) {
  WireCount c;
  for (size_t i = 0; i < cap.size() && i <= upto; ++i) {
    wire::FrameView v;
    if (wire::parse_frame(cap[i], v) != wire::WireError::ok) {
      ++c.other;
    } else if (v.shim.next == wire::kNextData) {
      c.data_bytes[v.shim.vni] += cap[i].size();
      ++c.data_frames[v.shim.vni];
    } else {
      ++c.probes;
    }
  }
  return c;
}

bool conserved(std::map<std::string, uint64_t>& f) {
  return f["conserved"] == 1 && f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"];
}

std::vector<Frame> frames(uint32_t src, uint32_t dst, size_t n, uint8_t seed) {
  std::vector<Frame> v;
  for (size_t i = 0; i < n; ++i) v.push_back(vm_frame(src, dst, 1000, kInner - 42, static_cast<uint8_t>(seed + i)));
  return v;
}

const std::string kOneVm = "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n";
const std::string kOneRemote = "  - {name: b1, id: 11, tenant: 100, ip: 192.168.0.2, host: hB}\n";
const std::string kOneTenant = "  - {vni: 100, guarantee_gbps: 0.0002, weight_class: 0}\n";
const std::string kSlow = "  unit_bw_gbps: 0.001\n";
constexpr double kRttUs = 1e6;

void window_gating(const std::string& dir) {
  const double w = 0.2 * kUnitBps * 1.0;  // phi * B_u * T = 25000 B
  const auto k = static_cast<uint64_t>(w / kWire);
  ITEST_CHECK(k == 23, "hand computation: %llu frames", static_cast<unsigned long long>(k));
  Run r = run(dir, "gate", config(kSlow + "  queue_capacity: 64\n  flows_per_pair: 1\n", kOneTenant, kOneVm, kRttUs, kOneRemote),
              frames(kA1, kB1, 40, 1), {});
  if (!r.ok) return;
  WireCount c = count(r.fabric);
  std::printf("window gating: %llu data bytes on the wire, w' = %.0f, frame %zu\n",
              static_cast<unsigned long long>(c.data_bytes[100]), w, kWire);
  ITEST_CHECK(c.data_bytes[100] == k * kWire && c.data_frames[100] == k, "%llu bytes in %llu frames, want %llu in %llu",
              static_cast<unsigned long long>(c.data_bytes[100]), static_cast<unsigned long long>(c.data_frames[100]),
              static_cast<unsigned long long>(k * kWire), static_cast<unsigned long long>(k));
  ITEST_CHECK(c.data_bytes[100] <= w && c.data_bytes[100] + kWire > w, "not within one frame below w'");
  auto p = parse_line(r.out, "ufab-edge pair=0x0001000b ");
  ITEST_CHECK(p["window"] == 25000 && p["inflight"] == k * kWire && p["sent"] == k * kWire && p["acked"] == 0 &&
                  p["token_x1000"] == 200,
              "pair: window %llu inflight %llu sent %llu token_x1000 %llu", static_cast<unsigned long long>(p["window"]),
              static_cast<unsigned long long>(p["inflight"]), static_cast<unsigned long long>(p["sent"]),
              static_cast<unsigned long long>(p["token_x1000"]));
  ITEST_CHECK(r.fin["queued"] == 40 - k && r.fin["dropped"] == 0 && r.fin["encap"] == k && conserved(r.fin),
              "gate: queued=%llu dropped=%llu", static_cast<unsigned long long>(r.fin["queued"]),
              static_cast<unsigned long long>(r.fin["dropped"]));
}

// Tenants 100 and 200 (one pair each), both backlogged: while both are,
// the bytes split 1:k (k: tenant 200's WFQ weight over tenant 100's).
void shares(const std::string& dir, const std::string& name, const std::string& tenants, int k,
            const std::string& params = "") {
  const std::string vms = kOneVm + "  - {name: a2, id: 2, tenant: 200, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.1, port: 1}\n";
  const std::string remotes = kOneRemote + "  - {name: b2, id: 12, tenant: 200, ip: 192.168.0.2, host: hB}\n";
  constexpr size_t n = 300;
  Run r = run(dir, name, config("  queue_capacity: 1024\n  flows_per_pair: 1\n" + params, tenants, vms, 100000, remotes),
              frames(kA1, kB1, n, 3), frames(kA1, kB1, n, 5));
  if (!r.ok) return;
  // The backlogged interval: up to the last data frame of the tenant served faster.
  size_t last_b = 0;
  for (size_t i = 0; i < r.fabric.size(); ++i) {
    wire::FrameView v;
    if (wire::parse_frame(r.fabric[i], v) == wire::WireError::ok && v.shim.next == wire::kNextData && v.shim.vni == 200)
      last_b = i;
  }
  WireCount c = count(r.fabric, last_b);
  const auto sa = static_cast<double>(c.data_bytes[100]), sb = static_cast<double>(c.data_bytes[200]);
  std::printf("%s: while both backlogged tenant 100 (weight 1) sent %.0f B, tenant 200 (weight %d) %.0f B: ratio %.4f\n",
              name.c_str(), sa, k, sb, sa > 0 ? sb / sa : 0.0);
  ITEST_CHECK(c.data_frames[200] == n, "%s: tenant 200: %llu of %zu frames in the interval", name.c_str(),
              static_cast<unsigned long long>(c.data_frames[200]), n);
  ITEST_CHECK(sa > 0 && std::abs(k * sa - sb) <= (k + 1) * static_cast<double>(kWire), "%s: |%d S_A - S_B| = %.0f > %dL = %zu",
              name.c_str(), k, std::abs(k * sa - sb), k + 1, (k + 1) * kWire);
  WireCount all = count(r.fabric);
  ITEST_CHECK(all.data_frames[100] == n && all.data_frames[200] == n && r.fin["dropped"] == 0 && r.fin["queued"] == 0 &&
                  conserved(r.fin),
              "%s: everything sent in the end, no drops", name.c_str());
}

void overload(const std::string& dir) {
  constexpr uint64_t k = 23, cap = 16, offered = 2 * (k + cap), unknown = 5;
  std::vector<Frame> vm0 = frames(kA1, kB1, offered, 7);
  for (uint64_t i = 0; i < unknown; ++i) vm0.push_back(vm_frame(kA1, 0xc0a80063, 1000, 200, 1));  // no pair to .99
  vm0.push_back(control(kA1, route({1}), message(wire::MsgType::response, 0x000b0001, 64, {1}, 1), 100));  // spoofed
  Run r = run(dir, "overload",
              config(kSlow + "  queue_capacity: 16\n  flows_per_pair: 1\n", kOneTenant, kOneVm, kRttUs, kOneRemote), vm0, {});
  if (!r.ok) return;
  WireCount c = count(r.fabric);
  auto& f = r.fin;
  ITEST_CHECK(c.data_frames[100] == k && f["encap"] == k, "sent %llu data frames, want %llu",
              static_cast<unsigned long long>(c.data_frames[100]), static_cast<unsigned long long>(k));
  ITEST_CHECK(f["rx"] == vm0.size() && f["queued"] == cap && f["drop.queue_full"] == offered - k - cap &&
                  f["drop.unknown_pair"] == unknown && f["drop.spoofed"] == 1,
              "overload: rx=%llu queued=%llu queue_full=%llu unknown_pair=%llu spoofed=%llu",
              static_cast<unsigned long long>(f["rx"]), static_cast<unsigned long long>(f["queued"]),
              static_cast<unsigned long long>(f["drop.queue_full"]), static_cast<unsigned long long>(f["drop.unknown_pair"]),
              static_cast<unsigned long long>(f["drop.spoofed"]));
  ITEST_CHECK(f["dropped"] == offered - k - cap + unknown + 1 + f["drop.mbuf_exhausted"], "no drop outside its reason");
  ITEST_CHECK(conserved(f) && f["tx"] == c.data_frames[100] + c.probes && c.other == 0,
              "overload: conservation; tx=%llu = %llu data + %llu probes", static_cast<unsigned long long>(f["tx"]),
              static_cast<unsigned long long>(c.data_frames[100]), static_cast<unsigned long long>(c.probes));
}

void mbuf_exhaustion(const std::string& dir) {
  constexpr uint64_t k = 23, offered = 400;
  Run r = run(dir, "mbufs",
              config(kSlow + "  mbufs: 255\n  queue_capacity: 1024\n  flows_per_pair: 1\n  probe_timeout_rtts: 1\n",
                     kOneTenant, kOneVm, kRttUs, kOneRemote),
              frames(kA1, kB1, offered, 9), {}, "1500");
  if (!r.ok) return;
  auto& f = r.fin;
  auto pmd = parse_line(r.out, "ufab-edge pmd port=0 ");
  WireCount c = count(r.fabric);
  std::printf("mbuf exhaustion: rx=%llu rx_nombuf=%llu queued=%llu mbuf_exhausted=%llu\n",
              static_cast<unsigned long long>(f["rx"]), static_cast<unsigned long long>(pmd["rx_nombuf"]),
              static_cast<unsigned long long>(f["queued"]), static_cast<unsigned long long>(f["drop.mbuf_exhausted"]));
  ITEST_CHECK(f["rx"] + pmd["rx_nombuf"] == offered, "rx + rx_nombuf = %llu, offered %llu",
              static_cast<unsigned long long>(f["rx"] + pmd["rx_nombuf"]), static_cast<unsigned long long>(offered));
  ITEST_CHECK(pmd["rx_nombuf"] > 0 && f["rx"] <= 255 + k, "the pool limited the intake");
  ITEST_CHECK(c.data_frames[100] >= k && c.data_frames[100] == f["encap"] && f["queued"] == f["rx"] - f["encap"],
              "sent %llu, queued %llu",
              static_cast<unsigned long long>(c.data_frames[100]), static_cast<unsigned long long>(f["queued"]));
  ITEST_CHECK(f["drop.mbuf_exhausted"] >= 1 && f["dropped"] == f["drop.mbuf_exhausted"],
              "probes without an mbuf counted as mbuf_exhausted, nothing else dropped");
  ITEST_CHECK(conserved(f), "mbufs: conservation");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  g_edge = argv[1];
  char tmpl[] = "/tmp/ufab_edge_wire.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  window_gating(dir);
  // Classes given: 0 and 1 (weights 1 and 2).
  shares(dir, "wfq", "  - {vni: 100, guarantee_gbps: 1, weight_class: 0}\n  - {vni: 200, guarantee_gbps: 2, weight_class: 1}\n", 2);
  // Classes from the guarantees (§4.1): 1 and 4 Gb/s, the unit 1 Gb/s, so
  // classes 0 and 2 (weights 1 and 4).
  shares(dir, "wfq_auto", "  - {vni: 100, guarantee_gbps: 1}\n  - {vni: 200, guarantee_gbps: 4}\n", 4);
  // The classes spread over [1, 10] Gb/s (weights 409 .. 4090): guarantees
  // of 1 and 10 Gb/s are classes 0 and 7, exactly 1:10 (powers of two would
  // give 1:8).
  shares(dir, "wfq_span", "  - {vni: 100, guarantee_gbps: 1}\n  - {vni: 200, guarantee_gbps: 10}\n", 10,
         "  weight_span_gbps: [1, 10]\n");
  overload(dir);
  mbuf_exhaustion(dir);
  if (itest::g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: window gating, WFQ shares, 2x overload and mbuf exhaustion as computed\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", itest::g_failures, dir.c_str());
  return 1;
}
