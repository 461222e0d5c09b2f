// ufab-bench-rte-sched [EAL options] -- [SECONDS] [FRAME_LEN]: the peer of
// `deploy/ufab bench edge`: DPDK's hierarchical scheduler (librte_sched)
// and ours (sched/hier_scheduler.hpp) doing the same job on one core, an
// enqueue plus a dequeue per packet on rte_mbufs, in steady state.
//
// rte_sched: tests/bench/rte_sched_profile.hpp (qos_sched's shape, 4096
// pipes, rates not binding).
//
// HierScheduler<rte_mbuf*>: 1K tenants in 8 weight classes, 8K VM-pairs, 4
// flows per pair, 64-packet flow FIFOs (the edge's scale, as in
// tests/bench/bench_scheduler.cpp).
//
// Both hold 64K packets (16 per pipe / 8 per pair). Each packet sent is
// replaced by the same mbuf re-classified to a random pipe (pair) of the
// same traffic class (weight class), so that no class drains and the
// working set stays spread over all pipes (pairs). Lengths are FRAME_LEN
// (default 64). Prints one line per scheduler: "bench-sched NAME mpps=X
// mpps_wall=Y ...": X per second of the thread's CPU time, Y per wall second.
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_sched.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "sched/hier_scheduler.hpp"
#include "tests/bench/rte_sched_profile.hpp"

