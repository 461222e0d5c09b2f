#include "control/path_select.hpp"

#include <algorithm>

namespace ufab {

double path_subscription(const PathCandidate& p, double phi, double unit_bw_Bps) {
  const double extra = p.counted ? 0.0 : phi;
  double sub = 0;
  for (const LinkView& l : p.links) {
    if (l.cap_Bps <= 0) continue;  // unknown capacity: no information, no constraint
    const double total = std::max(l.phi_tokens, p.counted ? phi : 0.0) + extra;
    sub = std::max(sub, total * unit_bw_Bps / l.cap_Bps);
  }
  return sub;
}

bool path_qualified(const PathCandidate& p, double phi, double unit_bw_Bps) {
  return p.usable && !p.links.empty() && path_subscription(p, phi, unit_bw_Bps) <= 1.0;
}

int select_path(std::span<const PathCandidate> paths, double phi, double unit_bw_Bps, Rng& rng,
                int skip) {
  constexpr double kMinWeight = 1e-3;
  double total = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (static_cast<int>(i) == skip || !path_qualified(paths[i], phi, unit_bw_Bps)) continue;
    total += std::max(1.0 - path_subscription(paths[i], phi, unit_bw_Bps), kMinWeight);
  }
  if (total <= 0) return -1;
  double x = rng.unit() * total;
  int last = -1;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (static_cast<int>(i) == skip || !path_qualified(paths[i], phi, unit_bw_Bps)) continue;
    last = static_cast<int>(i);
    x -= std::max(1.0 - path_subscription(paths[i], phi, unit_bw_Bps), kMinWeight);
    if (x < 0) return last;
  }
  return last;  // rounding at the top end
}

int best_rate_path(std::span<const PathCandidate> paths, std::span<const double> rates,
                   double phi, double unit_bw_Bps) {
  int best = -1;
  for (size_t i = 0; i < paths.size() && i < rates.size(); ++i) {
    if (!path_qualified(paths[i], phi, unit_bw_Bps)) continue;
    if (best < 0 || rates[i] > rates[static_cast<size_t>(best)]) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace ufab
