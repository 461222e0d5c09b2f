// The rte_sched peer's configuration, shared by ufab-bench-rte-sched (the
// scheduler alone) and ufab-bench-qos-pipeline (RX -> classify -> rte_sched
// -> TX on ports): one port, one subport, 4096 pipes of 16 queues (12 strict
// priority traffic classes + 4 WRR best-effort queues), 64-packet queues,
// the shape of examples/qos_sched's profile (tc_period 40 ms in the pipes,
// 10 ms in the subport, WRR weights 1:1:1:1, tc_ov_weight 1, 24 B of frame
// overhead). Its rates are raised from 10 GbE to 400 Gb/s at every level, so
// the token buckets never hold a packet back: like HierScheduler with open
// windows, the scheduler is work conserving and what is measured is its CPU
// cost, not a shaper's rate.
#pragma once

#include <rte_sched.h>

#include <cstdint>
#include <ctime>

namespace ufab::bench {

inline constexpr uint32_t kPipes = 4096;
inline constexpr uint32_t kQueueSize = 64;
inline constexpr uint64_t kRateBps = 400'000'000'000ull / 8;  // bytes per second at every level

// nullptr when rte_sched refuses the configuration.
inline rte_sched_port* make_rte_sched() {
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

// This thread's CPU time in seconds (the machine may be shared: rates are
// per CPU-second of the polling thread).
inline double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace ufab::bench
