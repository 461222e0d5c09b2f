#include "pipeline/stop.hpp"

#include <cinttypes>
#include <cstdio>

#include "pipeline/edge.hpp"
#include "pipeline/log.hpp"

namespace ufab::pipeline {

namespace {
constexpr Nanos kCheckEvery = 100 * kUs;
}

void StopSequence::start(Edge& e, Nanos now) {
  started_ = true;
  deadline_ = now + timeout_;
  next_check_ = now;
  e.phase.store(Phase::draining, std::memory_order_release);
  UFAB_LOG(INFO, "stop: draining the queues (at most %" PRIu64 " ms)", timeout_ / kMs);
}

bool StopSequence::step(Edge& e, Nanos now) {
  if (now < next_check_) return false;
  next_check_ = now + kCheckEvery;
  switch (e.phase.load(std::memory_order_acquire)) {
    case Phase::draining: {
      const uint64_t queued = totals(e).queued;
      if (queued != 0 && now < deadline_) return false;
      uint64_t finished = 0;
      e.on_workers([&](EdgeState& s) {
        s.stopping = true;
        for (VmPair& p : s.pairs) {
          finished += p.state() == VmPair::State::active;
          p.finish_now(now);
        }
        s.wake_all();  // finishes to send, and no pair rejoins for what is queued
      });
      std::printf("ufab-edge stop: drained (queued=%" PRIu64 "), finishing %" PRIu64 " active pairs\n", queued, finished);
      std::fflush(stdout);
      deadline_ = now + timeout_;
      e.phase.store(Phase::finishing, std::memory_order_release);
      return false;
    }
    case Phase::finishing: {
      uint64_t pending = 0, acked = 0, gave_up = 0, abandoned = 0;
      e.on_workers([&](EdgeState& s) {
        for (const VmPair& p : s.pairs) {
          pending += p.finish_pending();
          acked += p.counters().finish_acked;
          gave_up += p.counters().finish_gave_up;
          abandoned += p.counters().finish_abandoned;
        }
      });
      if (pending != 0 && now < deadline_) return false;
      // gave_up: a finish retried 1 + finish_max_retries times without every
      // hop's ack; abandoned: a finish on a path whose uplink is down, never
      // sent (the switches' aging removes the pair, §4.2).
      std::printf("ufab-edge stop: finish %s (finish_acks=%" PRIu64 " gave_up=%" PRIu64 " abandoned=%" PRIu64
                  " pending=%" PRIu64 ")\n",
                  pending == 0 ? "done" : "timed out", acked, gave_up, abandoned, pending);
      std::fflush(stdout);
      e.phase.store(Phase::exit, std::memory_order_release);
      return true;
    }
    case Phase::exit: return true;
    case Phase::running: return false;
  }
  return false;
}

}  // namespace ufab::pipeline
