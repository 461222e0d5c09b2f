#include "control/admission.hpp"

#include <algorithm>

#include "control/window.hpp"

namespace ufab {

void Admission::join(double phi, double unit_bw_Bps, Nanos T, Nanos now) {
  stage_ = Stage::ramp;
  w_ramp_ = bdp_bytes(phi * unit_bw_Bps, T);  // w' = phi * B_u * T
  window_ = w_ramp_;
  last_step_ = now;
}

void Admission::restart(double r_Bps, Nanos T, Nanos now) {
  stage_ = Stage::ramp;
  w_ramp_ = bdp_bytes(r_Bps, T);  // w' = r * T
  window_ = w_ramp_;
  last_step_ = now;
}

double Admission::update(double w_eqn3, double ramp_step, Nanos now, Nanos T) {
  if (stage_ == Stage::ramp) {
    if (T > 0 && now > last_step_) {
      const Nanos steps = (now - last_step_) / T;  // one increase per base RTT
      if (steps > 0) {
        w_ramp_ += static_cast<double>(steps) * ramp_step;
        last_step_ += steps * T;
      }
    }
    if (w_ramp_ >= w_eqn3) stage_ = Stage::steady;
  }
  window_ = stage_ == Stage::ramp ? w_ramp_ : w_eqn3;
  return window_;
}

}  // namespace ufab
