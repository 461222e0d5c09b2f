// Path migration triggers and the per-host freeze window (paper §3.5).
#pragma once

#include <cstdint>

#include "control/clock.hpp"

namespace ufab {

// §3.5 "Avoiding oscillations": when the minimum guarantee is violated, a host
// allows one migration per freeze window, drawn uniformly from [1, N] RTTs
// after each migration. One gate per host, shared by all of its VM-pairs
// (owned by the control thread, so no locking).
class HostMigrationGate {
 public:
  HostMigrationGate(uint32_t freeze_max_rtts, uint64_t seed) : n_(freeze_max_rtts ? freeze_max_rtts : 1), rng_(seed) {}
  // True if a migration may happen now; it then opens a new freeze window.
  bool try_acquire(Nanos now, Nanos rtt);
  Nanos frozen_until() const { return until_; }
  uint64_t granted() const { return granted_; }
  uint64_t refused() const { return refused_; }

 private:
  uint32_t n_;
  Rng rng_;
  Nanos until_ = 0;
  uint64_t granted_ = 0, refused_ = 0;
};

// Per VM-pair trigger state.
class MigrationMonitor {
 public:
  MigrationMonitor(uint32_t violation_rtts, Nanos better_hold_ns)
      : need_(violation_rtts), hold_(better_hold_ns) {}

  // Trigger (i): called once per RTT; true when the guarantee has been
  // violated for violation_rtts consecutive RTTs (the count then restarts).
  bool on_rtt(bool violated);
  // Trigger (ii): called on each evaluation with the best qualified candidate
  // whose R beats the current path's (-1 if none). True once the same path has
  // been better continuously for better_hold_ns.
  bool on_better(int better_path, Nanos now);
  void reset();

  uint32_t consecutive_violations() const { return violations_; }
  int better_path() const { return better_; }

 private:
  uint32_t need_;
  Nanos hold_;
  uint32_t violations_ = 0;
  int better_ = -1;
  Nanos better_since_ = 0;
};

}  // namespace ufab
