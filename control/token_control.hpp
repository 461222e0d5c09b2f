// One VM's side of bandwidth-token assignment as the control thread runs it
// every token period (32 us by default, §5.1): the VM's pairs as Algorithm 1
// sees them plus the scratch the algorithm sorts in, kept across rounds so a
// round allocates nothing (App. E; control/token_assignment.hpp).
//  - sender side: fill each pair's tx_Bps and phi_D, call assign(), read phi_S;
//  - receiver side: fill each pair's phi_S (requested in its probes), call
//    admit(), read phi_D (kTokenUnbound = UNBOUND, wire 0xffffffff).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "control/token_assignment.hpp"

namespace ufab {

class VmTokens {
 public:
  explicit VmTokens(double phi_alpha = 0) : phi_alpha_(phi_alpha) {}

  void set_guarantee_tokens(double phi_alpha) { phi_alpha_ = phi_alpha; }
  double guarantee_tokens() const { return phi_alpha_; }

  // The pairs of this VM; resize() only when pairs come or go.
  void resize(size_t n) {
    pairs_.resize(n);
    scratch_.reserve(n);
  }
  std::span<PairToken> pairs() { return pairs_; }

  // Algorithm 1, TokenAssignment (sender VM).
  void assign(double unit_bw_Bps) { assign_tokens(phi_alpha_, unit_bw_Bps, pairs_, scratch_); }
  // Algorithm 1, TokenAdmission (receiver VM).
  void admit() { admit_tokens(phi_alpha_, pairs_, scratch_); }

 private:
  double phi_alpha_;
  std::vector<PairToken> pairs_;
  std::vector<uint32_t> scratch_;
};

}  // namespace ufab
