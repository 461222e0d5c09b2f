// The worker's classification caches (pipeline/classify_cache.hpp,
// params.classify_cache: one for IPv4 keys, one for IPv6 keys) in process
// on a real Edge: a1 (port 0) has pairs to b1..b5; four bursts each carry
// one frame to every pair, one to an address no remote VM has
// (192.168.1.99, fd00::b:99) and one to a2 (192.168.0.2, fd00::a:2: a local
// VM of a1's tenant, no pair, vm_local.cpp), in IPv4, in IPv6, or both (the
// IPv6 frames after the IPv4 ones, so vm_rx gathers them out of the burst's
// order for vm_ipv6_burst). Frame sizes differ per pair and family, so
// each pair's backlog shows which pair its frames were classified into.
//  - Cache on: per family only the first burst's 5 known keys and the key
//    for a2 reach rte_hash (a key for a local VM is cached like a pair);
//    the unknown key reaches it in every burst (misses are never cached):
//    classify_lookups 5 + 1 + 4 = 10 per family.
//  - Cache off: every frame is looked up: 7 x 4 = 28 per family.
//  - Either way each pair holds exactly its own 4 frames of each family,
//    the unknown frames are dropped as unknown_pair (4 per family), a2's
//    frames wait in port 0's TX buffer (local_delivered 4 per family), and
//    rx = queued + dropped + those.
//  - A worker with local VMs and no pair (a1 and a2 alone): its caches are
//    sized by the local keys, so a1 -> a2 costs one table lookup per family
//    (one a burst with the cache off).
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_mbuf.h>

#include <cstdio>
#include <string>
#include <vector>

#include "pipeline/stages.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/in_process.hpp"
#include "tests/integration/ipv6_frames.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kA2 = 0xc0a80002, kUnknown = 0xc0a80163;
constexpr int kPairs = 5, kBursts = 4;

// one_vm_config with a2 (id 2, 192.168.0.2, fd00::a:2, port 0) beside a1.
std::string config(bool cache) {
  std::string c = one_vm_config(std::string("unit_bw_gbps: 1, classify_cache: ") + (cache ? "true" : "false"), kPairs);
  const std::string a2 =
      "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.2, ip6: \"fd00::a:2\", port: 0}\n";
  c.insert(c.find("hosts:"), a2);
  return c;
}
size_t payload(int j) { return 100 + 10 * static_cast<size_t>(j); }  // b(j+1)'s IPv4 frames; IPv6: 3 more

// fd00::<hi>:<lo> (one_vm_config's addresses: a1 fd00::a:1, b_i fd00::b:i).
Bytes fd00_at(uint8_t hi, uint8_t lo) {
  Bytes a(16, 0);
  a[0] = 0xfd, a[13] = hi, a[15] = lo;
  return a;
}
// A UDP datagram from a1 (fd00::a:1) to fd00::<hi>:<lo>, n bytes of data.
Frame udp6_from_a1(uint8_t hi, uint8_t lo, uint16_t sport, size_t n) {
  Bytes udp(8 + n, 0x5a);
  udp[0] = static_cast<uint8_t>(sport >> 8), udp[1] = static_cast<uint8_t>(sport);
  udp[2] = 0x13, udp[3] = 0x89;  // 5001
  udp[4] = static_cast<uint8_t>((8 + n) >> 8), udp[5] = static_cast<uint8_t>(8 + n);
  udp[6] = udp[7] = 0;
  return ip6_frame({2, 0, 0, 0, 0x0b, 0}, {2, 0, 0, 0, 0x0a, 0x01}, fd00_at(0x0a, 1), fd00_at(hi, lo), 17, 64, udp);
}
// a1's frame to b(j+1) in burst b (j = kPairs: the unknown address, kPairs
// + 1: a2), in IPv4 or IPv6.
Frame frame(bool v6, int j, int b) {
  const auto sport = static_cast<uint16_t>(1000 + b);
  if (j == kPairs) return v6 ? udp6_from_a1(0x0b, 0x99, 1000, 50) : vm_frame(kA1, kUnknown, 1000, 50, 0);
  if (j == kPairs + 1) return v6 ? udp6_from_a1(0x0a, 2, 1000, 60) : vm_frame(kA1, kA2, 1000, 60, 0);
  return v6 ? udp6_from_a1(0x0b, static_cast<uint8_t>(j + 1), sport, payload(j) + 3)
            : vm_frame(kA1, 0xc0a80101 + static_cast<uint32_t>(j), sport, payload(j), static_cast<uint8_t>(b));
}

