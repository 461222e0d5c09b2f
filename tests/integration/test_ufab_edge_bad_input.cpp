// ufab-edge on bad input (issue 4 §6): one edge on two net_pcap ports (VM
// side and fabric) is fed spoofed, malformed, unknown and excess frames next
// to valid ones. Each is counted under its own reason, nothing crashes, the
// valid ones are handled (a probe answered with a response, a finish with a
// finish-ack, a data frame decapsulated to the VM unchanged), and
// rx + generated == tx + queued + dropped + absorbed.
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

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002;  // 192.168.0.1 / .2
constexpr uint32_t kHostB = 0x0a000002;                   // 10.0.0.2
constexpr uint32_t kPairOut = 1u << 16 | 2, kPairIn = 2u << 16 | 1;

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  queue_capacity: 4
  flows_per_pair: 1
tenants:
  - vni: 100
    guarantee_gbps: 2
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
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

Frame truncated(Frame f, size_t n) {
  f.resize(n);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_bad");
  if (dir.empty()) return 1;

  // VM side: 10 frames of a1 -> b1 (the pair never gets a window: 4 queue, 6
  // overflow), and the bad ones.
  std::vector<Frame> vm_in;
  for (int i = 0; i < 10; ++i) vm_in.push_back(vm_frame(kA1, kB1, 1000, 200, static_cast<uint8_t>(i)));
  vm_in.push_back(control(kA1, route({1}), message(wire::MsgType::probe, kPairOut, 64, {1})));  // spoofed
  vm_in.push_back(data(kA1, kPairOut, route({1}), 100));                                         // spoofed
  vm_in.push_back(truncated(data(kA1, kPairOut, route({1}), 100), 45));                          // malformed
  Frame arp(60, 0);  // an ARP frame of zeros: not IPv4 over Ethernet (htype 0, ptype 0)
  arp[12] = 0x08;
  arp[13] = 0x06;
  vm_in.push_back(arp);                                       // malformed (proxy ARP reads it, vm_arp.cpp)
  Frame lldp(60, 0);  // neither IPv4, IPv6 nor ARP
  lldp[12] = 0x88;
  lldp[13] = 0xcc;
  vm_in.push_back(lldp);                                      // not_ipv4
  vm_in.push_back(vm_frame(0xc0a80009, kB1, 1000, 100, 1));  // unknown_pair (no VM .9 on this port)
  vm_in.push_back(vm_frame(0, 0xffffffff, 68, 100, 2));        // local_scope: DHCP (0.0.0.0 to broadcast)
  vm_in.push_back(vm_frame(kA1, 0xe00000fb, 5353, 60, 3));      // local_scope: mDNS (224.0.0.251)

  // Fabric side.
  const Frame inner = vm_frame(kB1, kA1, 2000, 300, 77);
  std::vector<Frame> fab_in;
  fab_in.push_back(Frame(60, 0xff));                                                      // not_ufab
  fab_in.push_back(truncated(control(kHostB, route({0}), message(wire::MsgType::probe, kPairIn, 64, {1}), 100), 70));  // malformed
  Frame bad_type = control(kHostB, route({0}), message(wire::MsgType::probe, kPairIn, 64, {1}), 100);
  bad_type[wire::kOuterBytes + wire::kShimBytes + 4] = 0x91;  // message type 9
  fab_in.push_back(bad_type);                                                              // malformed
  fab_in.push_back(control(kHostB, route({0}), message(wire::MsgType::response, 0x00090009, 64, {1}), 100));  // unknown_pair
  fab_in.push_back(ufab_frame(kHostB, 100, kPairIn, route({0}), wire::kNextData,
                              vm_frame(kB1, 0xc0a80077, 2000, 100, 5)));                   // unknown_vm
  fab_in.push_back(control(0x0a000063, route({0}), message(wire::MsgType::probe, kPairIn, 64, {1}), 100));  // unknown host
  fab_in.push_back(control(kHostB, route({0}), message(wire::MsgType::probe, kPairIn, 128, {1}, 1), 100));  // answered
  fab_in.push_back(ufab_frame(kHostB, 100, kPairIn, route({0}), wire::kNextData, inner));  // delivered
  fab_in.push_back(control(kHostB, route({0}), message(wire::MsgType::finish, kPairIn, 128, {1}, 1), 100));  // acked
  const PcapEdgeRun run = run_edge_on_pcaps(argv[1], dir, "bad", kConfig, vm_in, fab_in);
  auto f = run.final;
  ITEST_CHECK(f["rx"] == vm_in.size() + fab_in.size(), "rx=%llu", static_cast<unsigned long long>(f["rx"]));
  ITEST_CHECK(f["conserved"] == 1 && f["rx"] + f["generated"] == f["tx"] + f["queued"] + f["dropped"] + f["absorbed"],
              "conservation");
  ITEST_CHECK(f["drop.spoofed"] == 2, "spoofed=%llu", static_cast<unsigned long long>(f["drop.spoofed"]));
  ITEST_CHECK(f["drop.malformed"] == 4, "malformed=%llu", static_cast<unsigned long long>(f["drop.malformed"]));
  ITEST_CHECK(f["drop.not_ipv4"] == 1, "not_ipv4");
  ITEST_CHECK(f["drop.not_ufab"] == 1, "not_ufab");
  ITEST_CHECK(f["drop.unknown_pair"] == 3, "unknown_pair=%llu", static_cast<unsigned long long>(f["drop.unknown_pair"]));
  ITEST_CHECK(f["drop.unknown_vm"] == 1, "unknown_vm");
  ITEST_CHECK(f["drop.local_scope"] == 2, "local_scope=%llu", static_cast<unsigned long long>(f["drop.local_scope"]));
  // 4 fit the pair's queue, 6 overflow. A new pair may send w' = phi * B_u * T
  // before any response (two-stage admission, Scenario 1, §3.4), so the 4 leave.
  ITEST_CHECK(f["drop.queue_full"] == 6 && f["queued"] + f["encap"] == 4, "queue_full=%llu queued=%llu",
              static_cast<unsigned long long>(f["drop.queue_full"]), static_cast<unsigned long long>(f["queued"]));
  ITEST_CHECK(f["reflected"] == 2 && f["decap"] == 1, "reflected/decap");

  const std::vector<Frame>& vm_out = run.vm_out;
  ITEST_CHECK(vm_out.size() == 1 && vm_out[0] == inner, "VM port got %zu frames, want the inner frame unchanged",
              vm_out.size());
  size_t responses = 0, acks = 0, probes = 0, data_frames = 0;
  for (const Frame& fr : run.fab_out) {
    wire::FrameView v;
    wire::Message m;
    if (wire::parse_frame(fr, v) == wire::WireError::ok && v.shim.next == wire::kNextData) {
      ++data_frames;
      const Frame sent(fr.begin() + static_cast<ptrdiff_t>(v.payload_offset), fr.end());
      ITEST_CHECK(v.shim.pair_id == kPairOut && v.shim.vni == 100 && sent == vm_in[data_frames - 1],
                  "data frame %zu: a1 -> b1, encapsulated unchanged", data_frames);
      continue;
    }
    if (wire::parse_frame(fr, v) != wire::WireError::ok || v.shim.next != wire::kNextControl ||
        wire::decode_message(std::span<const uint8_t>(fr).subspan(v.payload_offset, v.payload_len), m) !=
            wire::WireError::ok) {
      ITEST_CHECK(false, "a fabric frame that is not a uFAB control frame");
      continue;
    }
    ITEST_CHECK(v.outer.dst_ip == kHostB && v.outer.src_ip == 0x0a000001 && v.shim.vni == 100, "outer/shim");
    if (m.type == wire::MsgType::response) {
      ++responses;
      ITEST_CHECK(m.pair_id == kPairIn && v.route.n_labels == 1 && v.route.label[0] == 0 && m.hop[0].phi == 7,
                  "response: the probe's records back on the reply path");
    } else if (m.type == wire::MsgType::finish_ack) {
      ++acks;
    } else if (m.type == wire::MsgType::probe) {
      ++probes;
      ITEST_CHECK(m.pair_id == kPairOut && v.route.n_labels == 1 && v.route.label[0] == 1, "probe on path [1]");
    }
  }
  ITEST_CHECK(responses == 1 && acks == 1 && probes >= 1, "responses=%zu finish_acks=%zu probes=%zu", responses, acks,
              probes);
  ITEST_CHECK(data_frames == f["encap"], "%zu data frames on the fabric", data_frames);
  return conclude(dir, "every bad input counted under its reason, the valid ones handled");
}
