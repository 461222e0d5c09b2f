// The receiving edge's answer before its first admission round
// (docs/design.md §10, control/token_assignment.hpp provisional_admission):
// one edge whose VM a1 owns 2 tokens (guarantee 2 Gb/s, B_u 1 Gb/s) gets, in
// one burst on its fabric port, probes from five remote pairs towards a1.
// The token period is 1 s and the edge exits 0.5 s after the last frame, so
// no Algorithm 1 round includes them: each response carries phi_alpha / n
// for the n pairs then requesting tokens from a1, or UNBOUND when the request
// is at or below that. Hand-computed (wire units of 1/64 token, rounded):
//   b1 asks 2 (128), n = 1: share 2   -> UNBOUND
//   b2 asks 2,       n = 2: share 1   -> 64
//   b3 asks 2,       n = 3: share 2/3 -> 43 (42.67)
//   b2 finishes: n = 2 (its finish-ack carries no token)
//   b4 asks 2,       n = 3: share 2/3 -> 43
//   b5 asks 0.25 (16), n = 4: share 1/2 -> UNBOUND (16 <= 32)
// Before this, every one of them was answered UNBOUND (each kept its whole
// sender token until the next round).
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <cstdio>
#include <string>
#include <vector>

#include "control/vm_pair.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kHostB = 0x0a000002;  // 10.0.0.2
// Wire pair id: remote VM id << 16 | local VM id (a1 has id 1).
constexpr uint32_t pair_from(uint32_t remote_id) { return remote_id << 16 | 1; }

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  unit_bw_gbps: 1
  token_period_us: 1000000
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
  - {name: b2, id: 3, tenant: 100, ip: 192.168.0.3, host: hB}
  - {name: b3, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}
  - {name: b4, id: 5, tenant: 100, ip: 192.168.0.5, host: hB}
  - {name: b5, id: 6, tenant: 100, ip: 192.168.0.6, host: hB}
)";

Frame probe(uint32_t remote_id, uint32_t phi_wire) {
  return control(kHostB, route({0}), message(wire::MsgType::probe, pair_from(remote_id), phi_wire, {1}, 1), 100);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_adm");
  if (dir.empty()) return 1;
  std::vector<Frame> fab_in;
  fab_in.push_back(probe(2, 128));
  fab_in.push_back(probe(3, 128));
  fab_in.push_back(probe(4, 128));
  fab_in.push_back(control(kHostB, route({0}), message(wire::MsgType::finish, pair_from(3), 128, {1}, 1), 100));
  fab_in.push_back(probe(5, 128));
  fab_in.push_back(probe(6, 16));
  const PcapEdgeRun run = run_edge_on_pcaps(argv[1], dir, "adm", kConfig, {}, fab_in);
  const auto& f = run.final;
  ITEST_CHECK(f.count("reflected") && f.at("reflected") == fab_in.size(), "reflected: want %zu", fab_in.size());

  // Responses in the order the probes came (one burst, one worker).
  const std::vector<std::pair<uint32_t, uint32_t>> want = {
      {pair_from(2), kWireUnbound}, {pair_from(3), 64}, {pair_from(4), 43}, {pair_from(5), 43}, {pair_from(6), kWireUnbound}};
  std::vector<std::pair<uint32_t, uint32_t>> got;
  size_t acks = 0;
  for (const Frame& fr : run.fab_out) {
    wire::FrameView v;
    wire::Message m;
    if (wire::parse_frame(fr, v) != wire::WireError::ok || v.shim.next != wire::kNextControl ||
        wire::decode_message(std::span<const uint8_t>(fr).subspan(v.payload_offset, v.payload_len), m) !=
            wire::WireError::ok)
      continue;
    if (m.type == wire::MsgType::response) got.emplace_back(m.pair_id, m.phi);
    if (m.type == wire::MsgType::finish_ack && m.pair_id == pair_from(3)) ++acks;
  }
  ITEST_CHECK(acks == 1, "finish-acks=%zu", acks);
  ITEST_CHECK(got.size() == want.size(), "%zu responses, want %zu", got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    std::printf("response %zu: pair 0x%08x phi %u (want 0x%08x %u)\n", i, got[i].first, got[i].second, want[i].first,
                want[i].second);
    ITEST_CHECK(got[i] == want[i], "response %zu: pair 0x%08x admitted %u, want %u", i, got[i].first, got[i].second,
                want[i].second);
  }
  return conclude(dir, "answers before the first admission round are phi / n of the receiving VM");
}
