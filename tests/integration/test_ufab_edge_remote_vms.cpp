// Remote VMs added, removed and moved by a reload (pipeline/remote_vms.hpp),
// in process on a real Edge (one worker). Local VMs a1 and a2 of tenant 100
// (port 0); remote VMs b1, b2 on host hB at start: pairs a1->b1, a1->b2,
// a2->b1, a2->b2 (slots and indices 0..3); params.spare_pairs 6 (10 slots),
// params.spare_remote_vms 8. Each step checks the exact counts and
// rx = queued + dropped + what waits in port 0's TX buffer (ARP answers):
//  1. a1 sends 3 frames to b1, 2 to b2; a2 1 to b2; a1 1 to 192.168.0.13
//     (no VM yet: unknown_pair) and asks ARP for .13 (arp_unanswered).
//  2. Reload: b2 removed, b3 added. b2's two pairs leave with their 3
//     queued frames (drop.pair_removed 3), b1's 3 stay; b3's pairs take
//     slots 4 and 5 (indices 4, 5). Now a1's frames to b2 (IPv4 and IPv6)
//     are unknown_pair, those to b3 (IPv4 and IPv6) queue in its pair,
//     ARP for .13 is answered with b3's MAC, ARP for .12 is not.
//  3. Reload: b1 moves to hC. Its pairs leave with b1's 3 frames; its new
//     pairs (indices 6, 7) take the slots b2's pairs freed (their finish
//     done), on host hC, and its new entry is b2's (entries.hpp: nothing
//     names it any more); a1's next frames to b1 queue there.
//  4. Reloads that need more room are refused and apply nothing: 9 VMs to
//     add with room for 8 entries (7 never used, and b1's first entry,
//     which no slot names any more); 4 VMs (8 pairs) with 6 slots left.
//  5. Reload: b4 added, in the 2 slots b1's old pairs freed; the same file
//     again changes nothing.
//  6. Hosts: with hB's path 0 drained and b4 removed, one reload removes
//     host hC, adds host hD (two paths, 10.0.0.4, base RTT 50 us), moves b1
//     from hC to hD, adds b5 on hD and b6 on hB: hD's routes and address
//     are in the worker's tables at index 2 (hC's entry stays, its address
//     out, and a drain of it is refused), b1's and b5's pairs are on hD
//     with its RTT, b6's pairs have hB's path 0 drained as b3's.
//  7. Host hB changes (base RTT 200 us, a second path): refused while b6's
//     pairs would need more slots than there are; without b6, hB is
//     removed and added anew in hC's old entry (index 1: nothing names it
//     any more, entries.hpp; two routes), b3's pairs start over on it
//     (T 200 us, no drained path; its 6 queued frames dropped).
//
// And the receiver side (fabric_rx.cpp): with params.max_incoming 2 and
// idle_finish_ms 1, probes from b1 and b2 take the two slots and b3's is
// dropped (incoming_full); once b1 finished and stayed silent for 1 ms,
// b3's next probe takes b1's slot (incoming_reused 1; b1's key gone, the
// slot's VM as the control lcore reads it), and Alg. 1's next round admits
// it; b1 probing again is then refused. Every probe and finish is
// answered or dropped.
//
// Last, 60 random reloads (params.window_gating off, so a frame leaves at
// once): each file keeps some of 5 hosts and some of 40 remote VMs of two
// tenants, each VM on one of the hosts kept. After each, every remote VM of
// the file has exactly one live pair per local VM of its tenant, on its
// host, and nothing else is live; the worker's hosts by address are exactly
// the file's; a frame from each local VM to each remote VM of its tenant
// leaves at once, encapsulated towards that VM's host with the pair's wire
// id, and a frame to a VM the file dropped is unknown_pair; every frame is
// counted (rx + generated = tx + queued + dropped).
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_mbuf.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "pipeline/stages.hpp"
#include "probe/units.hpp"
#include "tests/integration/arp_frames.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/in_process.hpp"
#include "tests/integration/ipv6_frames.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kA2 = 0xc0a80002;
uint32_t ip_of_b(int i) { return 0xc0a8000a + static_cast<uint32_t>(i); }  // b_i: 192.168.0.(10 + i)

// Remote VM b_i (id 10 + i, 192.168.0.(10 + i), fd00::(10 + i), MAC 02:00:00:00:0b:0i) on host h.
std::string b(int i, const char* h) {
  const std::string n = std::to_string(i);
  char ip6[16];
  std::snprintf(ip6, sizeof ip6, "fd00::%x", 10 + i);
  return "  - {name: b" + n + ", id: " + std::to_string(10 + i) + ", tenant: 100, mac: \"02:00:00:00:0b:0" + n +
         "\", ip: 192.168.0." + std::to_string(10 + i) + ", ip6: \"" + ip6 + "\", host: " + h + "}\n";
}

