// The worker lcore's loop (qos_sched's "mixed thread": RX, scheduling, TX
// and, in this version, the control work on one core): poll the VM ports,
// the fabric port, the control tick every token period, the scheduler, flush
// the TX buffers, answer telemetry, print counters.
#pragma once

#include <csignal>

#include "control/clock.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "pipeline/edge_state.hpp"
#include "pipeline/telemetry.hpp"

namespace ufab::pipeline {

struct LoopConfig {
  Nanos stats_interval = kSec;  // 0: only the final report
  Nanos exit_after_idle = 0;    // 0: until *stop
};

void run(EdgeState& s, Telemetry& tel, const LoopConfig& cfg, const dpdk::TscClock& clock,
         const volatile std::sig_atomic_t* stop);

// Final report: totals, ports, pairs, receiver-side pairs.
void print_report(const EdgeState& s, Nanos now);

}  // namespace ufab::pipeline
