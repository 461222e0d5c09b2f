// Local VMs added, removed and changed by a reload (pipeline/local_vms.hpp),
// in process on a real Edge (one worker) with three net_null ports: port 0
// holds local VM a1, port 1 is the fabric, port 2 is a VM-side port no VM
// names at start-up (kept for a VM that boots later), polled all the same.
// Remote VMs b1, b2 on host hB: pairs a1->b1, a1->b2 (slots and indices 0,
// 1); params.spare_pairs 6 (8 slots), params.spare_local_vms 4. What each
// port sends is read from a ring; each step checks exact counts and
// rx = queued + dropped + sent on ports 0, 1, 2 + absorbed.
//  1. Tenant 100's guarantee goes to 3 Gb/s (3 tokens per VM; the files
//     of the reloads after this say 3, the start-up file 1). a1 sends 2
//     frames to b1 (queued: no path yet); a frame from a2's address on
//     port 2 is unknown_pair.
//  2. Reload: a2 added on port 2. Its pairs a2->b1, a2->b2 take slots and
//     indices 2, 3, its VM id names it (owner worker 0). Its frames on port
//     2 (IPv4 and IPv6) queue in them; a1's frame to a2 is switched to port
//     2; a fabric data frame for a2 is delivered to port 2; probes from b1
//     and b2 asking 2 tokens each are answered, and Alg. 1 (App. E) admits
//     1.5 each: a2 has its tenant's 3 tokens as in force, not the file's
//     start-up 1. On the sender side a1->b1 gets 3 and a2's two pairs 1.5
//     each (the fair share of phi_alpha over the active pairs).
//  3. Reload: a2 moves to port 0 (changed: port 2 -> 0). Its two pairs
//     leave with their 3 queued frames (pair_removed 3, on port 2); its new
//     pairs take slots 4, 5 (indices 4, 5), its entry is 2; its two
//     receiver-side slots are let go (out of the table, requesting nothing).
//     Its frames on port 2 are now unknown_pair, on port 0 they queue; a1's
//     frame to a2 goes to port 0; b1's next probe takes a new slot.
//  4. Reload: a2 removed, a3 added on port 2, b3 added: b3 pairs with a1
//     only (slot 2, index 6: a2's first pairs' slots are free again), a3
//     with b1, b2, b3 (slots 3, 6, 7, indices 7-9), in a2's first entry
//     (1: nothing names it any more, entries.hpp). Fabric data and probes
//     for a2 are unknown_vm; a3's frames queue.
//  5. Refused, nothing applied: four VMs to add with room for three
//     entries (two never used, a2's second entry); a VM on port 7
//     (file:line:col: vms[i].port).
//  6. Reload: b2 comes to this host (remote b2 removed, local b2 added on
//     port 2 in a2's second entry, paired with b1 and b3). a1's frame to b2's address, queued in
//     a1->b2 just before (and cached), is dropped with that pair; the same
//     frame after the reload is switched to port 2.
//
// Last, 40 random reloads (params.window_gating off, so a frame leaves at
// once): each file keeps some of 6 local VMs (each on port 0 or 2, of
// tenant 100 or 200) and some of 16 remote VMs. After each, exactly the
// file's pairs are live (one per local and remote VM of a tenant); a frame
// from each local VM on its port to each remote VM of its tenant leaves
// encapsulated with the pair's wire id; a frame from each local VM to each
// other local VM of its tenant reaches that VM's port; a fabric data frame
// to each local VM reaches its port; frames from VMs the file dropped are
// unknown_pair; every frame is counted.
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "pipeline/stages.hpp"
#include "probe/units.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/in_process.hpp"
#include "tests/integration/ipv6_frames.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kHostB = 0x0a000002;
constexpr uint32_t kA1 = 0xc0a80001, kA2 = 0xc0a80002, kA3 = 0xc0a80003;
uint32_t ip_of_b(int i) { return 0xc0a8000a + static_cast<uint32_t>(i); }  // b_i: 192.168.0.(10 + i)