const char* kHD = "  - {name: hD, ip: 10.0.0.4, mac: \"02:00:00:00:00:04\", base_rtt_us: 50, paths: [[3], [4]]}\n";

std::string config(const std::string& remotes, const std::string& more_hosts = "", bool with_hc = true) {
  return R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1, spare_pairs: 6, spare_remote_vms: 8}
tenants:
  - {vni: 100, guarantee_gbps: 1}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, ip6: "fd00::1", port: 0}
  - {name: a2, id: 2, tenant: 100, mac: "02:00:00:00:0a:02", ip: 192.168.0.2, ip6: "fd00::2", port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
)" + std::string(with_hc ? "  - {name: hC, ip: 10.0.0.3, mac: \"02:00:00:00:00:03\", base_rtt_us: 100, paths: [[2]]}\n" : "") +
         more_hosts + "remote_vms:\n" + remotes;
}

const Mac kMacA1 = {2, 0, 0, 0, 0x0a, 1};

// a1's IPv6 datagram (a1 is fd00::1, b_i fd00::(10 + i): ipv6_frames.hpp's fd00()) to b_i, n bytes of data.
Frame udp6_a1_to_b(int i, size_t n) { return udp6(kMacA1, {2, 0, 0, 0, 0x0b, 0}, 1, static_cast<uint8_t>(10 + i), 1000, n); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "[" + x + "]";
  return s;
}

