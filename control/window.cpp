#include "control/window.hpp"

#include <algorithm>
#include <limits>

namespace ufab {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

double token_share_Bps(double phi, const LinkView& l) {
  if (l.cap_Bps <= 0) return kInf;
  if (phi <= 0) return 0;
  return phi / effective_phi_l(phi, l) * l.cap_Bps;  // Eqn 1
}

double rate_Bps(double phi, double R_l_Bps, const LinkView& l) {
  if (l.cap_Bps <= 0) return kInf;
  if (phi <= 0) return 0;
  if (l.tx_Bps <= 0) return l.cap_Bps;
  const double R = phi / effective_phi_l(phi, l) * R_l_Bps * (l.cap_Bps / l.tx_Bps);  // Eqn 2
  return std::min(R, l.cap_Bps);
}

double window_bytes(double phi, double own_prev_w, const LinkView& l, Nanos T) {
  if (l.cap_Bps <= 0) return kInf;
  if (phi <= 0) return 0;
  const double cT = bdp_bytes(l.cap_Bps, T);
  const double load = l.tx_Bps * static_cast<double>(T) * 1e-9 + l.queue_bytes;  // tx_l*T + q_l
  if (load <= 0) return cT;
  double W = std::max(l.window_bytes, own_prev_w);
  if (W <= 0) W = load;
  const double w = phi / effective_phi_l(phi, l) * W * (cT / load);  // Eqn 3
  return std::min(w, cT);
}

PathWindow path_window(double phi, std::span<const LinkView> links,
                       std::span<const double> own_prev_w, Nanos T,
                       std::span<double> w_per_link) {
  if (T == 0) return PathWindow{};  // guard: a base RTT of zero admits nothing
  if (phi <= 0) return PathWindow{0, 0, 0, 0};
  // Same guards as window_bytes/token_share_Bps/rate_Bps, with one division
  // for phi/Phi_l and the load term per link (the per-response hot path).
  // The loop keeps its results in locals (a store through w_per_link could
  // alias them) and reads the spans' sizes once.
  const double t_s = static_cast<double>(T) * 1e-9;
  const size_t n = links.size();
  const size_t n_prev = own_prev_w.size();
  const size_t n_out = w_per_link.size();
  double best_w = kInf, best_r = kInf;
  size_t bottleneck = 0;
  for (size_t i = 0; i < n; ++i) {
    const LinkView& l = links[i];
    double w = kInf;
    if (l.cap_Bps > 0) {
      const double phi_l = effective_phi_l(phi, l);
      const double cT = l.cap_Bps * t_s;                   // C_l * T
      const double load = l.tx_Bps * t_s + l.queue_bytes;  // tx_l*T + q_l
      const double prev = i < n_prev ? own_prev_w[i] : 0.0;
      double W = l.window_bytes > prev ? l.window_bytes : prev;
      double r;
      if (load <= 0) {
        r = phi * l.cap_Bps / phi_l;  // Eqn 1
        w = cT;                       // idle link
      } else {
        if (W <= 0) W = load;
        const double inv = 1.0 / (phi_l * load);      // the one division
        r = phi * l.cap_Bps * load * inv;             // Eqn 1: phi/Phi_l * C_l
        w = std::min(phi * W * cT * inv, cT);         // Eqn 3
      }
      best_r = std::min(best_r, r);
    }
    if (i < n_out) w_per_link[i] = w;
    if (w < best_w) {
      best_w = w;
      bottleneck = i;
    }
  }
  // ramp_step = min_l r^l * T: T > 0 and rounding is monotonic, so
  // min_l (r^l * T) == (min_l r^l) * T exactly; one multiplication, not n.
  return PathWindow{best_w, best_r, best_r * t_s, bottleneck};
}

double path_rate_Bps(double phi, std::span<const LinkView> links, Nanos T) {
  if (T == 0) return 0;
  double R = kInf;
  for (const LinkView& l : links) R = std::min(R, rate_Bps(phi, l.window_bytes / (static_cast<double>(T) * 1e-9), l));
  return R;
}

}  // namespace ufab