// Remote VM b_i (id 10 + i, 192.168.0.(10 + i), fd00::(10 + i)) on hB.
std::string b(int i) {
  char ip6[16];
  std::snprintf(ip6, sizeof ip6, "fd00::%x", 10 + i);
  return "  - {name: b" + std::to_string(i) + ", id: " + std::to_string(10 + i) + ", tenant: 100, ip: 192.168.0." +
         std::to_string(10 + i) + ", ip6: \"" + ip6 + "\", host: hB}\n";
}
// Local VM a_i (id i, 192.168.0.i, fd00::i, MAC 02:00:00:00:0a:0i) on `port`.
std::string a(int i, int port) {
  const std::string n = std::to_string(i);
  return "  - {name: a" + n + ", id: " + n + ", tenant: 100, mac: \"02:00:00:00:0a:0" + n + "\", ip: 192.168.0." + n +
         ", ip6: \"fd00::" + n + "\", port: " + std::to_string(port) + "}\n";
}

// Tenant 100's guarantee `gbps` (1 at start-up).
std::string config(const std::string& locals, const std::string& remotes, int gbps = 3) {
  return R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1, spare_pairs: 6, spare_local_vms: 4}
tenants:
  - {vni: 100, guarantee_gbps: )" + std::to_string(gbps) + R"(}
vms:
)" + a(1, 0) + locals +
         R"(hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
)" + remotes;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "[" + x + "]";
  return s;
}

// A data frame of tenant vni from hB for local VM id `to` from remote VM id
// `from`: inner IPv4 from src to dst.
Frame fabric_data(uint32_t from, uint32_t to, uint32_t src, uint32_t dst, uint32_t vni = 100) {
  const Frame inner = vm_frame(src, dst, 2000, 100, 1);
  return ufab_frame(kHostB, vni, from << 16 | to, route({0}), wire::kNextData, std::vector<uint8_t>(inner.begin(), inner.end()));
}