void run(const std::string& dir) {
  const std::string file = dir + "/edge.yaml";
  write_text(file, config(b(1, "hB") + b(2, "hB")));
  EdgeRig r(config(b(1, "hB") + b(2, "hB")), "rvm", file);
  pipeline::EdgeState& s = r.s;
  Nanos now = 1'000'000;
  const auto burst = [&](const std::vector<Frame>& fs) {
    std::vector<rte_mbuf*> ms;
    for (const Frame& f : fs) ms.push_back(r.mbuf(f, 0));
    s.stats.ports[0].rx += ms.size();  // as poll_port counts them
    pipeline::vm_frames(s, 0, ms.data(), static_cast<uint16_t>(ms.size()), now);
    now += 1'000'000;
  };
  const auto reload = [&](const std::string& remotes, const std::string& more_hosts = "", bool with_hc = true) {
    write_text(file, config(remotes, more_hosts, with_hc));
    return r.e.control.reload(now);
  };
  const auto drops = [&](pipeline::Drop d) { return static_cast<unsigned long long>(s.stats.dropped(d)); };
  const auto balanced = [&](const char* when, uint64_t queued) {
    const uint64_t pending = s.tx[0].pending();
    ITEST_CHECK(s.queued() == queued && s.stats.rx() == s.queued() + s.stats.dropped() + pending,
                "%s: queued %llu (want %llu), rx %llu = queued + dropped %llu + %llu in port 0's TX buffer", when,
                static_cast<unsigned long long>(s.queued()), static_cast<unsigned long long>(queued),
                static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.stats.dropped()),
                static_cast<unsigned long long>(pending));
  };
  const auto slot_of = [&](uint32_t local, int i) { return r.pair(local, static_cast<uint32_t>(10 + i)); };
  ITEST_CHECK(s.pairs.size() == 4 && s.pair_capacity == 10 && slot_of(1, 1) == 0 && slot_of(1, 2) == 1 &&
                  slot_of(2, 1) == 2 && slot_of(2, 2) == 3,
              "start: %zu pairs in %u slots", s.pairs.size(), s.pair_capacity);

  // 1.
  burst({vm_frame(kA1, ip_of_b(1), 1000, 100, 1), vm_frame(kA1, ip_of_b(1), 1000, 100, 2),
         vm_frame(kA1, ip_of_b(1), 1000, 100, 3), vm_frame(kA1, ip_of_b(2), 1000, 200, 4),
         vm_frame(kA1, ip_of_b(2), 1000, 200, 5), vm_frame(kA2, ip_of_b(2), 1000, 300, 6),
         vm_frame(kA1, ip_of_b(3), 1000, 50, 7), who_has(kMacA1, 1, 13)});
  ITEST_CHECK(drops(pipeline::Drop::unknown_pair) == 1 && drops(pipeline::Drop::arp_unanswered) == 1,
              "1: unknown_pair %llu, arp_unanswered %llu", drops(pipeline::Drop::unknown_pair),
              drops(pipeline::Drop::arp_unanswered));
  balanced("1", 6);

  // 2. b2 out, b3 in.
  pipeline::Control::ReloadResult rr = reload(b(1, "hB") + b(3, "hB"));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[remote VM b2 removed: 2 pair(s), 3 queued frame(s) dropped]"
                           "[remote VM b3 added (host hB): 2 pair(s)]",
              "2: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  const uint32_t a1b3 = slot_of(1, 3), a2b3 = slot_of(2, 3);
  ITEST_CHECK(drops(pipeline::Drop::pair_removed) == 3 && s.stats.ports[0].drops[size_t(pipeline::Drop::pair_removed)] == 3,
              "2: pair_removed %llu", drops(pipeline::Drop::pair_removed));
  ITEST_CHECK(!s.live(1) && !s.live(3) && s.live(0) && s.live(2) && a1b3 == 4 && a2b3 == 5 && s.meta[4].global == 4 &&
                  s.meta[5].global == 5 && s.live_pairs() == 4 && s.spare_slots() == 4,
              "2: slots: b3 in %u, %u; live %zu, spare %zu", a1b3, a2b3, s.live_pairs(), s.spare_slots());
  ITEST_CHECK(s.vm_pairs[0] == std::vector<uint32_t>({0, 4}) && s.vm_pairs[1] == std::vector<uint32_t>({2, 5}),
              "2: Alg. 1's pairs per VM");
  ITEST_CHECK(r.e.cfg.remote_vms.size() == 3 && r.e.cfg.remote_vms[1].removed && r.e.remote_vm_room == 7,
              "2: entries %zu, room %u", r.e.cfg.remote_vms.size(), r.e.remote_vm_room);
  balanced("2", 3);
  const size_t f4 = 400, f6 = 500;
  burst({vm_frame(kA1, ip_of_b(2), 1000, 60, 8), vm_frame(kA1, ip_of_b(2), 1000, 60, 9),
         vm_frame(kA1, ip_of_b(3), 1000, f4, 10), vm_frame(kA1, ip_of_b(3), 1000, f4, 11),
         vm_frame(kA1, ip_of_b(3), 1000, f4, 12), vm_frame(kA1, ip_of_b(3), 1000, f4, 13),
         vm_frame(kA2, ip_of_b(3), 1000, 70, 14), udp6_a1_to_b(3, f6), udp6_a1_to_b(2, 80),
         who_has(kMacA1, 1, 13), who_has(kMacA1, 1, 12)});
  const uint64_t want_b3 = 4 * (vm_frame(kA1, ip_of_b(3), 1000, f4, 10).size() + s.encap_bytes(a1b3, -1)) +
                           udp6_a1_to_b(3, f6).size() + s.encap_bytes(a1b3, -1);
  ITEST_CHECK(s.sched.backlog_bytes(a1b3) == want_b3 && s.sched.backlog_packets(a1b3) == 5 &&
                  s.sched.backlog_packets(a2b3) == 1,
              "2: a1->b3 holds %llu bytes (want %llu), %u frames; a2->b3 %u", (unsigned long long)s.sched.backlog_bytes(a1b3),
              (unsigned long long)want_b3, s.sched.backlog_packets(a1b3), s.sched.backlog_packets(a2b3));
  ITEST_CHECK(drops(pipeline::Drop::unknown_pair) == 4 && s.stats.arp_replied == 1 &&
                  drops(pipeline::Drop::arp_unanswered) == 2 && s.tx[0].pending() == 1,
              "2: unknown_pair %llu (want 4), arp_replied %llu (want 1), arp_unanswered %llu (want 2)",
              drops(pipeline::Drop::unknown_pair), (unsigned long long)s.stats.arp_replied,
              drops(pipeline::Drop::arp_unanswered));
  balanced("2, after a burst", 9);

  // 3. b1 moves to hC.
  rr = reload(b(1, "hC") + b(3, "hB"));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[remote VM b1 changed (host hB -> hC): 2 pair(s) removed, 3 queued frame(s) dropped]"
                           "[remote VM b1 re-added (host hC): 2 pair(s)]",
              "3: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
  const uint32_t a1b1 = slot_of(1, 1), a2b1 = slot_of(2, 1);
  ITEST_CHECK(((a1b1 == 1 && a2b1 == 3) || (a1b1 == 3 && a2b1 == 1)) && s.live(a1b1) && s.live(a2b1) &&
                  s.meta[a1b1].host == 1 && s.meta[a2b1].host == 1 && s.meta[a1b1].global == 6 &&
                  s.meta[a2b1].global == 7 && !s.live(0) && !s.live(2) && s.pairs.size() == 6,
              "3: b1's pairs in slots %u, %u (want b2's old 1 and 3), on host %u", a1b1, a2b1, s.meta[a1b1].host);
  ITEST_CHECK(drops(pipeline::Drop::pair_removed) == 6, "3: pair_removed %llu", drops(pipeline::Drop::pair_removed));
  ITEST_CHECK(s.meta[a1b1].remote_vm == 1 && r.e.cfg.remote_vms.size() == 3 && r.e.cfg.remote_vms[1].name == "b1" &&
                  !r.e.cfg.remote_vms[1].removed && r.e.cfg.remote_vms[0].removed && r.e.remote_vm_room == 7,
              "3: b1's new entry is b2's old one (%u); %zu entries", s.meta[a1b1].remote_vm, r.e.cfg.remote_vms.size());
  balanced("3", 6);
  burst({vm_frame(kA1, ip_of_b(1), 1000, 100, 15), vm_frame(kA1, ip_of_b(1), 1000, 100, 16)});
  ITEST_CHECK(s.sched.backlog_packets(a1b1) == 2 && drops(pipeline::Drop::unknown_pair) == 4,
              "3: a1->b1 on hC holds %u frames", s.sched.backlog_packets(a1b1));
  balanced("3, after a burst", 8);

  // 4. Not enough room: nothing applied.
  const std::string three = b(1, "hC") + b(3, "hB");
  std::string nine = three;
  for (int i = 4; i <= 9; ++i) nine += b(i, "hB");
  for (int i = 10; i <= 12; ++i)
    nine += "  - {name: b" + std::to_string(i) + ", id: " + std::to_string(10 + i) + ", tenant: 100, ip: 192.168.0." +
            std::to_string(10 + i) + ", host: hB}\n";
  rr = reload(nine);
  // Room: b1's first entry (removed, no slot names it: entries.hpp) and the
  // 7 left of spare_remote_vms.
  ITEST_CHECK(!rr.ok && rr.error == file + ": remote_vms: 9 VM(s) to add, room for 8 more (params.spare_remote_vms: 8 "
                                           "beyond the start-up VMs; a removed VM's entry is free once its pairs are "
                                           "gone); nothing applied",
              "4: %s", rr.error.c_str());
  rr = reload(three + b(4, "hB") + b(5, "hB") + b(6, "hB") + b(7, "hB"));
  ITEST_CHECK(!rr.ok && rr.error == file + ": remote_vms: worker 0 needs 8 VM-pair slot(s), has 6 (params.spare_pairs: "
                                           "6 per worker; a removed pair's slot frees once its finish is done); "
                                           "nothing applied",
              "4: %s", rr.error.c_str());
  ITEST_CHECK(r.e.cfg.remote_vms.size() == 3 && r.e.remote_vm_room == 7 && s.pairs.size() == 6 && s.live_pairs() == 4 &&
                  slot_of(1, 4) == pipeline::HashTable::kMiss,
              "4: refused reloads applied nothing: %zu entries, room %u, %zu slots, %zu live", r.e.cfg.remote_vms.size(), r.e.remote_vm_room, s.pairs.size(), s.live_pairs());
  balanced("4", 8);

  // 5. b4 in the slots b1's old pairs freed.
  rr = reload(three + b(4, "hB"));
  const uint32_t a1b4 = slot_of(1, 4), a2b4 = slot_of(2, 4);
  ITEST_CHECK(rr.ok && joined(rr.changes) == "[remote VM b4 added (host hB): 2 pair(s)]" &&
                  ((a1b4 == 0 && a2b4 == 2) || (a1b4 == 2 && a2b4 == 0)) && s.live_pairs() == 6 && s.pairs.size() == 6 &&
                  s.free_pairs.empty() && s.spare_slots() == 4,
              "5: reload %s %s; b4 in %u, %u", rr.error.c_str(), joined(rr.changes).c_str(), a1b4, a2b4);
  rr = reload(three + b(4, "hB"));
  ITEST_CHECK(rr.ok && rr.changes.empty(), "5: the same file again: %s", joined(rr.changes).c_str());
  burst({vm_frame(kA2, ip_of_b(4), 1000, 90, 17)});
  ITEST_CHECK(s.sched.backlog_packets(a2b4) == 1, "5: a2->b4 holds %u frames", s.sched.backlog_packets(a2b4));
  balanced("5", 9);

  // 6. Hosts. b4 goes first, so that its slots are free for the reload
  // after (6 pairs to make: 2 free, 4 never used).
  size_t h = 0;
  ITEST_CHECK(r.e.control.set_drained("hB", "0", true, &h).empty() && h == 0, "6: drain hB path 0");
  rr = reload(three);  // b4 out: its 2 slots free at the next reload
  ITEST_CHECK(rr.ok && joined(rr.changes) == "[remote VM b4 removed: 2 pair(s), 1 queued frame(s) dropped]",
              "6: b4 out: %s %s", rr.error.c_str(), joined(rr.changes).c_str());
  rr = reload(b(1, "hD") + b(3, "hB") + b(5, "hD") + b(6, "hB"), kHD, false);
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[host hC removed][host hD added (2 path(s))]"
                           "[remote VM b1 changed (host hC -> hD): 2 pair(s) removed, 2 queued frame(s) dropped]"
                           "[remote VM b1 re-added (host hD): 2 pair(s)][remote VM b5 added (host hD): 2 pair(s)]"
                           "[remote VM b6 added (host hB): 2 pair(s)]",
              "6: hosts: %s %s", rr.error.c_str(), joined(rr.changes).c_str());
  const uint32_t kHdIp = 0x0a000004, kHcIp = 0x0a000003;
  ITEST_CHECK(s.hosts.size() == 3 && s.host_by_ip.lookup(&kHdIp) == 2 && s.host_by_ip.lookup(&kHcIp) == pipeline::HashTable::kMiss &&
                  s.hosts[2].routes.size() == 2 && s.hosts[2].outer.dst_ip == kHdIp && r.e.cfg.hosts[1].removed &&
                  r.e.host_room == 63 && r.e.control.drained.size() == 3,
              "6: worker's hosts %zu, hD at %u", s.hosts.size(), s.host_by_ip.lookup(&kHdIp));
  for (const int i : {1, 5})
    for (const uint32_t local : {1u, 2u}) {
      const uint32_t p = slot_of(local, i);
      ITEST_CHECK(p != pipeline::HashTable::kMiss && s.live(p) && s.meta[p].host == 2 && s.pairs[p].base_rtt() == 50'000,
                  "6: a%u->b%d on hD (host %u)", local, i, p == pipeline::HashTable::kMiss ? 99 : s.meta[p].host);
    }
  for (const uint32_t local : {1u, 2u}) {
    const uint32_t p6 = slot_of(local, 6), p3 = slot_of(local, 3);
    ITEST_CHECK(s.meta[p6].host == 0 && s.pairs[p6].path_drained(0) && s.pairs[p3].path_drained(0),
                "6: a%u->b6 on hB with path 0 drained", local);
  }
  ITEST_CHECK(s.live_pairs() == 8 && s.pairs.size() == 10 && s.spare_slots() == 0, "6: %zu live pairs, %zu spare",
              s.live_pairs(), s.spare_slots());
  ITEST_CHECK(r.e.control.set_drained("hC", "0", true, &h) == "no host 'hC' (a name from hosts: or an index below 3)",
              "6: drain of the removed host");
  ITEST_CHECK(drops(pipeline::Drop::pair_removed) == 9, "6: pair_removed %llu", drops(pipeline::Drop::pair_removed));
  balanced("6", 6);

  // 7. hB changes (base RTT 100 -> 200 us, a second path): removed and
  // added anew, its VMs' pairs made again towards the new entry. With b6
  // still on it there is no room (4 pairs to make, 2 slots: b1's old
  // pairs'), and nothing is applied; without b6, b3's pairs start over.
  const auto with_new_hb = [&](const std::string& remotes) {
    std::string t = config(remotes, kHD, false);
    const std::string hb = "base_rtt_us: 100, paths: [[1]]}";
    t.replace(t.find(hb), hb.size(), "base_rtt_us: 200, paths: [[1], [5]]}");
    write_text(file, t);
    return r.e.control.reload(now);
  };
  const uint32_t kHbIp = 0x0a000002;
  rr = with_new_hb(b(1, "hD") + b(3, "hB") + b(5, "hD") + b(6, "hB"));
  ITEST_CHECK(!rr.ok && rr.error.find("remote_vms: worker 0 needs 4 VM-pair slot(s), has 2") != std::string::npos &&
                  s.host_by_ip.lookup(&kHbIp) == 0 && r.e.cfg.hosts.size() == 3 && s.live_pairs() == 8,
              "7: no room: %s", rr.error.c_str());
  rr = with_new_hb(b(1, "hD") + b(3, "hB") + b(5, "hD"));
  ITEST_CHECK(rr.ok && joined(rr.changes) ==
                           "[host hB changed (base_rtt_us 100 -> 200, paths [[1]] -> [[1], [5]])]"
                           "[host hB re-added (2 path(s))]"
                           "[remote VM b3 changed (host hB changed): 2 pair(s) removed, 6 queued frame(s) dropped]"
                           "[remote VM b6 removed: 2 pair(s), 0 queued frame(s) dropped]"
                           "[remote VM b3 re-added (host hB): 2 pair(s)]",
              "7: hB changed: %s %s", rr.error.c_str(), joined(rr.changes).c_str());
  for (const uint32_t local : {1u, 2u}) {
    const uint32_t p = slot_of(local, 3);
    ITEST_CHECK(p != pipeline::HashTable::kMiss && s.live(p) && s.meta[p].host == 1 && s.pairs[p].base_rtt() == 200'000 &&
                    !s.pairs[p].path_drained(0),
                "7: a%u->b3 on hB's new entry (host %u, T %llu ns), its old drain gone", local, s.meta[p].host,
                static_cast<unsigned long long>(s.pairs[p].base_rtt()));
  }
  // hB's new entry is hC's (removed in 6, its VMs' pairs gone since): no entry appended.
  ITEST_CHECK(s.hosts.size() == 3 && s.host_by_ip.lookup(&kHbIp) == 1 && s.hosts[1].routes.size() == 2 &&
                  s.hosts[1].outer.dst_ip == kHbIp && r.e.cfg.hosts[0].removed && !r.e.cfg.hosts[1].removed &&
                  r.e.cfg.hosts[1].name == "hB" && r.e.control.drained.size() == 3 && r.e.control.drained[1].size() == 2 &&
                  r.e.host_room == 63 && drops(pipeline::Drop::pair_removed) == 15,
              "7: hB at %u with %zu routes; pair_removed %llu", s.host_by_ip.lookup(&kHbIp), s.hosts[1].routes.size(),
              drops(pipeline::Drop::pair_removed));
  burst({vm_frame(kA1, ip_of_b(3), 1000, 100, 18)});
  ITEST_CHECK(s.sched.backlog_packets(slot_of(1, 3)) == 1, "7: a1->b3 queues again");
  balanced("7", 1);
}

