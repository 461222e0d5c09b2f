// The edge's hierarchical packet scheduler at the FPGA edge's scale (paper
// §4.1, Table 3: 8K VM-pairs, 1K tenants, 8 WFQ classes). One item is one
// packet: a dequeue plus an enqueue, in steady state.
//
// Load model (kept honest so that the working set really is 8K backlogged
// pairs): tenant t is in class t % 8 and owns pairs t, t + 1K, ..., so every
// class has 128 tenants and 1K pairs. Each packet sent is replaced by a new
// packet of random length (64..1500 B) for a uniformly random pair and flow
// *of the same weight class*: arrivals per class match the class's WFQ share,
// so no class drains or saturates (uniform arrivals over all pairs would park
// the whole backlog in the weight-1 class after a few seconds and leave
// ~1K pairs active). Per-pair backlogs then perform a balanced random walk
// with mean kPreload; the end-of-run count of active pairs is reported
// ("active"). Windows are huge, so pairs stay eligible. Queues hold 64 packets
// per flow, so drops are rare; they are counted separately ("drop_rate").
// The handle is a pointer-sized integer.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <utility>

#include "tests/bench/sched_load.hpp"

namespace {

using namespace ufab::bench;

void report(benchmark::State& state, const Sched& s, uint64_t drops_before, int64_t packets) {
  state.SetItemsProcessed(packets);
  uint32_t active = 0;
  for (uint32_t p = 0; p < kPairs; ++p) active += s.pair_state(p) == ufab::PairState::kActive;
  const double drops = static_cast<double>(s.counters().dropped_full - drops_before);
  state.counters["drop_rate"] = packets > 0 ? drops / static_cast<double>(packets) : 0.0;
  state.counters["active"] = active;
  state.counters["backlog"] = static_cast<double>(s.backlog_packets());
}

void BM_SchedEnqueueDequeue(benchmark::State& state) {
  Rng rng;
  Sched s = make(rng);
  const uint64_t drops0 = s.counters().dropped_full;
  Pkt pkt = 0;
  uint32_t len = 0, pair = 0;
  for (auto _ : state) {
    s.dequeue(pkt, len, pair);
    benchmark::DoNotOptimize(pkt);
    const Arrival a = arrival(rng, class_of(pair));
    s.enqueue(a.pair, a.flow, a.pkt, a.len);
  }
  report(state, s, drops0, state.iterations());
}
BENCHMARK(BM_SchedEnqueueDequeue);

// dequeue_burst, then one enqueue() per packet sent.
void BM_SchedEnqueueDequeueBurst(benchmark::State& state) {
  const size_t burst = static_cast<size_t>(state.range(0));
  Rng rng;
  Sched s = make(rng);
  const uint64_t drops0 = s.counters().dropped_full;
  std::array<Pkt, 256> pkts{};
  std::array<uint32_t, 256> lens{};
  std::array<uint32_t, 256> pairs{};
  int64_t packets = 0;
  for (auto _ : state) {
    const size_t n = s.dequeue_burst(pkts.data(), lens.data(), pairs.data(), burst);
    benchmark::DoNotOptimize(pkts.data());
    for (size_t i = 0; i < n; ++i) {
      const Arrival a = arrival(rng, class_of(pairs[i]));
      s.enqueue(a.pair, a.flow, a.pkt, a.len);
    }
    packets += static_cast<int64_t>(n);
  }
  report(state, s, drops0, packets);
}
BENCHMARK(BM_SchedEnqueueDequeueBurst)->Arg(32)->Arg(256);

// dequeue_burst, then one enqueue_burst of the replacements (the DPDK
// pipeline's shape: an RX burst is classified, then enqueued at once).
void BM_SchedEnqueueBurstDequeueBurst(benchmark::State& state) {
  const size_t burst = static_cast<size_t>(state.range(0));
  Rng rng;
  Sched s = make(rng);
  const uint64_t drops0 = s.counters().dropped_full;
  std::array<Pkt, 256> pkts{};
  std::array<uint32_t, 256> lens{};
  std::array<uint32_t, 256> pairs{};
  std::array<uint32_t, 256> flows{};
  int64_t packets = 0;
  for (auto _ : state) {
    const size_t n = s.dequeue_burst(pkts.data(), lens.data(), pairs.data(), burst);
    benchmark::DoNotOptimize(pkts.data());
    for (size_t i = 0; i < n; ++i) {
      const Arrival a = arrival(rng, class_of(pairs[i]));
      pairs[i] = a.pair;
      flows[i] = a.flow;
      lens[i] = a.len;
      pkts[i] = a.pkt;
    }
    s.enqueue_burst(pairs.data(), flows.data(), pkts.data(), lens.data(), n);
    packets += static_cast<int64_t>(n);
  }
  report(state, s, drops0, packets);
}
BENCHMARK(BM_SchedEnqueueBurstDequeueBurst)->Arg(32)->Arg(256);

// Window churn: every dequeued packet is acknowledged kLag packets later and
// windows are two full-size packets, so pairs park and resume constantly.
void BM_SchedWindowChurn(benchmark::State& state) {
  Rng rng;
  Sched s = make(rng);
  for (uint32_t p = 0; p < kPairs; ++p) s.set_window(p, 3000);
  constexpr uint32_t kLag = 4096;  // acks arrive kLag packets after the send
  std::array<std::pair<uint32_t, uint32_t>, kLag> ring{};
  uint32_t at = 0;
  Pkt pkt = 0;
  uint32_t len = 0, pair = 0;
  const uint64_t sent0 = s.counters().dequeued;
  for (auto _ : state) {
    auto& slot = ring[at];
    if (s.dequeue(pkt, len, pair)) {
      if (slot.second != 0) s.on_acked(slot.first, slot.second);
      slot = {pair, len};
      const Arrival a = arrival(rng, class_of(pair));
      s.enqueue(a.pair, a.flow, a.pkt, a.len);
    } else {
      s.on_acked(slot.first, slot.second);
      slot = {0, 0};
    }
    at = (at + 1) & (kLag - 1);
  }
  state.SetItemsProcessed(static_cast<int64_t>(s.counters().dequeued - sent0));
}
BENCHMARK(BM_SchedWindowChurn);

}  // namespace

