// ufab-bench-qos-pipeline [EAL options] -- [SECONDS] [WARMUP_SECONDS]: the
// rte_sched peer of `deploy/ufab bench edge` as a whole application, shaped
// like DPDK's examples/qos_sched but run to completion on one lcore (as
// ufab-edge runs there): RX burst on port 0 -> classify each frame to
// (subport, pipe, traffic class, queue) from fixed header fields -> rte_sched
// enqueue -> rte_sched dequeue -> TX burst on port 1. rte_sched is configured
// as in tests/bench/rte_sched_profile.hpp (4096 pipes, qos_sched's profile,
// rates not binding), so it is ufab-edge's job (RX, classify, schedule, TX)
// minus what only uFAB does (per-pair windows and probes, encapsulation).
//
// Classification reads the IPv4 source and destination at their offsets in an
// untagged frame, as qos_sched reads its fields at fixed offsets:
//   pipe  = (src ^ dst ^ dst >> 12) mod 4096 (the VM pair),
//   class = dst mod 13 (12 strict-priority classes + best effort),
//   queue = src mod 4 within best effort, else 0.
// Frames too short or not IPv4 go to pipe 0, best effort.
//
// Prints "bench-qos rte_sched_pipeline mpps=X mpps_wall=Y rx=... tx=...
// sched_drops=... tx_drops=..." for the SECONDS after WARMUP_SECONDS: X per
// second of this thread's CPU time, Y per wall second (frames sent on port 1);
// then "bench-qos totals ..." over the whole run, with conserved=1 when rx =
// tx + drops + the frames still queued at the end.
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_sched.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "edge/dpdk/port.hpp"
#include "tests/bench/rte_sched_profile.hpp"

