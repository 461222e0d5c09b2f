// Two-stage traffic admission (paper §3.4, design-notes §3).
//
// Scenario 1: a pair that just joined a path starts at w' = phi * B_u * T.
// Scenario 2: a pair on its path whose actual rate fell below r restarts at
//             w' = r * T.
// Then w' += min_l phi/Phi_l * C_l * T once per base RTT until w' >= w (Eqn 3),
// and from then on w is used. The ramp lets a pair reach its guarantee at once
// and the work-conserving bonus a little slower, which bounds in-flight bytes
// on a link below 3 C_l T_max.
#pragma once

#include "control/clock.hpp"

namespace ufab {

class Admission {
 public:
  enum class Stage { ramp, steady };

  // Scenario 1.
  void join(double phi, double unit_bw_Bps, Nanos T, Nanos now);
  // Scenario 2.
  void restart(double r_Bps, Nanos T, Nanos now);

  // On each accepted response: w_eqn3 = w of Eqn 3 for the path, ramp_step =
  // min_l phi/Phi_l*C_l*T. Applies one increment per whole base RTT elapsed
  // since the last one, switches to steady once w' >= w, and returns the
  // window the pair may use now.
  double update(double w_eqn3, double ramp_step, Nanos now, Nanos T);

  // Scenario-2 test, called once per RTT in the steady stage: the pair's
  // measured rate is below its proportional share r while it has demand.
  bool should_restart(double measured_Bps, double r_Bps, bool backlogged) const {
    return stage_ == Stage::steady && backlogged && measured_Bps < r_Bps;
  }

  Stage stage() const { return stage_; }
  double ramp_window() const { return w_ramp_; }
  double window() const { return window_; }

 private:
  Stage stage_ = Stage::ramp;
  double w_ramp_ = 0;   // w'
  double window_ = 0;   // what the pair may use
  Nanos last_step_ = 0; // time of the last additive increase
};

}  // namespace ufab