// Receiver-side pair slots reused once their pair finished and went silent.
void incoming_slots() {
  std::string c = config(b(1, "hB"));
  c.replace(c.find("spare_remote_vms: 8}"), 20, "spare_remote_vms: 8, max_incoming: 2, idle_finish_ms: 1}");
  EdgeRig r(c, "rvmin");
  pipeline::EdgeState& s = r.s;
  constexpr uint32_t kHostB = 0x0a000002;
  const auto from_b = [](int i) { return static_cast<uint32_t>(10 + i) << 16 | 1; };  // b_i -> a1
  const auto send = [&](wire::MsgType t, int i, Nanos now) {
    const uint32_t phi = t == wire::MsgType::probe ? wire::tokens_to_wire(0.5) : 0;
    rte_mbuf* m = r.mbuf(control(kHostB, route({0}), message(t, from_b(i), phi, {1}, 1), 100), 1);
    s.stats.ports[1].rx += 1;
    pipeline::fabric_frames(s, 1, &m, 1, now);
  };
  const auto full = [&] { return static_cast<unsigned long long>(s.stats.dropped(pipeline::Drop::incoming_full)); };
  send(wire::MsgType::probe, 1, 1'000'000);
  send(wire::MsgType::probe, 2, 1'000'000);
  send(wire::MsgType::probe, 3, 1'000'000);
  ITEST_CHECK(s.incoming.size() == 2 && full() == 1, "in: %zu slots, incoming_full %llu (want 2, 1)", s.incoming.size(), full());
  send(wire::MsgType::finish, 1, 1'500'000);
  send(wire::MsgType::probe, 3, 2'000'000);  // b1 silent for 0.5 ms only
  ITEST_CHECK(full() == 2 && s.stats.incoming_reused == 0, "in: reused %llu before 1 ms of silence",
              static_cast<unsigned long long>(s.stats.incoming_reused));
  send(wire::MsgType::probe, 3, 2'500'000);
  const pipeline::IncomingKey b1{kHostB, 100, from_b(1)}, b3{kHostB, 100, from_b(3)};
  ITEST_CHECK(full() == 2 && s.stats.incoming_reused == 1 && s.incoming[0].wire_id == from_b(3) &&
                  s.incoming_tbl.lookup(&b3) == 0 && s.incoming_tbl.lookup(&b1) == pipeline::HashTable::kMiss &&
                  s.in_share[0].local_vm.load() == 0 && s.in_share[0].requested.load() == 0.5 &&
                  s.in_share[0].admitted.load() == pipeline::kTokenNotYetAdmitted,
              "in: b3 in b1's slot: reused %llu, slot 0 wire id %x, requested %g", 
              static_cast<unsigned long long>(s.stats.incoming_reused), s.incoming[0].wire_id,
              s.in_share[0].requested.load());
  r.e.control.token_round();
  // Alg. 1 (App. E) for a1 (1 token): b2 and b3 ask 0.5 each, both get it.
  ITEST_CHECK(s.in_share[0].admitted.load() == 0.5 && s.in_share[1].admitted.load() == 0.5,
              "in: admitted %g, %g (want 0.5 each)", s.in_share[0].admitted.load(), s.in_share[1].admitted.load());
  send(wire::MsgType::probe, 1, 2'500'000);
  ITEST_CHECK(full() == 3, "in: b1 back, no slot: incoming_full %llu", full());
  const std::vector<rte_mbuf*> out = r.fabric_tx();
  for (rte_mbuf* m : out) rte_pktmbuf_free(m);
  ITEST_CHECK(s.stats.rx() == 7 && out.size() == 4 && s.stats.dropped() == 3,
              "in: 7 received = %zu answered + %llu dropped", out.size(),
              static_cast<unsigned long long>(s.stats.dropped()));
}