namespace {

constexpr uint16_t kBurst = 32;
constexpr uint32_t kEthIpv4 = 0x0800;
constexpr uint32_t kSrcOff = 14 + 12, kDstOff = 14 + 16;  // IPv4 addresses in an untagged frame

void classify(rte_sched_port* sched, rte_mbuf* m) {
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  uint32_t pipe = 0, tc = RTE_SCHED_TRAFFIC_CLASS_BE, queue = 0;
  if (m->data_len >= kDstOff + 4 && (uint32_t{d[12]} << 8 | d[13]) == kEthIpv4) {
    uint32_t src = 0, dst = 0;
    std::memcpy(&src, d + kSrcOff, 4);
    std::memcpy(&dst, d + kDstOff, 4);
    src = rte_be_to_cpu_32(src);
    dst = rte_be_to_cpu_32(dst);
    pipe = (src ^ dst ^ dst >> 12) & (ufab::bench::kPipes - 1);
    tc = dst % RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE;
    queue = tc == RTE_SCHED_TRAFFIC_CLASS_BE ? src & 3 : 0;
  }
  rte_sched_port_pkt_write(sched, m, 0, pipe, tc, queue, RTE_COLOR_GREEN);
}

struct Counts {
  uint64_t rx = 0, tx = 0, sched_drops = 0, tx_drops = 0;
};

// One pass of the pipeline: an RX burst in, a burst out.
void step(rte_sched_port* sched, Counts& c) {
  rte_mbuf* in[kBurst];
  rte_mbuf* out[kBurst];
  const uint16_t n = rte_eth_rx_burst(0, 0, in, kBurst);
  if (n != 0) {
    for (uint16_t i = 0; i < n; ++i) classify(sched, in[i]);
    const int e = rte_sched_port_enqueue(sched, in, n);  // frees what it drops
    c.rx += n;
    c.sched_drops += n - static_cast<uint32_t>(e);
  }
  const int m = rte_sched_port_dequeue(sched, out, kBurst);
  if (m <= 0) return;
  const uint16_t t = rte_eth_tx_burst(1, 0, out, static_cast<uint16_t>(m));
  c.tx += t;
  if (t < m) {
    c.tx_drops += static_cast<uint32_t>(m - t);
    rte_pktmbuf_free_bulk(out + t, static_cast<unsigned>(m - t));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int used = rte_eal_init(argc, argv);
  if (used < 0) {
    std::fprintf(stderr, "bench-qos: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  argc -= used;
  argv += used;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const double warmup = argc > 2 ? std::atof(argv[2]) : 1.0;
  if (!(seconds > 0) || !(warmup >= 0)) {
    std::fprintf(stderr, "usage: ufab-bench-qos-pipeline [EAL options] -- [SECONDS > 0] [WARMUP_SECONDS >= 0]\n");
    return 2;
  }
  if (rte_eth_dev_count_avail() < 2) {
    std::fprintf(stderr, "bench-qos: needs two ports (port 0 receives, port 1 sends), e.g. --vdev"
                         " net_pcap0,rx_pcap=F,infinite_rx=1 --vdev net_null0,no-rx=1\n");
    return 2;
  }
  // rte_sched holds up to 4096 pipes x 16 queues x 64 frames; the pool bounds it.
  rte_mempool* pool = rte_pktmbuf_pool_create("qos_pool", 32767, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  if (pool == nullptr) {
    std::fprintf(stderr, "bench-qos: mbuf pool: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  rte_sched_port* sched = ufab::bench::make_rte_sched();
  if (sched == nullptr) {
    std::fprintf(stderr, "bench-qos: rte_sched configuration failed\n");
    return 1;
  }
  try {
    for (uint16_t p = 0; p < 2; ++p) ufab::dpdk::setup_port(p, pool, ufab::dpdk::PortConfig{});
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "bench-qos: %s\n", e.what());
    return 1;
  }
  const uint64_t hz = rte_get_tsc_hz();
  Counts c;
  const uint64_t w_end = rte_rdtsc() + static_cast<uint64_t>(warmup * static_cast<double>(hz));
  for (uint32_t it = 0; (it & 63) != 0 || rte_rdtsc() < w_end; ++it) step(sched, c);
  const Counts c0 = c;
  const double cpu0 = ufab::bench::thread_cpu();
  const uint64_t t0 = rte_rdtsc();
  const uint64_t stop = t0 + static_cast<uint64_t>(seconds * static_cast<double>(hz));
  uint64_t now = t0;
  for (uint32_t it = 0;; ++it) {
    if ((it & 63) == 0 && (now = rte_rdtsc()) >= stop) break;
    step(sched, c);
  }
  const double cpu = ufab::bench::thread_cpu() - cpu0;
  const double wall = static_cast<double>(now - t0) / static_cast<double>(hz);
  const uint64_t tx = c.tx - c0.tx;
  std::printf("bench-qos rte_sched_pipeline mpps=%.3f mpps_wall=%.3f rx=%" PRIu64 " tx=%" PRIu64
              " sched_drops=%" PRIu64 " tx_drops=%" PRIu64 " seconds=%.3f cpu_seconds=%.3f\n",
              cpu > 0 ? static_cast<double>(tx) / cpu / 1e6 : 0.0, static_cast<double>(tx) / wall / 1e6, c.rx - c0.rx,
              tx, c.sched_drops - c0.sched_drops, c.tx_drops - c0.tx_drops, wall, cpu);
  std::fflush(stdout);
  // Every frame received is accounted for: sent, dropped (by rte_sched or a
  // full TX queue) or still queued at the end (drained and freed here).
  rte_mbuf* left[kBurst];
  uint64_t drained = 0;
  for (int n; (n = rte_sched_port_dequeue(sched, left, kBurst)) > 0; drained += static_cast<uint64_t>(n))
    rte_pktmbuf_free_bulk(left, static_cast<unsigned>(n));
  std::printf("bench-qos totals rx=%" PRIu64 " tx=%" PRIu64 " sched_drops=%" PRIu64 " tx_drops=%" PRIu64
              " drained=%" PRIu64 " conserved=%d\n",
              c.rx, c.tx, c.sched_drops, c.tx_drops, drained, c.rx == c.tx + c.sched_drops + c.tx_drops + drained);
  std::fflush(stdout);
  for (uint16_t p = 0; p < 2; ++p) ufab::dpdk::close_port(p);
  rte_sched_port_free(sched);
  rte_eal_cleanup();
  return 0;
}
