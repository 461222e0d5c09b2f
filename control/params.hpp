// Edge parameters (paper §3.3-§3.5, §4.1, §5.1; design-notes §3). Units are SI:
// bytes, bytes per second, nanoseconds, tokens.
#pragma once

#include <cstdint>

#include "control/clock.hpp"

namespace ufab {

struct EdgeParams {
  double unit_bw_Bps = 125'000'000.0;  // B_u: minimum bandwidth of one token (1 Gb/s)
  double eta = 0.95;                   // C_l = eta * C'_l (target utilization)
  uint64_t probe_every_bytes = 4096;   // L_w: next probe after L_w data bytes (§4.1)
  uint32_t violation_rtts = 5;         // migration trigger (i): consecutive violating RTTs
  uint32_t freeze_max_rtts = 10;       // N: per-host freeze window drawn from [1, N] RTTs
  Nanos better_path_hold_ns = 30 * kSec;  // migration trigger (ii)
  uint32_t probe_timeout_rtts = 8;     // probe loss: no response within 8 base RTTs (§4.1)
  // After consecutive losses on a path the loss timeout doubles, up to this
  // many base RTTs; a response resets it (docs/design.md §14). 8 * 2^7: a
  // path that answers nothing costs one probe per 1024 RTTs, not per 8.
  uint32_t probe_timeout_max_rtts = 1024;
  uint32_t finish_max_retries = 8;     // finish retried until every hop acks
  Nanos idle_finish_ns = 10 * kMs;     // a pair idle this long sends finish
  uint32_t candidate_refresh_rtts = 1000;  // query other candidate paths this often (trigger ii)
  bool reorder_avoidance = false;      // probe-only first RTT on a new path (§3.5)
  // Probe at once when the window is full (or, with no data left, while
  // bytes are unacknowledged), besides every L_w bytes. Keeps a window
  // smaller than L_w updated every RTT when acks move only on responses;
  // costs one probe per RTT per window-limited pair, above the §4.1 bound
  // L_p / (L_p + L_w) when a pair sends less than L_w per RTT. false: the
  // §4.1 rule alone, for an owner whose acks move by time (ufab-edge
  // ack_sweep_us).
  bool probe_on_window_full = true;
  double violation_tolerance = 0.05;   // rate below (1 - tol) * phi * B_u counts as a violation
};

}  // namespace ufab
