// The lcore loops (layout.hpp):
//  - a worker: poll the ports it is the RX lcore of (VM ports only while
//    running), its RX ring, its tick every token period (tokens in, pair
//    timers, tokens out), the scheduler, the TX rings it sends for, flush the
//    TX buffers, run the control lcore's commands;
//  - the control lcore: Alg. 1 every token period, telemetry, SIGHUP reload,
//    the stats line, the idle exit, the stop sequence;
//  - with one lcore both in one loop (qos_sched's mixed thread), as before.
#pragma once

#include <csignal>

#include "control/clock.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "pipeline/edge.hpp"
#include "pipeline/telemetry.hpp"

namespace ufab::pipeline {

struct LoopConfig {
  Nanos stats_interval = kSec;  // 0: only the final report
  Nanos exit_after_idle = 0;    // 0: until a signal
  Nanos stop_timeout = kSec;    // bound of the drain and of the finish-ack wait
  // An idle lcore's sleep once 256 polls in a row found nothing (nap(),
  // worker.cpp): with nothing queued, and with frames queued behind windows.
  // 0: never sleep (busy-poll).
  Nanos idle_nap = 50 * kUs;
  Nanos queued_nap = 5 * kUs;
  const volatile std::sig_atomic_t* stop = nullptr;  // signals received (SIGINT/SIGTERM)
  volatile std::sig_atomic_t* reload = nullptr;      // SIGHUP pending
};

// Runs until the idle exit or the stop sequence ends; the workers have
// returned when it does.
void run(Edge& e, Telemetry& tel, const LoopConfig& cfg, const dpdk::TscClock& clock);

// Final report: totals, ports, pairs, receiver-side pairs, workers.
void print_report(Edge& e, Nanos now);

}  // namespace ufab::pipeline
