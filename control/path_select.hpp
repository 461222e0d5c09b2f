// Path qualification and selection (paper §3.3, §3.5; design-notes §3).
#pragma once

#include <span>

#include "control/clock.hpp"
#include "control/link_view.hpp"

namespace ufab {

// A candidate path as last seen in a probe response.
struct PathCandidate {
  std::span<const LinkView> links;
  bool counted = false;  // the pair's phi is already inside Phi_l (it is active on this path)
  bool usable = true;    // false: no telemetry yet, failed, or probe lost
};

// Subscription of a path if the pair were on it: max_l (Phi_l + phi') * B_u / C_l,
// phi' = 0 when the pair is already counted. <= 1 means qualified.
double path_subscription(const PathCandidate& p, double phi, double unit_bw_Bps);

// Qualified: C_l >= (Phi_l + phi') * B_u on every link (§3.3, §3.5).
bool path_qualified(const PathCandidate& p, double phi, double unit_bw_Bps);

// §3.5: among qualified paths pick one at random with a preference for the
// least subscribed: path i is drawn with probability proportional to its
// headroom 1 - subscription_i (a path at exactly 1 keeps a small weight so a
// fully subscribed but qualified path can still be chosen). skip excludes one
// index (the path being left). Returns -1 if no path qualifies.
int select_path(std::span<const PathCandidate> paths, double phi, double unit_bw_Bps, Rng& rng,
                int skip = -1);

// Migration trigger (ii) (§3.5): the qualified path with the largest R
// (rates[i], e.g. PathWindow::R), or -1.
int best_rate_path(std::span<const PathCandidate> paths, std::span<const double> rates,
                   double phi, double unit_bw_Bps);

}  // namespace ufab
