// The scheduler benchmarks' load model (see bench_scheduler.cpp's header
// comment), shared by the Google Benchmark items and by ufab-sched-steady,
// the fixed-count driver for callgrind.
#pragma once

#include <cstdint>

#include "sched/hier_scheduler.hpp"

namespace ufab::bench {

using Pkt = uintptr_t;
using Sched = ufab::HierScheduler<Pkt>;

constexpr uint32_t kTenants = 1024;
constexpr uint32_t kPairs = 8192;
constexpr uint32_t kFlows = 4;
constexpr uint32_t kPreload = 8;  // packets per pair before timing (64K in total)
constexpr uint32_t kClassMask = ufab::kWeightClasses - 1;
constexpr uint32_t kPairsPerClass = kPairs / ufab::kWeightClasses;
static_assert((kPairsPerClass & (kPairsPerClass - 1)) == 0 && (kFlows & (kFlows - 1)) == 0);

struct Rng {  // xorshift64: cheap and deterministic
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

inline uint32_t packet_len(uint64_t r) { return 64 + static_cast<uint32_t>((r & 0xffff) * 1437 >> 16); }  // 64..1500

// The next packet of class `cls`: a uniformly random pair of that class, a
// random flow and length.
struct Arrival {
  uint32_t pair, flow, len;
  Pkt pkt;
};
inline Arrival arrival(Rng& rng, uint32_t cls) {
  const uint64_t r = rng.next();
  return {cls + ufab::kWeightClasses * (static_cast<uint32_t>(r >> 40) & (kPairsPerClass - 1)),
          static_cast<uint32_t>(r >> 20) & (kFlows - 1), packet_len(r), r};
}
inline uint32_t class_of(uint32_t pair) { return pair & kClassMask; }  // tenant = pair % 1K

// The tenants (tenant t in class t % 8) and pairs (pair p of tenant p % 1K,
// windows open), nothing queued.
inline Sched make_empty(uint64_t pace_depth_ns = 0) {
  ufab::HierSchedulerConfig cfg;
  cfg.pace_depth_ns = pace_depth_ns;
  cfg.max_tenants = kTenants;
  cfg.max_pairs = kPairs;
  cfg.flows_per_pair = kFlows;
  cfg.queue_capacity = 64;
  Sched s(cfg);
  for (uint32_t t = 0; t < kTenants; ++t) s.add_tenant(t, t % ufab::kWeightClasses);
  for (uint32_t p = 0; p < kPairs; ++p) s.add_pair(p, p % kTenants, uint64_t{1} << 62);
  return s;
}

// make_empty(), then kPreload packets per pair and a warm-up into the steady state.
inline Sched make(Rng& rng, uint64_t pace_depth_ns = 0) {
  Sched s = make_empty(pace_depth_ns);
  for (uint32_t p = 0; p < kPairs; ++p) {
    for (uint32_t i = 0; i < kPreload; ++i) {
      const uint64_t r = rng.next();
      s.enqueue(p, i % kFlows, r, packet_len(r));
    }
  }
  // Warm up into the steady state before timing.
  Pkt pkt = 0;
  uint32_t len = 0, pair = 0;
  for (uint32_t i = 0; i < 16 * kPairs; ++i) {
    s.dequeue(pkt, len, pair);
    const Arrival a = arrival(rng, class_of(pair));
    s.enqueue(a.pair, a.flow, a.pkt, a.len);
  }
  return s;
}

}  // namespace ufab::bench