namespace {

using ufab::bench::kPipes;
using ufab::bench::kQueueSize;
using ufab::bench::make_rte_sched;
using ufab::bench::thread_cpu;

constexpr uint32_t kBacklog = 65536;
constexpr uint32_t kBurst = 32;

struct Rng {  // xorshift64
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

void classify(rte_sched_port* port, rte_mbuf* m, uint32_t tc, Rng& rng) {
  const uint64_t r = rng.next();
  const uint32_t queue = tc == RTE_SCHED_TRAFFIC_CLASS_BE ? static_cast<uint32_t>(r >> 8) & 3 : 0;
  rte_sched_port_pkt_write(port, m, 0, static_cast<uint32_t>(r >> 20) & (kPipes - 1), tc, queue, RTE_COLOR_GREEN);
}

struct Result {
  uint64_t packets = 0;
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // this thread's CPU time (the machine may be shared)
  uint64_t drops = 0;
};

// mpps: per second of this thread's CPU time; mpps_wall: per wall second.
void print(const char* name, const Result& r) {
  std::printf("bench-sched %s mpps=%.3f mpps_wall=%.3f packets=%" PRIu64 " seconds=%.3f cpu_seconds=%.3f drops=%" PRIu64
              "\n",
              name, static_cast<double>(r.packets) / r.cpu_seconds / 1e6, static_cast<double>(r.packets) / r.seconds / 1e6,
              r.packets, r.seconds, r.cpu_seconds, r.drops);
  std::fflush(stdout);
}

bool alloc_all(rte_mempool* pool, std::vector<rte_mbuf*>& v, uint32_t len) {
  if (rte_pktmbuf_alloc_bulk(pool, v.data(), static_cast<unsigned>(v.size())) != 0) return false;
  for (rte_mbuf* m : v) m->pkt_len = m->data_len = static_cast<uint16_t>(len);
  return true;
}

Result run_rte_sched(rte_mempool* pool, double seconds, uint32_t len) {
  Result res;
  rte_sched_port* port = make_rte_sched();
  if (port == nullptr) {
    std::fprintf(stderr, "bench-sched: rte_sched configuration failed\n");
    std::exit(1);
  }
  Rng rng;
  std::vector<rte_mbuf*> init(kBacklog);
  if (!alloc_all(pool, init, len)) std::exit(1);
  for (uint32_t i = 0; i < kBacklog; ++i) classify(port, init[i], i % RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE, rng);
  const int in = rte_sched_port_enqueue(port, init.data(), kBacklog);
  res.drops += kBacklog - static_cast<uint32_t>(in);
  rte_mbuf* pkts[kBurst];
  const uint64_t hz = rte_get_tsc_hz();
  const double c0 = thread_cpu();
  const uint64_t t0 = rte_rdtsc();
  const uint64_t stop = t0 + static_cast<uint64_t>(seconds * static_cast<double>(hz));
  uint64_t now = t0;
  for (uint32_t iter = 0;; ++iter) {
    if ((iter & 63) == 0 && (now = rte_rdtsc()) >= stop) break;
    const int n = rte_sched_port_dequeue(port, pkts, kBurst);
    for (int i = 0; i < n; ++i) {
      uint32_t sub = 0, pipe = 0, tc = 0, q = 0;
      rte_sched_port_pkt_read_tree_path(port, pkts[i], &sub, &pipe, &tc, &q);
      classify(port, pkts[i], tc, rng);
    }
    const int e = rte_sched_port_enqueue(port, pkts, static_cast<uint32_t>(n));
    // rte_sched frees what it drops; replace them to keep the backlog.
    for (int i = e; i < n; ++i) {
      ++res.drops;
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      if (m == nullptr) continue;
      m->pkt_len = m->data_len = static_cast<uint16_t>(len);
      classify(port, m, RTE_SCHED_TRAFFIC_CLASS_BE, rng);
      if (rte_sched_port_enqueue(port, &m, 1) != 1) ++res.drops;
    }
    res.packets += static_cast<uint64_t>(n);
  }
  res.seconds = static_cast<double>(now - t0) / static_cast<double>(hz);
  res.cpu_seconds = thread_cpu() - c0;
  // Drain and free.
  for (int n; (n = rte_sched_port_dequeue(port, pkts, kBurst)) > 0;) rte_pktmbuf_free_bulk(pkts, static_cast<unsigned>(n));
  rte_sched_port_free(port);
  return res;
}

Result run_hier(rte_mempool* pool, double seconds, uint32_t len) {
  constexpr uint32_t kTenants = 1024, kPairs = 8192, kFlows = 4;
  constexpr uint32_t kPairsPerClass = kPairs / ufab::kWeightClasses;
  Result res;
  ufab::HierSchedulerConfig cfg;
  cfg.max_tenants = kTenants;
  cfg.max_pairs = kPairs;
  cfg.flows_per_pair = kFlows;
  cfg.queue_capacity = kQueueSize;
  cfg.pool_packets = kBacklog + kBurst;
  ufab::HierScheduler<rte_mbuf*> s(cfg);
  for (uint32_t t = 0; t < kTenants; ++t) s.add_tenant(t, t % ufab::kWeightClasses);
  for (uint32_t p = 0; p < kPairs; ++p) s.add_pair(p, p % kTenants, ufab::HierScheduler<rte_mbuf*>::kMaxWindow);
  Rng rng;
  // Pair p is in tenant p % 1K, whose class is p % 8.
  const auto pick = [&rng](uint32_t cls, uint32_t& pair, uint32_t& flow) {
    const uint64_t r = rng.next();
    pair = cls + ufab::kWeightClasses * (static_cast<uint32_t>(r >> 40) & (kPairsPerClass - 1));
    flow = static_cast<uint32_t>(r >> 20) & (kFlows - 1);
  };
  std::vector<rte_mbuf*> init(kBacklog);
  if (!alloc_all(pool, init, len)) std::exit(1);
  for (uint32_t i = 0; i < kBacklog; ++i) {
    uint32_t pair = 0, flow = 0;
    pick(i % ufab::kWeightClasses, pair, flow);
    if (!s.enqueue(pair, flow, init[i], len)) {
      ++res.drops;
      rte_pktmbuf_free(init[i]);
    }
  }
  rte_mbuf* pkts[kBurst];
  uint32_t lens[kBurst], ids[kBurst], pairs[kBurst], flows[kBurst];
  bool ok[kBurst];
  const uint64_t hz = rte_get_tsc_hz();
  const double c0 = thread_cpu();
  const uint64_t t0 = rte_rdtsc();
  const uint64_t stop = t0 + static_cast<uint64_t>(seconds * static_cast<double>(hz));
  uint64_t now = t0;
  for (uint32_t iter = 0;; ++iter) {
    if ((iter & 63) == 0 && (now = rte_rdtsc()) >= stop) break;
    const size_t n = s.dequeue_burst(pkts, lens, ids, kBurst);
    for (size_t i = 0; i < n; ++i) pick(ids[i] % ufab::kWeightClasses, pairs[i], flows[i]);
    s.enqueue_burst(pairs, flows, pkts, lens, n, ok);
    for (size_t i = 0; i < n; ++i)
      if (!ok[i]) {
        ++res.drops;
        rte_pktmbuf_free(pkts[i]);
      }
    res.packets += n;
  }
  res.seconds = static_cast<double>(now - t0) / static_cast<double>(hz);
  res.cpu_seconds = thread_cpu() - c0;
  for (uint32_t p = 0; p < kPairs; ++p) s.set_window(p, ufab::HierScheduler<rte_mbuf*>::kMaxWindow);
  for (size_t n; (n = s.dequeue_burst(pkts, lens, ids, kBurst)) != 0;) rte_pktmbuf_free_bulk(pkts, static_cast<unsigned>(n));
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  const int used = rte_eal_init(argc, argv);
  if (used < 0) {
    std::fprintf(stderr, "bench-sched: EAL initialisation failed\n");
    return 1;
  }
  argc -= used;
  argv += used;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  const uint32_t len = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 64;
  if (!(seconds > 0) || len < 60 || len > 1518) {
    std::fprintf(stderr, "usage: ufab-bench-rte-sched [EAL options] -- [SECONDS > 0] [FRAME_LEN 60..1518]\n");
    return 2;
  }
  rte_mempool* pool =
      rte_pktmbuf_pool_create("bench_pool", kBacklog + 4 * kBurst + 1023, 256, 0, 128 + RTE_PKTMBUF_HEADROOM, 0);
  if (pool == nullptr) {
    std::fprintf(stderr, "bench-sched: mbuf pool: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  std::printf("bench-sched frame_len=%u seconds=%.1f backlog=%u rate_limits=400Gb/s (not binding)\n", len, seconds,
              kBacklog);
  print("rte_sched_4096_pipes", run_rte_sched(pool, seconds, len));
  print("hier_scheduler_8192_pairs", run_hier(pool, seconds, len));
  rte_mempool_free(pool);
  rte_eal_cleanup();
  return 0;
}