namespace {

// Per-pair pacing (sched/pair_pacing.hpp) on the BM_SchedEnqueueDequeueBurst
// load: every pair is paced; a virtual clock advances by the bytes sent at
// 1 B/ns (8 Gb/s; at least 1500 ns per burst). Peer, in the same run:
// BM_SchedEnqueueDequeueBurst/32.
//  Arg 0: pairs at 1 GB/s with a 1 s depth: no pair ever waits; the cost of
//         charging the eligible time per packet.
//  Arg 1: pairs at 1 GB/s, depth 0: within a burst the clock stands still,
//         so every packet parks its pair until the next burst (a heap push
//         and pop per packet, a few pairs in the heap).
//  Arg 2: pairs at twice the link's average share (2 GB/s / 8K pairs), depth
//         0: the heavy classes' pairs (WFQ weight up to 128) wait, thousands
//         in the heap, while the others keep the link busy.
void BM_SchedPacedBurst(benchmark::State& state) {
  Rng rng;
  Sched s = make(rng, state.range(0) == 0 ? 1'000'000'000 : 0);
  const double rate = state.range(0) == 2 ? 2e9 / kPairs : 1e9;
  for (uint32_t p = 0; p < kPairs; ++p) s.set_pair_rate(p, rate);
  const uint64_t drops0 = s.counters().dropped_full;
  std::array<Pkt, 32> pkts{};
  std::array<uint32_t, 32> lens{};
  std::array<uint32_t, 32> pairs{};
  int64_t packets = 0;
  uint64_t now = 0;
  for (auto _ : state) {
    const size_t n = s.dequeue_burst(pkts.data(), lens.data(), pairs.data(), 32, now);
    benchmark::DoNotOptimize(pkts.data());
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      bytes += lens[i];
      const Arrival a = arrival(rng, class_of(pairs[i]));
      s.enqueue(a.pair, a.flow, a.pkt, a.len);
    }
    now += bytes > 1500 ? bytes : 1500;
    packets += static_cast<int64_t>(n);
  }
  report(state, s, drops0, packets);
  uint32_t paced = 0;
  for (uint32_t p = 0; p < kPairs; ++p) paced += s.pair_state(p) == ufab::PairState::kPaced;
  state.counters["paced"] = paced;
}
BENCHMARK(BM_SchedPacedBurst)->Arg(0)->Arg(1)->Arg(2);

// ufab-edge's regime in `deploy/ufab bench edge` (its worker drains the
// scheduler every iteration, window gating off): a burst of 32 packets to
// uniformly random pairs of all 8K, mostly idle, enqueue_burst, then
// dequeue_burst until empty. Every packet wakes its pair (and usually its
// tenant) and every dequeue parks them again: the rings' insert and remove
// per packet that the backlogged items above rarely pay. Peer, in the same
// run: BM_SchedEnqueueBurstDequeueBurst/32.
void BM_SchedSparseBurst(benchmark::State& state) {
  Sched s = make_empty();
  Rng rng;
  std::array<Pkt, 32> pkts{};
  std::array<uint32_t, 32> lens{}, pairs{}, flows{}, ids{};
  int64_t packets = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < pkts.size(); ++i) {
      const uint64_t r = rng.next();
      pairs[i] = static_cast<uint32_t>(r >> 40) & (kPairs - 1);
      flows[i] = static_cast<uint32_t>(r >> 20) & (kFlows - 1);
      lens[i] = packet_len(r);
      pkts[i] = r;
    }
    s.enqueue_burst(pairs.data(), flows.data(), pkts.data(), lens.data(), pkts.size());
    for (size_t n; (n = s.dequeue_burst(pkts.data(), lens.data(), ids.data(), pkts.size())) != 0;)
      packets += static_cast<int64_t>(n);
    benchmark::DoNotOptimize(pkts.data());
  }
  state.SetItemsProcessed(packets);
  state.counters["backlog"] = static_cast<double>(s.backlog_packets());
}
BENCHMARK(BM_SchedSparseBurst);

}  // namespace
