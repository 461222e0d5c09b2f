// The worker's classification cache (pipeline/classify_cache.hpp,
// params.classify_cache) in process on a real Edge: a1 (port 0) has pairs
// to b1..b5; four bursts each carry one frame to every pair, one to
// 192.168.1.99, which no remote VM has, and one to a2 (192.168.0.2, a local
// VM of a1's tenant: no pair, vm_local.cpp). Frame sizes differ per pair,
// so each pair's backlog shows which pair its frames were classified into.
//  - Cache on: only the first burst's 5 known keys and the key for a2 reach
//    rte_hash (a key for a local VM is cached like a pair); the unknown key
//    reaches it in every burst (misses are never cached): classify_lookups
//    5 + 1 + 4 = 10.
//  - Cache off: every frame is looked up: 7 x 4 = 28.
//  - Either way each pair holds exactly its own 4 frames, the unknown
//    frames are dropped as unknown_pair (4), a2's 4 frames wait in port 0's
//    TX buffer (local_delivered 4), and rx = queued + dropped + those 4.
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

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kA2 = 0xc0a80002, kUnknown = 0xc0a80163;
constexpr int kPairs = 5, kBursts = 4;

// one_vm_config with a2 (id 2, 192.168.0.2, port 0) beside a1.
std::string config(bool cache) {
  std::string c = one_vm_config(std::string("unit_bw_gbps: 1, classify_cache: ") + (cache ? "true" : "false"), kPairs);
  const std::string a2 = "  - {name: a2, id: 2, tenant: 100, mac: \"02:00:00:00:0a:02\", ip: 192.168.0.2, port: 0}\n";
  c.insert(c.find("hosts:"), a2);
  return c;
}
size_t payload(int j) { return 100 + 10 * static_cast<size_t>(j); }  // b(j+1)'s frames

void run(bool cache) {
  const char* mode = cache ? "cache on" : "cache off";
  EdgeRig r(config(cache), cache ? "ccon" : "ccoff");
  pipeline::EdgeState& s = r.s;
  ITEST_CHECK(s.classify_cache.enabled() == cache && s.classify_cache.sets() == (cache ? 64u : 0u),
              "%s: cache enabled %d with %u sets", mode, s.classify_cache.enabled(), s.classify_cache.sets());
  for (int b = 0; b < kBursts; ++b) {
    std::vector<rte_mbuf*> ms;
    for (int j = 0; j < kPairs; ++j)
      ms.push_back(r.mbuf(vm_frame(kA1, 0xc0a80101 + static_cast<uint32_t>(j), static_cast<uint16_t>(1000 + b),
                                   payload(j), static_cast<uint8_t>(b)),
                          0));
    ms.push_back(r.mbuf(vm_frame(kA1, kUnknown, 1000, 50, 0), 0));
    ms.push_back(r.mbuf(vm_frame(kA1, kA2, 1000, 60, 0), 0));
    for (rte_mbuf* m : ms)
      if (m == nullptr) {
        ITEST_CHECK(false, "%s: mempool empty", mode);
        return;
      }
    s.stats.ports[0].rx += ms.size();  // as poll_port counts them
    pipeline::vm_frames(s, 0, ms.data(), static_cast<uint16_t>(ms.size()), 1'000'000);
  }
  const uint64_t want_lookups = cache ? kPairs + 1 + kBursts : (kPairs + 2) * kBursts;
  ITEST_CHECK(s.stats.classify_lookups == want_lookups, "%s: %llu table lookups, want %llu", mode,
              static_cast<unsigned long long>(s.stats.classify_lookups),
              static_cast<unsigned long long>(want_lookups));
  for (int j = 0; j < kPairs; ++j) {
    const uint32_t p = r.pair(1, static_cast<uint32_t>(11 + j));
    const uint64_t len = vm_frame(kA1, 0xc0a80101 + static_cast<uint32_t>(j), 1000, payload(j), 0).size() +
                         s.encap_bytes(p, s.pairs[p].active_path());
    ITEST_CHECK(s.sched.backlog_bytes(p) == kBursts * len, "%s: pair a1->b%d holds %llu bytes, want %d x %llu", mode,
                j + 1, static_cast<unsigned long long>(s.sched.backlog_bytes(p)), kBursts,
                static_cast<unsigned long long>(len));
  }
  const uint16_t local = s.tx[0].pending();
  ITEST_CHECK(s.stats.local_delivered == kBursts && local == kBursts, "%s: local_delivered %llu, %u in port 0's TX "
              "buffer, want %d", mode, static_cast<unsigned long long>(s.stats.local_delivered), local, kBursts);
  ITEST_CHECK(s.stats.dropped(pipeline::Drop::unknown_pair) == kBursts && s.queued() == kPairs * kBursts &&
                  s.stats.rx() == s.queued() + s.stats.dropped() + local,
              "%s: unknown_pair %llu (want %d), queued %llu (want %d), rx %llu = queued + dropped %llu + %u", mode,
              static_cast<unsigned long long>(s.stats.dropped(pipeline::Drop::unknown_pair)), kBursts,
              static_cast<unsigned long long>(s.queued()), kPairs * kBursts,
              static_cast<unsigned long long>(s.stats.rx()), static_cast<unsigned long long>(s.stats.dropped()), local);
}

}  // namespace

int main(int argc, char** argv) {
  return run_in_process(
      argc, argv, "test_ufab_edge_classify_cache",
      [] {
        run(true);
        run(false);
      },
      "PASS: the classification cache sends only first sightings (pairs and a local VM) and unknown keys to "
      "rte_hash, and every frame lands in its own pair or VM, cache on or off");
}
