// Tenants added and removed by a reload (pipeline/tenants.hpp), in process
// on a real Edge (one worker; port 0 the VM side, port 1 the fabric). At
// start-up tenant 100 (1 Gb/s, untagged) has local VM a1 and remote VM b1
// on host hB; params.spare_tenants 2, window gating off (a frame leaves at
// once). Each step checks exact counts and rx = queued + dropped + sent +
// absorbed.
//  1. A frame tagged VLAN 20 from c2's address is unknown_vlan: no tenant
//     has VLAN 20.
//  2. Reload: tenant 200 (VLAN 20, 4 Gb/s, class auto) with local VM c2 on
//     port 0 and remote VM d2 on hB. Tenant 200 takes entry 1 (room 2 ->
//     1), class 2 (4 units of the 1 Gb/s the edge started with) in the
//     scheduler, Alg. 1's 4 tokens for c2; VLAN 20 names it. The reply
//     names each change.
//  3. c2's tagged frame to d2 leaves encapsulated with VNI 200 and pair id
//     3 << 16 | 21; fabric data of tenant 200 for c2 reaches port 0 with
//     tag 20; d2's probe is answered. /ufab/tenants-style state: two
//     tenants live.
//  4. Reload back to the start-up file: d2's and c2's pairs are removed
//     (c2 -> d2 finishing), then tenant 200: VLAN 20 unknown again
//     (unknown_vlan), tenant(200) gone. Its entry is still named by the
//     finishing pair.
//  5. Reload adding tenant 300 (VLAN 30) and its VMs: a new entry (2; room
//     1 -> 0). A reload adding tenant 400 as well is refused (room 0, no
//     free entry), nothing applied: tenant 300's state unchanged.
//  6. c2 -> d2's finish leaves and hB acks it; its slot is free, and so is
//     tenant 200's entry: QinQ tenant 400 ([4, 40]) now takes entry 1, and
//     its double-tagged frames leave with VNI 400.
//  7. Tenant 400 removed: [4, 40] is unknown_vlan again.
//  8. One reload re-tags tenant 300 (VLAN 30 -> 31) and gives untagged
//     tenant 100 the VLAN 30 that 300 leaves: both keep their entries,
//     classes and tokens; c3 and a1 change (their pairs start over). Then VLAN 30 names tenant 100 and 31
//     names 300: c3's frames tagged 31 leave with VNI 300, a1's tagged 30
//     with VNI 100, an untagged frame of a1 and a frame of c3 tagged 30 are
//     not classified (unknown_pair), and d3's data reaches port 0 tagged 31.
//  9. A reload re-tagging 300 again (31 -> 32) with more remote VMs than
//     there are pair slots is refused: nothing applied, 31 still names 300.
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "pipeline/stages.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/in_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kHostB = 0x0a000002;
constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a8000b;
constexpr uint32_t kC2 = 0xc0a80201, kD2 = 0xc0a80215;  // tenant 200: c2 (id 3, local), d2 (id 21, on hB)
constexpr uint32_t kC3 = 0xc0a80301, kD3 = 0xc0a80315;  // tenant 300: c3 (id 5), d3 (id 23)
constexpr uint32_t kC4 = 0xc0a80401, kD4 = 0xc0a80415;  // tenant 400: c4 (id 6), d4 (id 24)

// A tenant with VLAN `vlan`, a local VM (id `local`, 192.168.t.1) and a
// remote VM on hB (id `remote`, 192.168.t.21), as YAML lines under
// tenants:, vms: and remote_vms:.
struct TenantLines {
  std::string tenant, local, remote;
};
TenantLines tenant(uint32_t vni, int vlan, double gbps, int local, int remote, int svlan = 0) {
  const std::string t = std::to_string(vni / 100), v = std::to_string(vni);
  const std::string tags = svlan != 0 ? "qinq: [" + std::to_string(svlan) + ", " + std::to_string(vlan) + "]"
                                      : "vlan: " + std::to_string(vlan);
  return {"  - {vni: " + v + ", guarantee_gbps: " + std::to_string(gbps) + ", " + tags + "}\n",
          "  - {name: c" + t + ", id: " + std::to_string(local) + ", tenant: " + v + ", mac: \"02:00:00:00:0c:0" + t +
              "\", ip: 192.168." + t + ".1, port: 0}\n",
          "  - {name: d" + t + ", id: " + std::to_string(remote) + ", tenant: " + v + ", ip: 192.168." + t +
              ".21, host: hB}\n"};
}

