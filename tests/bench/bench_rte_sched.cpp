// ufab-bench-rte-sched [EAL options] -- [SECONDS] [FRAME_LEN]: the peer of
// `deploy/ufab bench edge`: DPDK's hierarchical scheduler (librte_sched)
// and ours (sched/hier_scheduler.hpp) doing the same job on one core, an
// enqueue plus a dequeue per packet on rte_mbufs, in steady state.
//
// rte_sched: one port, one subport, 4096 pipes of 16 queues (12 strict
// priority traffic classes + 4 WRR best-effort queues), 64-packet queues,
// the shape of examples/qos_sched's profile (tc_period 40 ms in the pipes,
// 10 ms in the subport, WRR weights 1:1:1:1, tc_ov_weight 1, 24 B of frame
// overhead). Its rates are raised from 10 GbE to 400 Gb/s at every level, so
// the token buckets never hold a packet back: like HierScheduler with open
// windows, the scheduler is work conserving and what is measured is its CPU
// cost, not a shaper's rate.
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

namespace {

constexpr uint32_t kPipes = 4096;
constexpr uint32_t kQueueSize = 64;
constexpr uint32_t kBacklog = 65536;
constexpr uint32_t kBurst = 32;
constexpr uint64_t kRateBps = 400'000'000'000ull / 8;  // bytes per second at every level

struct Rng {  // xorshift64
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

rte_sched_port* make_rte_sched() {
  static rte_sched_subport_profile_params subport_profile{};
  subport_profile.tb_rate = kRateBps;
  subport_profile.tb_size = 1'000'000;
  for (uint64_t& r : subport_profile.tc_rate) r = kRateBps;
  subport_profile.tc_period = 10;
  rte_sched_port_params pp{};
  pp.name = "bench_port";
  pp.socket = 0;
  pp.rate = kRateBps;
  pp.mtu = 1522;
  pp.frame_overhead = RTE_SCHED_FRAME_OVERHEAD_DEFAULT;
  pp.n_subports_per_port = 1;
  pp.subport_profiles = &subport_profile;
  pp.n_subport_profiles = 1;
  pp.n_max_subport_profiles = 1;
  pp.n_pipes_per_subport = kPipes;
  rte_sched_port* port = rte_sched_port_config(&pp);
  if (port == nullptr) return nullptr;

  static rte_sched_pipe_params pipe{};
  pipe.tb_rate = kRateBps;
  pipe.tb_size = 1'000'000;
  for (uint64_t& r : pipe.tc_rate) r = kRateBps;
  pipe.tc_period = 40;
  pipe.tc_ov_weight = 1;
  for (uint8_t& w : pipe.wrr_weights) w = 1;
  rte_sched_subport_params sp{};
  sp.n_pipes_per_subport_enabled = kPipes;
  for (uint16_t& q : sp.qsize) q = kQueueSize;
  sp.pipe_profiles = &pipe;
  sp.n_pipe_profiles = 1;
  sp.n_max_pipe_profiles = 1;
  if (rte_sched_subport_config(port, 0, &sp, 0) != 0) return nullptr;
  for (uint32_t p = 0; p < kPipes; ++p)
    if (rte_sched_pipe_config(port, 0, p, 0) != 0) return nullptr;
  return port;
}

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

double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

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
