// What a worker and the control lcore exchange for Algorithm 1 (App. E)
// without locks: per field one writer, relaxed atomics (each value stands on
// its own; a round that reads one a period old is what the paper's 32 us
// token period already allows).
//  - per sender pair, written by its worker at the end of each tick: whether
//    it is active (queued or in-flight bytes), its delivered rate, and phi_D
//    from the receiver's last response; written by the control lcore: phi_S.
//  - per receiver-side pair, written by the worker when a probe arrives: the
//    phi_S it requests; written by the control lcore: phi_D it is admitted.
#pragma once

#include <atomic>

#include "control/token_assignment.hpp"

namespace ufab::pipeline {

struct PairShare {
  std::atomic<bool> active{false};
  std::atomic<double> rate_Bps{0};
  std::atomic<double> admitted{kTokenUnbound};
  std::atomic<double> assigned{1.0};  // VmPair's initial phi_S
};

// IncomingShare::admitted before the first admission round that included
// the pair (the worker then answers provisional_admission).
inline constexpr double kTokenNotYetAdmitted = -1.0;

struct IncomingShare {
  std::atomic<double> requested{0};  // 0 after finish
  std::atomic<double> admitted{kTokenNotYetAdmitted};
};

}  // namespace ufab::pipeline