std::string config(const std::vector<TenantLines>& more, const std::string& extra_tenant = "") {
  std::string tenants, locals, remotes;
  for (const TenantLines& l : more) {
    tenants += l.tenant;
    locals += l.local;
    remotes += l.remote;
  }
  return R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1, window_gating: false, spare_tenants: 2, spare_pairs: 6}
tenants:
  - {vni: 100, guarantee_gbps: 1}
)" + tenants + extra_tenant +
         R"(vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
)" + locals + R"(hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.0.11, host: hB}
)" + remotes;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "[" + x + "]";
  return s;
}

// What left on the fabric: the data frames' (VNI, pair id), and the control
// messages.
struct FabricOut {
  std::vector<std::pair<uint32_t, uint32_t>> data;
  std::vector<wire::Message> control;
};
FabricOut parse_fabric(const std::vector<rte_mbuf*>& ms) {
  FabricOut out;
  for (rte_mbuf* m : ms) {
    const std::span<const uint8_t> fr(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
    wire::FrameView v;
    if (wire::parse_frame(fr, v) != wire::WireError::ok) continue;
    if (v.shim.next == wire::kNextData) {
      out.data.emplace_back(v.shim.vni, v.shim.pair_id);
    } else if (wire::Message msg;
               wire::decode_message(fr.subspan(v.payload_offset, v.payload_len), msg) == wire::WireError::ok) {
      out.control.push_back(msg);
    }
  }
  return out;
}

// hB's answer to message m (a response to a probe, a finish-ack to a
// finish): its one hop stamped as an idle 10G link (and the finish acked).
Frame answer(wire::Message m, uint32_t vni) {
  const uint8_t flags = wire::kHopStamped | (m.type == wire::MsgType::finish ? wire::kHopAck : 0);
  for (size_t h = 0; h < m.n_hop && h < wire::kMaxHops; ++h)
    m.hop[h] = wire::HopRecord{m.hop[h].w, 0, 0, 0, 4, flags, static_cast<uint8_t>(h)};
  m.hop_index = m.n_hop;
  return control(kHostB, route({0}), wire::reflect(m, kWireUnbound), vni);
}

void run(const std::string& dir) {
  const std::string file = dir + "/edge.yaml";
  write_text(file, config({}));
  EdgeRig r(config({}), "tnt", file);
  pipeline::Edge& e = r.e;
  pipeline::EdgeState& s = r.s;
  PortOut out0(s, 0, "tnt_out0");
  uint64_t fabric_out = 0;
  FabricOut last;
  Nanos now = 1'000'000;
  const auto to_fabric = [&] {
    const std::vector<rte_mbuf*> out = r.fabric_tx();
    last = parse_fabric(out);
    for (rte_mbuf* m : out) rte_pktmbuf_free(m);
    fabric_out += out.size();
    return out.size();
  };
  const auto frames_on = [&](uint16_t port, const std::vector<Frame>& fs) {
    r.receive(port, fs, now);
    now += 1'000'000;
  };
  const auto step = [&] {  // the worker's timers (worker.cpp)
    pipeline::poll_pairs(s, now);
    for (pipeline::TxBuffer& t : s.tx) t.flush();
  };
  const auto reload = [&](const std::string& text) {
    write_text(file, text);
    return e.control.reload(now);
  };
  const auto drops = [&](pipeline::Drop d) { return static_cast<unsigned long long>(s.stats.dropped(d)); };
  const auto balanced = [&](const char* when) {
    out0.drain();
    to_fabric();
    const uint64_t out = out0.count + fabric_out;
    ITEST_CHECK(s.stats.rx() + s.stats.generated == s.queued() + s.stats.dropped() + out + s.stats.absorbed,
                "%s: rx %llu = queued %llu + dropped %llu + sent %llu + absorbed %llu", when,
                static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.queued()),
                static_cast<unsigned long long>(s.stats.dropped()), static_cast<unsigned long long>(out),
                static_cast<unsigned long long>(s.stats.absorbed));
  };
  const auto live_tenants = [&] {
    std::string v;
    for (const edge::TenantCfg& t : e.cfg.tenants)
      if (!t.removed) v += std::to_string(t.vni) + " ";
    return v;
  };
  const TenantLines t200 = tenant(200, 20, 4, 3, 21), t300 = tenant(300, 30, 2, 5, 23), t400 = tenant(400, 40, 1, 6, 24, 4);

  ITEST_CHECK(e.tenant_room == 2 && e.cfg.tenants.size() == 1 && e.cfg.tenants.capacity() >= 3, "start: room %u",
              e.tenant_room);

  // 1.
  frames_on(0, {tagged(vm_frame(kC2, kD2, 1000, 100, 1), 20)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_vlan) == 1, "1: unknown_vlan %llu", drops(pipeline::Drop::unknown_vlan));
  balanced("1");

  // 2. Tenant 200 with c2 and d2.
  pipeline::Control::ReloadResult rr = reload(config({t200}));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[tenant 200 added: guarantee_gbps 4, weight_class 2 (from its guarantee), vlan 20]"
                           "[remote VM d2 added (host hB): 0 pair(s)]"
                           "[local VM c2 added (port 0, worker 0): 1 pair(s)]",
              "2: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  const uint32_t c2d2 = r.pair(3, 21);
  ITEST_CHECK(e.cfg.tenants.size() == 2 && e.tenant_room == 1 && e.cfg.vlan_tenant(20) == 1 &&
                  e.cfg.tenant(200) == &e.cfg.tenants[1] && s.sched.has_tenant(1) && s.sched.tenant_class(1) == 2 &&
                  e.control.guarantee_bps[1] == 4e9 && c2d2 != pipeline::HashTable::kMiss && s.meta[c2d2].tenant == 1 &&
                  s.vm_tokens[1].load() == 4.0,
              "2: tenant 200 in entry 1 (room %u), VLAN 20 -> %d, class %u, c2->d2 in slot %u, tokens %g", e.tenant_room,
              e.cfg.vlan_tenant(20), s.sched.tenant_class(1), c2d2, s.vm_tokens[1].load());
  balanced("2");

  // 3. Tenant 200's frames both ways.
  frames_on(0, {tagged(vm_frame(kC2, kD2, 1000, 100, 2), 20)});
  step();  // the pair's probe
  to_fabric();
  ITEST_CHECK(last.data.size() == 1 && last.data[0] == std::make_pair(200u, 3u << 16 | 21),
              "3: c2 -> d2 leaves with VNI %u, pair 0x%x (%zu data frames)", last.data.empty() ? 0 : last.data[0].first,
              last.data.empty() ? 0 : last.data[0].second, last.data.size());
  // Its probe (the pair's first message) answered: the pair is active on
  // hB's switch, so its removal sends a finish.
  ITEST_CHECK(last.control.size() == 1 && last.control[0].type == wire::MsgType::probe &&
                  last.control[0].pair_id == (3u << 16 | 21),
              "3: c2 -> d2's probe left (%zu control messages)", last.control.size());
  if (last.control.empty()) return;
  frames_on(1, {answer(last.control[0], 200)});
  ITEST_CHECK(s.pairs[c2d2].state() == VmPair::State::active, "3: c2 -> d2 active");
  {
    const Frame inner = vm_frame(kD2, kC2, 2000, 100, 3);
    frames_on(1, {ufab_frame(kHostB, 200, 21u << 16 | 3, route({0}), wire::kNextData, inner),
                  control(kHostB, route({0}), message(wire::MsgType::probe, 21u << 16 | 3, wire::tokens_to_wire(2), {1}, 1), 200)});
    out0.drain();
    const Frame& got = out0.got.empty() ? Frame{} : out0.got.back();
    ITEST_CHECK(out0.got.size() == 1 && got.size() == inner.size() + 4 && got[12] == 0x81 && got[13] == 0x00 &&
                    (got[14] << 8 | got[15]) == 20 && s.stats.decapsulated == 1 && s.stats.reflected == 1,
                "3: d2's data reaches port 0 tagged 20 (%zu frames), probe answered %llu", out0.got.size(),
                static_cast<unsigned long long>(s.stats.reflected));
  }
  ITEST_CHECK(live_tenants() == "100 200 ", "3: live tenants %s", live_tenants().c_str());
  balanced("3");

  // 4. Tenant 200 removed with its VMs.
  rr = reload(config({}));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[remote VM d2 removed: 1 pair(s), 0 queued frame(s) dropped]"
                           "[local VM c2 removed: 0 pair(s), 0 queued frame(s) dropped]"
                           "[tenant 200 removed]",
              "4: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  ITEST_CHECK(e.cfg.vlan_tenant(20) == -1 && e.cfg.tenant(200) == nullptr && e.cfg.tenants[1].removed &&
                  !s.live(c2d2) && s.pairs[c2d2].finish_pending() && live_tenants() == "100 ",
              "4: VLAN 20 -> %d, tenant 200 gone, c2->d2 finishing %d", e.cfg.vlan_tenant(20),
              s.pairs[c2d2].finish_pending());
  frames_on(0, {tagged(vm_frame(kC2, kD2, 1000, 100, 4), 20)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_vlan) == 2, "4: unknown_vlan %llu", drops(pipeline::Drop::unknown_vlan));
  balanced("4");

  // 5. Tenant 300 in a new entry; 400 as well is refused, as is a VLAN
  // given to a running tenant.
  rr = reload(config({t300}));
  ITEST_CHECK(rr.ok && e.cfg.tenants.size() == 3 && e.cfg.tenant(300) == &e.cfg.tenants[2] && e.tenant_room == 0 &&
                  e.cfg.vlan_tenant(30) == 2 && s.sched.tenant_class(2) == 1,
              "5: tenant 300: ok %d %s %s; %zu entries, room %u", rr.ok, rr.error.c_str(), joined(rr.changes).c_str(),
              e.cfg.tenants.size(), e.tenant_room);
  rr = reload(config({t300, t400}));
  ITEST_CHECK(!rr.ok && rr.error == file + ": tenants: 1 tenant(s) to add, room for 0 more (params.spare_tenants: 2 "
                                            "beyond the start-up tenants; a removed tenant's entry is free once its "
                                            "pairs are gone); nothing applied",
              "5: %s", rr.error.c_str());
  ITEST_CHECK(e.cfg.tenants.size() == 3 && live_tenants() == "100 300 " && e.cfg.qinq_tenant(4, 40) == -1,
              "5: nothing applied: %s", live_tenants().c_str());
  frames_on(0, {tagged(vm_frame(kC3, kD3, 1000, 100, 5), 30)});
  to_fabric();
  ITEST_CHECK(last.data.size() == 1 && last.data[0] == std::make_pair(300u, 5u << 16 | 23), "5: c3 -> d3 leaves with VNI 300");
  balanced("5");

  // 6. c2 -> d2's finish acked: tenant 200's entry is free for tenant 400.
  step();
  to_fabric();
  std::vector<wire::Message> fin;
  for (const wire::Message& m : last.control)
    if (m.type == wire::MsgType::finish && m.pair_id == (3u << 16 | 21)) fin.push_back(m);
  ITEST_CHECK(fin.size() == 1, "6: c2 -> d2's finish left (%zu of %zu control messages)", fin.size(), last.control.size());
  if (fin.empty()) return;
  frames_on(1, {answer(fin[0], 200)});
  ITEST_CHECK(!s.pairs[c2d2].finish_pending(), "6: c2 -> d2's finish is done");
  rr = reload(config({t300, t400}));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[tenant 400 added: guarantee_gbps 1, weight_class 0 (from its guarantee), qinq [4, 40]]"
                           "[remote VM d4 added (host hB): 0 pair(s)]"
                           "[local VM c4 added (port 0, worker 0): 1 pair(s)]",
              "6: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  ITEST_CHECK(e.cfg.tenants.size() == 3 && e.cfg.tenant(400) == &e.cfg.tenants[1] && e.cfg.qinq_tenant(4, 40) == 1 &&
                  e.cfg.vlan_tenant(40) == -1 && e.cfg.vlan_tenant(20) == -1 && s.sched.tenant_class(1) == 0 &&
                  live_tenants() == "100 400 300 ",
              "6: QinQ tenant 400 in entry 1 ([4, 40] -> %d); %s", e.cfg.qinq_tenant(4, 40), live_tenants().c_str());
  frames_on(0, {qinq(vm_frame(kC4, kD4, 1000, 100, 6), 4, 40)});
  to_fabric();
  ITEST_CHECK(last.data.size() == 1 && last.data[0] == std::make_pair(400u, 6u << 16 | 24), "6: c4 -> d4 leaves with VNI 400");
  balanced("6");

  // 7. QinQ tenant 400 removed: [4, 40] unknown_vlan again.
  rr = reload(config({t300}));
  ITEST_CHECK(rr.ok && joined(rr.changes).find("[tenant 400 removed]") != std::string::npos && e.cfg.qinq_tenant(4, 40) == -1 &&
                  live_tenants() == "100 300 ",
              "7: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  frames_on(0, {qinq(vm_frame(kC4, kD4, 1000, 100, 7), 4, 40)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_vlan) == 3, "7: unknown_vlan %llu", drops(pipeline::Drop::unknown_vlan));
  balanced("7");

  // 8. Tenant 300: VLAN 30 -> 31; tenant 100 takes VLAN 30, in one reload.
  const uint32_t c3d3 = r.pair(5, 23), a1b1 = r.pair(1, 11);
  const uint32_t e300 = static_cast<uint32_t>(e.cfg.tenant_index(300));
  const double tokens300 = s.vm_tokens[e300].load();
  const auto retagged = [&](int vlan300, bool tag100, const std::string& extra_remotes) {
    std::string text = config({tenant(300, vlan300, 2, 5, 23)});
    if (tag100) text.replace(text.find("{vni: 100, guarantee_gbps: 1}"), 29, "{vni: 100, guarantee_gbps: 1, vlan: 30}");
    return text + extra_remotes;
  };
  rr = reload(retagged(31, true, ""));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[tenant 100 re-tagged: untagged -> vlan 30]"
                           "[tenant 300 re-tagged: vlan 30 -> vlan 31]"
                           "[local VM a1 changed (tags untagged -> vlan 30): 1 pair(s) removed, 0 queued frame(s) dropped]"
                           "[local VM c3 changed (tags vlan 30 -> vlan 31): 1 pair(s) removed, 0 queued frame(s) dropped]"
                           "[local VM a1 re-added (port 0, worker 0): 1 pair(s)]"
                           "[local VM c3 re-added (port 0, worker 0): 1 pair(s)]",
              "8: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  ITEST_CHECK(e.cfg.vlan_tenant(30) == 0 && e.cfg.vlan_tenant(31) == static_cast<int>(e300) &&
                  e.cfg.tenant(300) == &e.cfg.tenants[e300] && e.cfg.tenants[e300].vlan == 31 &&
                  e.cfg.tenants[0].vlan == 30 && e.tenant_room == 0 && s.vm_tokens[e300].load() == tokens300 &&
                  s.sched.tenant_class(e300) == 1 && live_tenants() == "100 300 ",
              "8: VLAN 30 -> %d, 31 -> %d (tenant 300 in entry %u), tokens %g", e.cfg.vlan_tenant(30),
              e.cfg.vlan_tenant(31), e300, s.vm_tokens[e300].load());
  const uint32_t c3d3_new = r.pair(5, 23), a1b1_new = r.pair(1, 11);
  ITEST_CHECK(c3d3_new != pipeline::HashTable::kMiss && c3d3_new != c3d3 && a1b1_new != pipeline::HashTable::kMiss &&
                  a1b1_new != a1b1 && s.meta[c3d3_new].tenant == e300 && s.meta[a1b1_new].tenant == 0,
              "8: new pairs c3->d3 %u (was %u), a1->b1 %u (was %u)", c3d3_new, c3d3, a1b1_new, a1b1);
  balanced("8: reloaded");
  const unsigned long long unknown_pair = drops(pipeline::Drop::unknown_pair), unknown_vlan = drops(pipeline::Drop::unknown_vlan);
  frames_on(0, {tagged(vm_frame(kC3, kD3, 1000, 100, 9), 31), tagged(vm_frame(kA1, kB1, 1000, 100, 10), 30)});
  to_fabric();
  ITEST_CHECK(last.data.size() == 2 && last.data[0] == std::make_pair(300u, 5u << 16 | 23) &&
                  last.data[1] == std::make_pair(100u, 1u << 16 | 11),
              "8: c3 -> d3 (tag 31) with VNI 300, a1 -> b1 (tag 30) with VNI 100: %zu data frames", last.data.size());
  frames_on(0, {vm_frame(kA1, kB1, 1000, 100, 11), tagged(vm_frame(kC3, kD3, 1000, 100, 12), 30)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_pair) == unknown_pair + 2 && drops(pipeline::Drop::unknown_vlan) == unknown_vlan,
              "8: a1 untagged and c3 tagged 30 are unknown_pair (%llu, was %llu; unknown_vlan %llu)",
              drops(pipeline::Drop::unknown_pair), unknown_pair, drops(pipeline::Drop::unknown_vlan));
  {
    out0.drain();
    out0.got.clear();
    const Frame inner = vm_frame(kD3, kC3, 2000, 100, 13);
    frames_on(1, {ufab_frame(kHostB, 300, 23u << 16 | 5, route({0}), wire::kNextData, inner)});
    out0.drain();
    const Frame& got = out0.got.empty() ? Frame{} : out0.got.back();
    ITEST_CHECK(out0.got.size() == 1 && got.size() == inner.size() + 4 && got[12] == 0x81 && got[13] == 0x00 &&
                    (got[14] << 8 | got[15]) == 31,
                "8: d3's data reaches port 0 tagged 31 (%zu frames)", out0.got.size());
  }
  balanced("8");

  // 9. Re-tagged again with 7 more remote VMs of tenant 300 (7 pairs for c3,
  // more than the 6 spare slots): refused, nothing applied.
  std::string many;
  for (int i = 0; i < 7; ++i)
    many += "  - {name: x" + std::to_string(i) + ", id: " + std::to_string(40 + i) + ", tenant: 300, ip: 192.168.3." +
            std::to_string(40 + i) + ", host: hB}\n";
  rr = reload(retagged(32, true, many));
  ITEST_CHECK(!rr.ok && rr.error.find("VM-pair slot(s)") != std::string::npos && rr.changes.empty(),
              "9: refused: ok %d %s", rr.ok, rr.error.c_str());
  ITEST_CHECK(e.cfg.vlan_tenant(31) == static_cast<int>(e300) && e.cfg.vlan_tenant(32) == -1 &&
                  e.cfg.tenants[e300].vlan == 31 && r.pair(5, 23) == c3d3_new,
              "9: nothing applied: VLAN 31 -> %d, 32 -> %d", e.cfg.vlan_tenant(31), e.cfg.vlan_tenant(32));
  balanced("9");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = make_test_dir("ufab_edge_tenants");
  return run_in_process(
      argc, argv, "ufab_edge_tenants", [&] { run(dir); },
      "PASS: tenants added, removed and re-tagged by reloads: VLANs, classes, tokens and VNIs on the wire; a removed "
      "tenant's entry taken again once its pairs are gone; refusals apply nothing; every frame counted");
}