// Random reloads: hosts and remote VMs come and go; the tables follow the file.
void random_reloads(const std::string& dir) {
  constexpr int kHosts = 5, kVms = 40;
  const auto host_line = [](int h) {
    const std::string n = std::to_string(h);
    return "  - {name: h" + n + ", ip: 10.0.1." + std::to_string(h + 1) + ", mac: \"02:00:00:00:01:0" + n +
           "\", base_rtt_us: 100, paths: [[" + std::to_string(h + 1) + "]]}\n";
  };
  const auto vni_of = [](int i) { return i % 3 == 0 ? 200u : 100u; };
  const auto vm_ip = [&](int i) { return (vni_of(i) == 100 ? 0xc0a80100u : 0xc0a80200u) + static_cast<uint32_t>(i + 1); };
  const auto text = [&](const std::map<int, int>& vms, const std::set<int>& hosts) {
    std::string c = R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1, window_gating: false, spare_pairs: 128, spare_remote_vms: 4000, spare_hosts: 400}
tenants:
  - {vni: 100, guarantee_gbps: 1}
  - {vni: 200, guarantee_gbps: 1}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 2, tenant: 100, mac: "02:00:00:00:0a:02", ip: 192.168.0.2, port: 0}
  - {name: a3, id: 3, tenant: 200, mac: "02:00:00:00:0a:03", ip: 192.168.0.3, port: 0}
