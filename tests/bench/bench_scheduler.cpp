// The edge's hierarchical packet scheduler at the FPGA edge's scale (paper
// §4.1, Table 3: 8K VM-pairs, 1K tenants, 8 WFQ classes). One iteration is one
// packet: an enqueue to a pseudo-random pair and flow plus a dequeue. Windows
// are large, so pairs stay eligible; the handle is a pointer-sized integer.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <utility>

#include "sched/hier_scheduler.hpp"

namespace {

using Pkt = uintptr_t;
using Sched = ufab::HierScheduler<Pkt>;

constexpr uint32_t kTenants = 1024;
constexpr uint32_t kPairs = 8192;
constexpr uint32_t kFlows = 4;
constexpr uint32_t kPreload = 4;  // packets per pair before timing

struct Rng {  // xorshift64: cheap and deterministic
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

uint32_t packet_len(uint64_t r) { return 64 + static_cast<uint32_t>(r % 1437); }  // 64..1500

void setup(Sched& s, Rng& rng) {
  for (uint32_t t = 0; t < kTenants; ++t) s.add_tenant(t, t % ufab::kWeightClasses);
  for (uint32_t p = 0; p < kPairs; ++p) {
    s.add_pair(p, p % kTenants, uint64_t{1} << 62);
    for (uint32_t i = 0; i < kPreload; ++i) {
      const uint64_t r = rng.next();
      s.enqueue(p, i % kFlows, r, packet_len(r));
    }
  }
}

Sched make() {
  ufab::HierSchedulerConfig cfg;
  cfg.max_tenants = kTenants;
  cfg.max_pairs = kPairs;
  cfg.flows_per_pair = kFlows;
  cfg.queue_capacity = 16;
  return Sched(cfg);
}

// Enqueue to a random pair/flow; when that flow is full (rare), the packet
// goes back to the pair just served so that the backlog stays constant.
inline void enqueue_one(Sched& s, Rng& rng, uint32_t served_pair) {
  const uint64_t r = rng.next();
  const uint32_t pair = static_cast<uint32_t>(r >> 40) % kPairs;
  const uint32_t flow = static_cast<uint32_t>(r >> 20) & (kFlows - 1);
  if (!s.enqueue(pair, flow, r, packet_len(r))) s.enqueue(served_pair, flow, r, packet_len(r));
}

void BM_SchedEnqueueDequeue(benchmark::State& state) {
  Sched s = make();
  Rng rng;
  setup(s, rng);
  Pkt pkt = 0;
  uint32_t len = 0, pair = 0;
  for (auto _ : state) {
    s.dequeue(pkt, len, pair);
    benchmark::DoNotOptimize(pkt);
    enqueue_one(s, rng, pair);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["drops"] = static_cast<double>(s.counters().dropped_full);
  state.counters["backlog"] = static_cast<double>(s.backlog_packets());
}
BENCHMARK(BM_SchedEnqueueDequeue);

void BM_SchedEnqueueDequeueBurst(benchmark::State& state) {
  const size_t burst = static_cast<size_t>(state.range(0));
  Sched s = make();
  Rng rng;
  setup(s, rng);
  std::array<Pkt, 256> pkts{};
  std::array<uint32_t, 256> lens{};
  std::array<uint32_t, 256> pairs{};
  for (auto _ : state) {
    const size_t n = s.dequeue_burst(pkts.data(), lens.data(), pairs.data(), burst);
    benchmark::DoNotOptimize(pkts.data());
    for (size_t i = 0; i < n; ++i) enqueue_one(s, rng, pairs[i]);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * burst));
  state.counters["drops"] = static_cast<double>(s.counters().dropped_full);
}
BENCHMARK(BM_SchedEnqueueDequeueBurst)->Arg(32)->Arg(256);

// Window churn: every dequeued packet is acknowledged at once and windows
// are a few packets, so pairs park and resume constantly.
void BM_SchedWindowChurn(benchmark::State& state) {
  Sched s = make();
  Rng rng;
  setup(s, rng);
  for (uint32_t p = 0; p < kPairs; ++p) s.set_window(p, 3000);
  constexpr uint32_t kLag = 4096;  // acks arrive kLag packets after the send
  std::array<std::pair<uint32_t, uint32_t>, kLag> ring{};
  uint32_t at = 0;
  Pkt pkt = 0;
  uint32_t len = 0, pair = 0;
  for (auto _ : state) {
    if (s.dequeue(pkt, len, pair)) {
      auto& slot = ring[at];
      if (slot.second != 0) s.on_acked(slot.first, slot.second);
      slot = {pair, len};
      at = (at + 1) % kLag;
      enqueue_one(s, rng, pair);
    } else {
      auto& slot = ring[at];
      s.on_acked(slot.first, slot.second);
      slot = {0, 0};
      at = (at + 1) % kLag;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(s.counters().dequeued));
}
BENCHMARK(BM_SchedWindowChurn);

}  // namespace
