// Bandwidth allocation and traffic admission equations (paper §3.3, §3.4;
// design-notes §3). Rates in bytes/s, windows in bytes, T in nanoseconds.
#pragma once

#include <cstddef>
#include <span>

#include "control/clock.hpp"
#include "control/link_view.hpp"

namespace ufab {

// C_l * T in bytes: one bandwidth-delay product of link l at base RTT T.
inline double bdp_bytes(double cap_Bps, Nanos T) {
  return cap_Bps * static_cast<double>(T) * 1e-9;
}

// Phi_l as the pair must see it. Guard: the pair's own token is always part
// of Phi_l, so Phi_l < phi means the switch has not counted the pair yet (first
// probe in flight, slot-table omission, or a switch reboot).
inline double effective_phi_l(double phi, const LinkView& l) {
  return l.phi_tokens > phi ? l.phi_tokens : phi;
}

// Eqn 1: r^l = phi / Phi_l * C_l. Links of unknown capacity (C_l = 0) give
// no constraint and return +inf.
double token_share_Bps(double phi, const LinkView& l);

// Eqn 2: R^l = min(phi / Phi_l * R_l * C_l / tx_l, C_l). Guard: tx_l = 0 (an
// idle link) gives C_l.
double rate_Bps(double phi, double R_l_Bps, const LinkView& l);

// Eqn 3: w^l = min(phi / Phi_l * W_l * C_l*T / (tx_l*T + q_l), C_l*T).
// own_prev_w is the pair's own w^l from its last probe. Guards:
//  - W_l < own_prev_w (switch rebooted, or the probe raced an update):
//    W_l := own_prev_w, as W_l always includes the pair's own window;
//  - W_l = 0 with no own window yet: W_l := tx_l*T + q_l, the in-flight
//    bytes the link reports, which makes w^l = phi/Phi_l * C_l * T = r^l * T;
//  - tx_l*T + q_l = 0 (idle link): w^l = C_l*T;
//  - C_l = 0 (unknown capacity code): no constraint, +inf.
double window_bytes(double phi, double own_prev_w, const LinkView& l, Nanos T);

// The per-path results of one response: w = min_l w^l, r = min_l r^l, and
// the bottleneck link of w.
struct PathWindow {
  double w = 0;
  double r = 0;
  double ramp_step = 0;  // min_l phi/Phi_l * C_l * T: the two-stage additive increase (§3.4)
  size_t bottleneck = 0;
};
// w_per_link (optional, size >= links.size()) receives each w^l: the values
// the next probe carries in its hop records.
PathWindow path_window(double phi, std::span<const LinkView> links,
                       std::span<const double> own_prev_w, Nanos T,
                       std::span<double> w_per_link = {});

// R = min_l R^l (Eqn 2), with R_l taken as W_l / T (the link's total window
// per base RTT: the wire does not carry R_l). Used by migration trigger (ii).
double path_rate_Bps(double phi, std::span<const LinkView> links, Nanos T);

// §3.4: the bound on in-flight bytes on a link when every pair starts at once
// in Scenario 2: sum_r r^l T + sum phi/Phi_l C_l T + tx_l T_max < 3 C_l T_max.
inline double inflight_bound_bytes(double cap_Bps, Nanos T_max) { return 3.0 * bdp_bytes(cap_Bps, T_max); }

}  // namespace ufab