hosts:
)";
    for (const int h : hosts) c += host_line(h);
    c += "remote_vms:\n";
    for (const auto& [i, h] : vms) {
      const uint32_t ip = vm_ip(i);
      c += "  - {name: r" + std::to_string(i) + ", id: " + std::to_string(100 + i) + ", tenant: " +
           std::to_string(vni_of(i)) + ", ip: " + edge::ip4_text(ip) + ", host: h" + std::to_string(h) + "}\n";
    }
    return c;
  };
  std::mt19937 rng(11);
  std::set<int> hosts = {0, 1};
  std::map<int, int> vms = {{0, 0}, {1, 1}, {2, 0}, {3, 1}};  // VM -> host
  const std::string file = dir + "/random.yaml";
  write_text(file, text(vms, hosts));
  EdgeRig r(text(vms, hosts), "rvmrand", file);
  pipeline::EdgeState& s = r.s;
  const uint32_t locals[3] = {kA1, kA2, 0xc0a80003};
  uint64_t tx = 0, unknown = 0;
  Nanos now = 1'000'000;
  for (int round = 0; round < 60 && g_failures == 0; ++round) {
    if (round > 0) {
      std::set<int> next_hosts;
      for (int h = 0; h < kHosts; ++h)
        if (rng() % 2 == 0) next_hosts.insert(h);
      if (next_hosts.empty()) next_hosts.insert(static_cast<int>(rng() % kHosts));
      const std::vector<int> hv(next_hosts.begin(), next_hosts.end());
      std::map<int, int> next_vms;
      for (int i = 0; i < kVms; ++i) {
        if (rng() % 2 != 0) continue;
        const auto was = vms.find(i);
        next_vms[i] = was != vms.end() && next_hosts.count(was->second) != 0 && rng() % 4 != 0 ? was->second
                                                                                               : hv[rng() % hv.size()];
      }
      const std::map<int, int> old_vms = vms;
      hosts = next_hosts;
      vms = next_vms;
      write_text(file, text(vms, hosts));
      const pipeline::Control::ReloadResult rr = r.e.control.reload(now);
      ITEST_CHECK(rr.ok, "random %d: reload refused: %s", round, rr.error.c_str());
      // Frames to a VM this file dropped: unknown_pair.
      for (const auto& [i, h] : old_vms) {
        if (vms.count(i) != 0) continue;
        const int local = vni_of(i) == 100 ? 0 : 2;
        rte_mbuf* m = r.mbuf(vm_frame(locals[local], vm_ip(i), 1000, 64, 1), 0);
        s.stats.ports[0].rx += 1;
        pipeline::vm_frames(s, 0, &m, 1, now);
        ++unknown;
        break;  // one a round
      }
    }
    // The tables: one live pair per (local VM of the tenant, remote VM), on its host.
    size_t want_live = 0;
    std::map<uint32_t, size_t> host_index;  // host IP -> index in the worker's hosts
    for (size_t h = 0; h < r.e.cfg.hosts.size(); ++h)
      if (!r.e.cfg.hosts[h].removed) host_index[r.e.cfg.hosts[h].ip] = h;
    ITEST_CHECK(host_index.size() == hosts.size(), "random %d: %zu live hosts, want %zu", round, host_index.size(), hosts.size());
    for (const int h : hosts) {
      const uint32_t ip = 0x0a000101u + static_cast<uint32_t>(h);
      ITEST_CHECK(host_index.count(ip) != 0 && s.host_by_ip.lookup(&ip) == host_index[ip] &&
                      s.hosts[host_index[ip]].outer.dst_ip == ip,
                  "random %d: host h%d", round, h);
    }
    std::vector<rte_mbuf*> burst;
    std::vector<std::pair<uint32_t, uint32_t>> expect;  // (outer dst IP, wire id) of each frame, in order
    for (const auto& [i, h] : vms) {
      for (uint32_t l = 0; l < 3; ++l) {
        if ((l == 2) != (vni_of(i) == 200)) continue;
        ++want_live;
        const uint32_t wire_id = (l + 1) << 16 | static_cast<uint32_t>(100 + i);
        const uint32_t p = r.pair(l + 1, static_cast<uint32_t>(100 + i));
        const uint32_t host_ip = 0x0a000101u + static_cast<uint32_t>(h);
        ITEST_CHECK(p != pipeline::HashTable::kMiss && s.live(p) && s.meta[p].wire_id == wire_id &&
                        s.meta[p].host == host_index[host_ip] && r.e.cfg.remote_vms[s.meta[p].remote_vm].id == 100 + i,
                    "random %d: pair a%u -> r%d (slot %u)", round, l + 1, i, p);
        burst.push_back(r.mbuf(vm_frame(locals[l], vm_ip(i), 1000, 64, static_cast<uint8_t>(round)), 0));
        expect.emplace_back(host_ip, wire_id);
      }
    }
    ITEST_CHECK(s.live_pairs() == want_live, "random %d: %zu live pairs, want %zu", round, s.live_pairs(), want_live);
    for (size_t v = 0; v < 3; ++v)
      for (const uint32_t p : s.vm_pairs[v])
        ITEST_CHECK(s.live(p) && s.meta[p].local_vm == v, "random %d: vm_pairs[%zu] holds %u", round, v, p);
    for (size_t k = 0; k < burst.size(); k += 32) {
      const auto n = static_cast<uint16_t>(std::min<size_t>(32, burst.size() - k));
      s.stats.ports[0].rx += n;
      pipeline::vm_frames(s, 0, burst.data() + k, n, now);
    }
    size_t data = 0, at = 0;
    for (rte_mbuf* m : r.fabric_tx()) {
      wire::FrameView v;
      const auto* b = rte_pktmbuf_mtod(m, const uint8_t*);
      if (wire::parse_frame({b, rte_pktmbuf_data_len(m)}, v) == wire::WireError::ok && v.shim.next == wire::kNextData) {
        ++data;
        ITEST_CHECK(at < expect.size() && v.outer.dst_ip == expect[at].first && v.shim.pair_id == expect[at].second,
                    "random %d: frame %zu to %08x as %08x, want %08x as %08x", round, at, v.outer.dst_ip,
                    v.shim.pair_id, at < expect.size() ? expect[at].first : 0, at < expect.size() ? expect[at].second : 0);
        ++at;
      }
      ++tx;
      rte_pktmbuf_free(m);
    }
    ITEST_CHECK(data == expect.size() && s.stats.dropped(pipeline::Drop::unknown_pair) == unknown,
                "random %d: %zu data frames out, want %zu; unknown_pair %llu, want %llu", round, data, expect.size(),
                static_cast<unsigned long long>(s.stats.dropped(pipeline::Drop::unknown_pair)),
                static_cast<unsigned long long>(unknown));
    ITEST_CHECK(s.stats.rx() + s.stats.generated == tx + s.queued() + s.stats.dropped() + s.stats.absorbed,
                "random %d: rx %llu + generated %llu = tx %llu + queued %llu + dropped %llu", round,
                static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.stats.generated),
                static_cast<unsigned long long>(tx), static_cast<unsigned long long>(s.queued()),
                static_cast<unsigned long long>(s.stats.dropped()));
    now += 1'000'000;
  }
  std::printf("random reloads: %zu remote VM entries, %zu host entries, %zu pair slots used, %llu frames out\n",
              r.e.cfg.remote_vms.size(), r.e.cfg.hosts.size(), s.pairs.size(), static_cast<unsigned long long>(tx));
}

}  // namespace

int main(int argc, char** argv) {
  char tmpl[] = "/tmp/ufab_edge_rvm.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const int rc = run_in_process(argc, argv, "ufab_edge_remote_vms", [&] {
    run(dir);
    incoming_slots();
    random_reloads(dir);
  },
                                "PASS: remote VMs and hosts added, removed, moved and refused at runtime; receiver-side slots reused; every "
                                "frame counted");
  std::remove((dir + "/edge.yaml").c_str());
  std::remove((dir + "/random.yaml").c_str());
  rmdir(dir.c_str());
  return rc;
}
