// One link of a path as the edge sees it in a probe response (paper Table 2),
// decoded from a wire::HopRecord into SI units.
#pragma once

#include <cstdint>

namespace ufab {

struct LinkView {
  double cap_Bps = 0;      // C_l = eta * C'_l, target capacity (bytes/s)
  double tx_Bps = 0;       // tx_l, measured TX rate (bytes/s)
  double queue_bytes = 0;  // q_l
  double phi_tokens = 0;   // Phi_l, total token of active pairs on l
  double window_bytes = 0; // W_l, total window of active pairs on l
};

}  // namespace ufab