void run(const std::string& dir) {
  const std::string file = dir + "/edge.yaml";
  write_text(file, config("", b(1) + b(2), 1));
  EdgeRig r(config("", b(1) + b(2), 1), "lvm", file);
  pipeline::EdgeState& s = r.s;
  PortOut out0(s, 0, "lvm_out0"), out2(s, 2, "lvm_out2");
  uint64_t fabric_out = 0;
  Nanos now = 1'000'000;
  const auto frames_on = [&](uint16_t port, const std::vector<Frame>& fs) {
    r.receive(port, fs, now);
    now += 1'000'000;
  };
  const auto sent = [&](PortOut& o) { return o.drain(); };
  const auto to_fabric = [&] {
    const std::vector<rte_mbuf*> out = r.fabric_tx();
    for (rte_mbuf* m : out) rte_pktmbuf_free(m);
    fabric_out += out.size();
    return out.size();
  };
  const auto reload = [&](const std::string& locals, const std::string& remotes) {
    write_text(file, config(locals, remotes));
    return r.e.control.reload(now);
  };
  const auto drops = [&](pipeline::Drop d) { return static_cast<unsigned long long>(s.stats.dropped(d)); };
  const auto balanced = [&](const char* when, uint64_t queued) {
    out0.drain();
    out2.drain();
    to_fabric();
    const uint64_t out = out0.count + out2.count + fabric_out;
    ITEST_CHECK(s.queued() == queued && s.stats.rx() + s.stats.generated == s.queued() + s.stats.dropped() + out + s.stats.absorbed,
                "%s: queued %llu (want %llu), rx %llu = queued + dropped %llu + sent %llu + absorbed %llu", when,
                static_cast<unsigned long long>(s.queued()), static_cast<unsigned long long>(queued),
                static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.stats.dropped()),
                static_cast<unsigned long long>(out), static_cast<unsigned long long>(s.stats.absorbed));
  };
  const auto probe = [&](uint32_t from, uint32_t to, double tokens) {
    return control(kHostB, route({0}), message(wire::MsgType::probe, from << 16 | to, wire::tokens_to_wire(tokens), {1}, 1), 100);
  };
  const auto a2_frame6 = [](int bi) {
    return udp6({2, 0, 0, 0, 0x0a, 2}, {2, 0, 0, 0, 0x0b, 0}, 2, static_cast<uint8_t>(10 + bi), 1000, 300);
  };

  ITEST_CHECK(s.pairs.size() == 2 && s.pair_capacity == 8 && r.pair(1, 11) == 0 && r.pair(1, 12) == 1 &&
                  s.vm_ports == std::vector<uint16_t>({0, 2}) && r.e.layout.rx_worker[2] == 0 && r.e.local_vm_room == 4,
              "start: %zu pairs in %u slots, %zu VM ports, port 2 polled by %d, room %u", s.pairs.size(), s.pair_capacity,
              s.vm_ports.size(), r.e.layout.rx_worker[2], r.e.local_vm_room);

  // 1.
  ITEST_CHECK(r.e.control.set_guarantee(100, 3.0).empty(), "1: guarantee 3 Gb/s");
  frames_on(0, {vm_frame(kA1, ip_of_b(1), 1000, 400, 1), vm_frame(kA1, ip_of_b(1), 1000, 400, 2)});
  frames_on(2, {vm_frame(kA2, ip_of_b(1), 1000, 400, 3)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_pair) == 1, "1: unknown_pair %llu", drops(pipeline::Drop::unknown_pair));
  balanced("1", 2);

  // 2. a2 on port 2.
  pipeline::Control::ReloadResult rr = reload(a(2, 2), b(1) + b(2));
  ITEST_CHECK(rr.ok && joined(rr.changes) == "[local VM a2 added (port 2, worker 0): 2 pair(s)]", "2: reload: ok %d %s %s",
              rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  ITEST_CHECK(r.pair(2, 11) == 2 && r.pair(2, 12) == 3 && s.meta[2].global == 2 && s.meta[3].global == 3 &&
                  s.meta[2].local_vm == 1 && s.vm_pairs[1] == std::vector<uint32_t>({2, 3}) &&
                  r.e.layout.local_vm_of(2) == 1 && r.e.layout.vm_owner[1] == 0 && r.e.local_vm_room == 3 &&
                  s.vm_tokens[1].load() == 3.0,
              "2: a2's pairs in slots %u, %u; VM id 2 -> %d; tokens %g", r.pair(2, 11), r.pair(2, 12),
              r.e.layout.local_vm_of(2), s.vm_tokens[1].load());
  frames_on(2, {vm_frame(kA2, ip_of_b(1), 1000, 400, 4), vm_frame(kA2, ip_of_b(1), 1000, 400, 5), a2_frame6(2)});
  ITEST_CHECK(s.sched.backlog_packets(2) == 2 && s.sched.backlog_packets(3) == 1, "2: a2->b1 holds %u, a2->b2 %u",
              s.sched.backlog_packets(2), s.sched.backlog_packets(3));
  frames_on(0, {vm_frame(kA1, kA2, 1000, 200, 6)});
  ITEST_CHECK(sent(out2) == 1 && s.stats.local_delivered == 1, "2: a1 -> a2 switched to port 2 (local_delivered %llu)",
              static_cast<unsigned long long>(s.stats.local_delivered));
  frames_on(1, {fabric_data(11, 2, ip_of_b(1), kA2), probe(11, 2, 2.0), probe(12, 2, 2.0)});
  ITEST_CHECK(sent(out2) == 1 && s.stats.decapsulated == 1 && s.stats.reflected == 2 && to_fabric() == 2 &&
                  s.incoming.size() == 2 && s.incoming[0].local_vm == 1 && s.incoming[1].local_vm == 1,
              "2: fabric data for a2 to port 2 (decapsulated %llu), probes answered %llu, %zu incoming slots",
              static_cast<unsigned long long>(s.stats.decapsulated), static_cast<unsigned long long>(s.stats.reflected),
              s.incoming.size());
  pipeline::publish_tokens(s);
  r.e.control.token_round();
  pipeline::apply_tokens(s);
  ITEST_CHECK(s.in_share[0].admitted.load() == 1.5 && s.in_share[1].admitted.load() == 1.5,
              "2: Alg. 1 admits %g and %g for a2 (want 1.5 each of its 3 tokens)", s.in_share[0].admitted.load(),
              s.in_share[1].admitted.load());
  ITEST_CHECK(s.share[0].assigned.load() == 3.0 && s.share[2].assigned.load() == 1.5 && s.share[3].assigned.load() == 1.5,
              "2: Alg. 1 assigns a1->b1 %g (want 3), a2->b1 %g, a2->b2 %g (want 1.5)", s.share[0].assigned.load(),
              s.share[2].assigned.load(), s.share[3].assigned.load());
  balanced("2", 5);

  // 3. a2 moves to port 0.
  rr = reload(a(2, 0), b(1) + b(2));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[local VM a2 changed (port 2 -> 0): 2 pair(s) removed, 3 queued frame(s) dropped]"
                           "[local VM a2 re-added (port 0, worker 0): 2 pair(s)]",
              "3: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  ITEST_CHECK(drops(pipeline::Drop::pair_removed) == 3 && s.stats.ports[2].drops[size_t(pipeline::Drop::pair_removed)] == 3,
              "3: pair_removed %llu", drops(pipeline::Drop::pair_removed));
  ITEST_CHECK(r.pair(2, 11) == 4 && r.pair(2, 12) == 5 && s.meta[4].global == 4 && s.meta[5].global == 5 &&
                  s.meta[4].local_vm == 2 && !s.live(2) && !s.live(3) && r.e.cfg.vms.size() == 3 && r.e.cfg.vms[1].removed &&
                  r.e.layout.local_vm_of(2) == 2 && s.vm_pairs[1].empty() && r.e.local_vm_room == 2,
              "3: a2's new pairs in slots %u, %u; VM id 2 -> %d", r.pair(2, 11), r.pair(2, 12), r.e.layout.local_vm_of(2));
  {
    const pipeline::IncomingKey k1{kHostB, 100, 11u << 16 | 2}, k2{kHostB, 100, 12u << 16 | 2};
    ITEST_CHECK(s.incoming_tbl.lookup(&k1) == pipeline::HashTable::kMiss &&
                    s.incoming_tbl.lookup(&k2) == pipeline::HashTable::kMiss && s.in_share[0].requested.load() == 0 &&
                    s.in_share[1].requested.load() == 0 && s.in_requesting[1] == 0,
                "3: a2's receiver-side slots let go");
  }
  balanced("3", 2);
  frames_on(2, {vm_frame(kA2, ip_of_b(1), 1000, 400, 7)});
  frames_on(0, {vm_frame(kA2, ip_of_b(1), 1000, 400, 8), vm_frame(kA1, kA2, 1000, 200, 9)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_pair) == 2 && s.sched.backlog_packets(4) == 1 && sent(out0) == 1 && sent(out2) == 0,
              "3: a2 on port 2 unknown (%llu), on port 0 queued (%u); a1 -> a2 to port 0",
              drops(pipeline::Drop::unknown_pair), s.sched.backlog_packets(4));
  frames_on(1, {probe(11, 2, 2.0), fabric_data(11, 2, ip_of_b(1), kA2)});
  ITEST_CHECK(s.incoming.size() == 3 && s.incoming[2].local_vm == 2 && s.stats.reflected == 3 && sent(out0) == 1 &&
                  s.stats.decapsulated == 2,
              "3: b1's probe takes slot 2 (of %zu); fabric data to port 0", s.incoming.size());
  balanced("3, after frames", 3);

  // 4. a2 out, a3 and b3 in.
  rr = reload(a(3, 2), b(1) + b(2) + b(3));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[local VM a2 removed: 2 pair(s), 1 queued frame(s) dropped]"
                           "[remote VM b3 added (host hB): 1 pair(s)]"
                           "[local VM a3 added (port 2, worker 0): 3 pair(s)]",
              "4: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  ITEST_CHECK(r.pair(1, 13) == 2 && s.meta[2].global == 6 && r.pair(3, 11) == 3 && r.pair(3, 12) == 6 &&
                  r.pair(3, 13) == 7 && s.meta[3].global == 7 && s.meta[6].global == 8 && s.meta[7].global == 9 &&
                  s.live_pairs() == 6 && s.spare_slots() == 0 && r.e.layout.local_vm_of(2) == -1 &&
                  r.e.layout.local_vm_of(3) == 1 && r.e.cfg.vms[1].name == "a3" && r.e.local_vm_room == 2,
              "4: a1->b3 in %u, a3's pairs in %u, %u, %u; %zu live", r.pair(1, 13), r.pair(3, 11), r.pair(3, 12),
              r.pair(3, 13), s.live_pairs());
  frames_on(1, {fabric_data(11, 2, ip_of_b(1), kA2), probe(11, 2, 2.0)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_vm) == 2, "4: data and probe for a2 unknown_vm %llu",
              drops(pipeline::Drop::unknown_vm));
  frames_on(2, {vm_frame(kA3, ip_of_b(3), 1000, 400, 10)});
  ITEST_CHECK(s.sched.backlog_packets(7) == 1, "4: a3->b3 queued");
  balanced("4", 3);

  // 5. Refused.
  rr = reload(a(3, 2) + a(4, 2) + a(5, 2) + a(6, 0) + a(7, 0), b(1) + b(2) + b(3));
  ITEST_CHECK(!rr.ok && rr.error == file + ": vms: 4 local VM(s) to add, room for 3 more (params.spare_local_vms: 4 "
                                            "beyond the start-up VMs; a removed VM's entry is free once its pairs are "
                                            "gone); nothing applied",
              "5: %s", rr.error.c_str());
  rr = reload(a(3, 2) + a(4, 7), b(1) + b(2) + b(3));
  ITEST_CHECK(!rr.ok && rr.error == file + ":8:5: vms[2].port 7 does not exist (3 DPDK ports); nothing applied", "5: %s",
              rr.error.c_str());
  ITEST_CHECK(r.e.cfg.vms.size() == 3 && r.e.local_vm_room == 2 && s.live_pairs() == 6, "5: nothing applied");

  // 6. b2 comes here.
  frames_on(0, {vm_frame(kA1, ip_of_b(2), 1000, 400, 11)});
  ITEST_CHECK(s.sched.backlog_packets(1) == 1, "6: a1->b2 queued before");
  const std::string b2_here = "  - {name: b2, id: 12, tenant: 100, mac: \"02:00:00:00:0b:02\", ip: 192.168.0.12, port: 2}\n";
  rr = reload(a(3, 2) + b2_here, b(1) + b(3));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[remote VM b2 removed: 2 pair(s), 1 queued frame(s) dropped]"
                           "[local VM b2 added (port 2, worker 0): 2 pair(s)]",
              "6: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  const uint32_t b2b1 = r.pair(12, 11), b2b3 = r.pair(12, 13);
  ITEST_CHECK(b2b1 != pipeline::HashTable::kMiss && b2b3 != pipeline::HashTable::kMiss && s.live(b2b1) && s.live(b2b3) &&
                  s.meta[b2b1].local_vm == 2 && r.e.cfg.vms[2].name == "b2" && !s.live(r.pair(1, 12)) && s.live_pairs() == 6,
              "6: b2's pairs here in %u, %u (VM %u); a1->b2 %u; %zu live", b2b1, b2b3, s.meta[b2b1].local_vm, r.pair(1, 12),
              s.live_pairs());
  frames_on(0, {vm_frame(kA1, ip_of_b(2), 1000, 400, 12)});
  ITEST_CHECK(sent(out2) == 1 && drops(pipeline::Drop::pair_removed) == 5, "6: a1 -> b2 switched to port 2");
  balanced("6", 3);
}