void run(bool cache, bool v4, bool v6) {
  char mode[64];
  std::snprintf(mode, sizeof mode, "cache %s, %s", cache ? "on" : "off", v4 && v6 ? "IPv4 + IPv6" : v4 ? "IPv4" : "IPv6");
  EdgeRig r(config(cache), std::string(cache ? "ccon" : "ccoff") + (v4 ? "4" : "") + (v6 ? "6" : ""));
  pipeline::EdgeState& s = r.s;
  ITEST_CHECK(s.classify_cache.enabled() == cache && s.classify_cache.sets() == (cache ? 64u : 0u) &&
                  s.classify6_cache.enabled() == cache && s.classify6_cache.sets() == (cache ? 64u : 0u),
              "%s: caches enabled %d, %d with %u, %u sets", mode, s.classify_cache.enabled(),
              s.classify6_cache.enabled(), s.classify_cache.sets(), s.classify6_cache.sets());
  const int families = int{v4} + int{v6};
  for (int b = 0; b < kBursts; ++b) {
    std::vector<rte_mbuf*> ms;
    for (const bool f6 : {false, true}) {
      if (f6 ? !v6 : !v4) continue;
      for (int j = 0; j < kPairs + 2; ++j) ms.push_back(r.mbuf(frame(f6, j, b), 0));
    }
    for (rte_mbuf* m : ms)
      if (m == nullptr) {
        ITEST_CHECK(false, "%s: mempool empty", mode);
        return;
      }
    s.stats.ports[0].rx += ms.size();  // as poll_port counts them
    pipeline::vm_frames(s, 0, ms.data(), static_cast<uint16_t>(ms.size()), 1'000'000);
    ITEST_CHECK(s.burst6.n == 0, "%s: %u IPv6 frames left gathered after the burst", mode, s.burst6.n);
  }
  const uint64_t want_lookups = families * (cache ? kPairs + 1 + kBursts : (kPairs + 2) * kBursts);
  ITEST_CHECK(s.stats.classify_lookups == want_lookups, "%s: %llu table lookups, want %llu", mode,
              static_cast<unsigned long long>(s.stats.classify_lookups),
              static_cast<unsigned long long>(want_lookups));
  for (int j = 0; j < kPairs; ++j) {
    const uint32_t p = r.pair(1, static_cast<uint32_t>(11 + j));
    uint64_t len = 0;  // one burst's frames to b(j+1), as the scheduler counts them
    for (const bool f6 : {false, true})
      if (f6 ? v6 : v4) len += frame(f6, j, 0).size() + s.encap_bytes(p, s.pairs[p].active_path());
    ITEST_CHECK(s.sched.backlog_bytes(p) == kBursts * len, "%s: pair a1->b%d holds %llu bytes, want %d x %llu", mode,
                j + 1, static_cast<unsigned long long>(s.sched.backlog_bytes(p)), kBursts,
                static_cast<unsigned long long>(len));
  }
  const uint16_t local = s.tx[0].pending();
  const int want = families * kBursts;
  ITEST_CHECK(s.stats.local_delivered == static_cast<uint64_t>(want) && local == want,
              "%s: local_delivered %llu, %u in port 0's TX buffer, want %d", mode,
              static_cast<unsigned long long>(s.stats.local_delivered), local, want);
  ITEST_CHECK(s.stats.dropped(pipeline::Drop::unknown_pair) == static_cast<uint64_t>(want) &&
                  s.queued() == static_cast<uint64_t>(kPairs * want) &&
                  s.stats.rx() == s.queued() + s.stats.dropped() + local,
              "%s: unknown_pair %llu (want %d), queued %llu (want %d), rx %llu = queued + dropped %llu + %u", mode,
              static_cast<unsigned long long>(s.stats.dropped(pipeline::Drop::unknown_pair)), want,
              static_cast<unsigned long long>(s.queued()), kPairs * want,
              static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.stats.dropped()), local);
}

// A worker with local VMs and no pair (a1 and a2 of one tenant, no remote
// VM): its caches are sized by the local keys too, so a1's frames to a2 are
// looked up once per family with the cache on (4 times, once a burst, off).
void run_local_only(bool cache) {
  const char* mode = cache ? "local only, cache on" : "local only, cache off";
  std::string c = one_vm_config(std::string("classify_cache: ") + (cache ? "true" : "false"), 0);
  c.insert(c.find("hosts:"),
           "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.2, ip6: \"fd00::a:2\", port: 0}\n");
  EdgeRig r(c, cache ? "cclocal1" : "cclocal0");
  pipeline::EdgeState& s = r.s;
  ITEST_CHECK(s.pairs.size() == 0 && s.classify_cache.enabled() == cache && s.classify6_cache.enabled() == cache,
              "%s: %zu pairs, caches enabled %d, %d", mode, s.pairs.size(), s.classify_cache.enabled(),
              s.classify6_cache.enabled());
  for (int b = 0; b < kBursts; ++b) {
    rte_mbuf* ms[2] = {r.mbuf(frame(false, kPairs + 1, b), 0), r.mbuf(frame(true, kPairs + 1, b), 0)};
    if (ms[0] == nullptr || ms[1] == nullptr) {
      ITEST_CHECK(false, "%s: mempool empty", mode);
      return;
    }
    s.stats.ports[0].rx += 2;
    pipeline::vm_frames(s, 0, ms, 2, 1'000'000);
  }
  const uint64_t want_lookups = cache ? 2 : 2 * kBursts;
  ITEST_CHECK(s.stats.classify_lookups == want_lookups && s.stats.local_delivered == 2 * kBursts &&
                  s.tx[0].pending() == 2 * kBursts && s.stats.rx() == s.stats.local_delivered + s.stats.dropped(),
              "%s: %llu table lookups (want %llu), local_delivered %llu, %u in port 0's TX buffer (want %d each)", mode,
              static_cast<unsigned long long>(s.stats.classify_lookups), static_cast<unsigned long long>(want_lookups),
              static_cast<unsigned long long>(s.stats.local_delivered), s.tx[0].pending(), 2 * kBursts);
}

}  // namespace

int main(int argc, char** argv) {
  return run_in_process(
      argc, argv, "test_ufab_edge_classify_cache",
      [] {
        for (const bool cache : {true, false}) {
          run(cache, true, false);
          run(cache, false, true);
          run(cache, true, true);
          run_local_only(cache);
        }
      },
      "PASS: the IPv4 and IPv6 classification caches send only first sightings (pairs and a local VM) and unknown "
      "keys to rte_hash, and every frame lands in its own pair or VM, cache on or off");
}