// Random reloads: local and remote VMs come, go and move between ports.
void random_reloads(const std::string& dir) {
  constexpr int kLocals = 6, kRemotes = 16;
  const auto vni_of = [](int i) { return i % 3 == 0 ? 200u : 100u; };
  const auto local_ip = [&](int i) { return 0xc0a80000u + static_cast<uint32_t>(i + 1); };    // 192.168.0.(i + 1)
  const auto remote_ip = [&](int i) { return 0xc0a80100u + static_cast<uint32_t>(i + 1); };   // 192.168.1.(i + 1)
  const auto text = [&](const std::map<int, int>& locals, const std::vector<int>& remotes) {
    std::string c = R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1, window_gating: false, spare_pairs: 256, spare_local_vms: 1000, spare_remote_vms: 1000}
tenants:
  - {vni: 100, guarantee_gbps: 1}
  - {vni: 200, guarantee_gbps: 1}
vms:
)";
    for (const auto& [i, port] : locals)
      c += "  - {name: l" + std::to_string(i) + ", id: " + std::to_string(1 + i) + ", tenant: " + std::to_string(vni_of(i)) +
           ", mac: \"02:00:00:00:0a:0" + std::to_string(i) + "\", ip: " + edge::ip4_text(local_ip(i)) +
           ", port: " + std::to_string(port) + "}\n";
    c += "hosts:\n  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: 100, paths: [[1]]}\nremote_vms:\n";
    for (const int i : remotes)
      c += "  - {name: r" + std::to_string(i) + ", id: " + std::to_string(100 + i) + ", tenant: " +
           std::to_string(vni_of(i)) + ", ip: " + edge::ip4_text(remote_ip(i)) + ", host: hB}\n";
    return c;
  };
  std::mt19937 rng(7);
  std::map<int, int> locals = {{0, 0}, {1, 2}, {3, 0}};  // local VM -> port
  std::vector<int> remotes = {0, 1, 2, 3};
  const std::string file = dir + "/random.yaml";
  write_text(file, text(locals, remotes));
  EdgeRig r(text(locals, remotes), "lvmrand", file);
  pipeline::EdgeState& s = r.s;
  PortOut out0(s, 0, "lvmr_out0"), out2(s, 2, "lvmr_out2");
  uint64_t fabric_out = 0, unknown = 0;
  Nanos now = 1'000'000;
  const auto on = [&](uint16_t port, std::vector<rte_mbuf*>& ms) {
    for (size_t k = 0; k < ms.size(); k += 32) {
      const auto n = static_cast<uint16_t>(std::min<size_t>(32, ms.size() - k));
      s.stats.ports[port].rx += n;
      if (port == 1)
        pipeline::fabric_frames(s, port, ms.data() + k, n, now);
      else
        pipeline::vm_frames(s, port, ms.data() + k, n, now);
    }
    for (pipeline::TxBuffer& t : s.tx) t.flush();
    ms.clear();
  };
  for (int round = 0; round < 40 && g_failures == 0; ++round) {
    if (round > 0) {
      std::map<int, int> next;
      for (int i = 0; i < kLocals; ++i) {
        if (rng() % 3 == 0) continue;
        const auto was = locals.find(i);
        next[i] = was != locals.end() && rng() % 4 != 0 ? was->second : (rng() % 2 == 0 ? 0 : 2);
      }
      if (next.empty()) next[static_cast<int>(rng() % kLocals)] = 0;
      std::vector<int> next_remotes;
      for (int i = 0; i < kRemotes; ++i)
        if (rng() % 2 == 0) next_remotes.push_back(i);
      // Frames from local VMs this file drops, on their old ports: unknown_pair after the reload.
      std::vector<std::pair<int, int>> dropped;
      for (const auto& [i, port] : locals)
        if (next.count(i) == 0 || next[i] != port) dropped.emplace_back(i, port);
      locals = next;
      remotes = next_remotes;
      write_text(file, text(locals, remotes));
      const pipeline::Control::ReloadResult rr = r.e.control.reload(now);
      ITEST_CHECK(rr.ok, "random %d: reload refused: %s", round, rr.error.c_str());
      for (const auto& [i, port] : dropped) {
        std::vector<rte_mbuf*> ms{r.mbuf(vm_frame(local_ip(i), remote_ip(0), 1000, 64, 1), static_cast<uint16_t>(port))};
        on(static_cast<uint16_t>(port), ms);
        ++unknown;
      }
    }
    // The pairs: exactly one live per (local VM, remote VM) of a tenant.
    size_t want_live = 0;
    std::vector<rte_mbuf*> burst0, burst2, fabric;
    std::vector<uint32_t> expect;  // wire ids of the data frames out, in order: port 0's burst, then port 2's
    std::vector<uint32_t> expect2;
    uint64_t want0 = 0, want2 = 0;  // frames to each VM port: local switching, then decapsulation
    for (const auto& [i, port] : locals) {
      auto& bu = port == 0 ? burst0 : burst2;
      auto& ex = port == 0 ? expect : expect2;
      for (const int j : remotes) {
        if (vni_of(i) != vni_of(j)) continue;
        ++want_live;
        const uint32_t wire_id = static_cast<uint32_t>(1 + i) << 16 | static_cast<uint32_t>(100 + j);
        const uint32_t p = r.pair(static_cast<uint32_t>(1 + i), static_cast<uint32_t>(100 + j));
        ITEST_CHECK(p != pipeline::HashTable::kMiss && s.live(p) && s.meta[p].wire_id == wire_id &&
                        r.e.cfg.vms[s.meta[p].local_vm].id == 1 + i && !r.e.cfg.vms[s.meta[p].local_vm].removed,
                    "random %d: pair l%d -> r%d (slot %u)", round, i, j, p);
        bu.push_back(r.mbuf(vm_frame(local_ip(i), remote_ip(j), 1000, 64, static_cast<uint8_t>(round)), static_cast<uint16_t>(port)));
        ex.push_back(wire_id);
      }
      for (const auto& [k, kport] : locals) {
        if (k == i || vni_of(k) != vni_of(i)) continue;
        bu.push_back(r.mbuf(vm_frame(local_ip(i), local_ip(k), 1000, 64, 2), static_cast<uint16_t>(port)));
        (kport == 0 ? want0 : want2) += 1;
      }
      const int32_t v = r.e.layout.local_vm_of(static_cast<uint32_t>(1 + i));
      ITEST_CHECK(v >= 0 && r.e.cfg.vms[static_cast<size_t>(v)].id == 1 + i && r.e.cfg.vms[static_cast<size_t>(v)].port == port,
                  "random %d: VM id %d -> entry %d", round, 1 + i, v);
      const int j = vni_of(i) == 100 ? 1 : 0;  // a remote VM of its tenant, in the file or not
      const Frame f =
          fabric_data(static_cast<uint32_t>(100 + j), static_cast<uint32_t>(1 + i), remote_ip(j), local_ip(i), vni_of(i));
      fabric.push_back(r.mbuf(f, 1));
      (port == 0 ? want0 : want2) += 1;
    }
    for (int i = 0; i < kLocals; ++i)
      if (locals.count(i) == 0)
        ITEST_CHECK(r.e.layout.local_vm_of(static_cast<uint32_t>(1 + i)) == -1, "random %d: VM id %d names nothing", round, 1 + i);
    ITEST_CHECK(s.live_pairs() == want_live, "random %d: %zu live pairs, want %zu", round, s.live_pairs(), want_live);
    expect.insert(expect.end(), expect2.begin(), expect2.end());
    const uint64_t o0 = out0.count, o2 = out2.count;
    on(0, burst0);
    on(2, burst2);
    on(1, fabric);
    out0.drain();
    out2.drain();
    size_t at = 0;
    for (rte_mbuf* m : r.fabric_tx()) {
      wire::FrameView v;
      const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
      if (wire::parse_frame({d, rte_pktmbuf_data_len(m)}, v) == wire::WireError::ok && v.shim.next == wire::kNextData) {
        ITEST_CHECK(at < expect.size() && v.shim.pair_id == expect[at], "random %d: frame %zu as %08x, want %08x", round, at,
                    v.shim.pair_id, at < expect.size() ? expect[at] : 0);
        ++at;
      }
      ++fabric_out;
      rte_pktmbuf_free(m);
    }
    ITEST_CHECK(at == expect.size() && out0.count - o0 == want0 && out2.count - o2 == want2 &&
                    s.stats.dropped(pipeline::Drop::unknown_pair) == unknown,
                "random %d: %zu data frames out (want %zu); port 0 %llu (want %llu), port 2 %llu (want %llu); "
                "unknown_pair %llu (want %llu)",
                round, at, expect.size(), static_cast<unsigned long long>(out0.count - o0),
                static_cast<unsigned long long>(want0), static_cast<unsigned long long>(out2.count - o2),
                static_cast<unsigned long long>(want2), static_cast<unsigned long long>(s.stats.dropped(pipeline::Drop::unknown_pair)),
                static_cast<unsigned long long>(unknown));
    ITEST_CHECK(s.stats.rx() + s.stats.generated ==
                    fabric_out + out0.count + out2.count + s.queued() + s.stats.dropped() + s.stats.absorbed,
                "random %d: rx %llu + generated %llu = sent %llu + queued %llu + dropped %llu", round,
                static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.stats.generated),
                static_cast<unsigned long long>(fabric_out + out0.count + out2.count),
                static_cast<unsigned long long>(s.queued()), static_cast<unsigned long long>(s.stats.dropped()));
    now += 1'000'000;
  }
  std::printf("random reloads: %zu local VM entries, %zu remote VM entries, %zu pair slots used, %llu frames out\n",
              r.e.cfg.vms.size(), r.e.cfg.remote_vms.size(), s.pairs.size(),
              static_cast<unsigned long long>(fabric_out + out0.count + out2.count));
}

}  // namespace

int main(int argc, char** argv) {
  char tmpl[] = "/tmp/ufab_edge_lvm.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const int rc = run_in_process(argc, argv, "ufab_edge_local_vms", [&] {
    run(dir);
    random_reloads(dir);
  },
                                "PASS: local VMs added, removed, moved between ports and from the remote list, and refused at "
                                "runtime; every frame counted",
                                3);
  std::remove((dir + "/edge.yaml").c_str());
  std::remove((dir + "/random.yaml").c_str());
  rmdir(dir.c_str());
  return rc;
}
