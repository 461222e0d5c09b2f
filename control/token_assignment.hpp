// Bandwidth-token assignment (paper §3.3 "Bandwidth token assignment",
// Appendix E Algorithm 1, Appendix F Algorithm 2; design-notes §4.6).
//
// A VM of VF alpha owns phi_alpha = B_min^alpha / B_u tokens on each side.
//  - Sender (TokenAssignment): splits phi_alpha over its VM-pairs; pairs with
//    too little demand keep the fair share, the rest of their share goes to the
//    others; pairs the receiver admitted less than the fair share get exactly
//    the admitted token and their slack is also handed on.
//  - Receiver (TokenAdmission): max-min fair sharing of phi_alpha over the
//    tokens the senders request in their probes. A request below the fair
//    share is answered UNBOUND ("use what you asked for").
//  - The sender then uses effective_token(phi_S, phi_D) = min(phi_S, phi_D).
//  - Multipath (Algorithm 2): a pair's token is split over its paths the same
//    way, without a receiver stage.
//
// Line numbers of Algorithm 1 are reconstructed from the garbled extraction:
// 2 init, 3 phi-bar = phi_alpha/N_S, 4-8 demand loop (7: demand-bounded
// assignment), 9 phi-bar += Y/(N_S-N'), 10 sort on phi_D, 11-15 receiver loop,
// 16-18 redistribution; TokenAdmission 21 init, 22 sort on phi_S, 23-29 loop.
//
// Demand-bounded pairs (Algorithm 1 line 7, Algorithm 2 line 7). The extracted
// listing of Algorithm 1 prints "p.phi_S = p.tx/B_u" with the remark "bounded by
// demand but sender still admits phi-bar", while the text of Appendix E says
// "we assign at least the fair-sharing token to each VM-pair even if its
// demand is insufficient (Line 7)" and Algorithm 2 line 7 sets l.phi = phi-bar.
// We follow the text: a demand-bounded pair gets phi_S = the first fair share
// phi_alpha / N_S, and that one value is both what it uses and what its probes
// report to the receiver. Only its unused part (phi-bar - tx/B_u) is handed to
// the other pairs, so a VM may assign up to phi_alpha + Y tokens in one round
// ("in the worst case, we only assign double the VM-pair's token to the
// network in one RTT"); this lets a pair whose demand jumps reach its fair
// share within one RTT. Invariant: sum over non-demand-bounded pairs of phi_S
// plus sum over demand-bounded pairs of tx/B_u equals phi_alpha whenever at
// least one pair is bounded by neither demand nor receiver.
//
// The listing marks "not yet assigned" with phi_S = 0; we use an internal
// negative marker instead, so a receiver admission of 0 tokens (phi_alpha = 0
// at the receiver) is kept as 0 and not taken for "unassigned".
//
// Two equivalent rewritings keep a 1K-pair round cheap (token_assignment.cpp
// has the argument): phi-bar is computed as pool / (N - N') rather than by the
// incremental updates of lines 9, 14 and 27 (same value, no dependent division
// chain), and the ascending walk of lines 10-15 / 22-27 first takes, in up to
// 8 linear passes, every pair below the current phi-bar, sorting only what is
// left. Results equal the literal listing up to rounding.
//
// Hot-path use: every function works in place on caller-owned storage. The
// index scratch vector is only grown when the pair count grows, so a caller
// that keeps it across rounds allocates nothing per round. Not thread-safe per
// scratch vector.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace ufab {

// Receiver answer "not bounded by the receiver" (UNBOUND in Algorithm 1).
inline constexpr double kTokenUnbound = std::numeric_limits<double>::infinity();

// One VM-pair as Algorithm 1 sees it ("each VM-pair has three fields").
// Sender side (assign_tokens): reads tx_Bps and phi_D, writes phi_S.
// Receiver side (admit_tokens): reads phi_S (from the probe), writes phi_D.
struct PairToken {
  double tx_Bps = 0;              // measured TX rate of the pair, bytes/s
  double phi_S = 0;               // sender-assigned token
  double phi_D = kTokenUnbound;   // receiver-admitted token (last response)
};

// One path of a VM-pair as Algorithm 2 sees it.
struct PathToken {
  double tx_Bps = 0;  // measured TX rate on this path, bytes/s
  double phi = 0;     // assigned token (output)
};

// Design-notes §4.6: the sender uses the smaller of its assigned and the
// receiver's admitted token; UNBOUND leaves phi_S.
inline double effective_token(double phi_S, double phi_D) {
  return phi_D < phi_S ? phi_D : phi_S;
}

// The receiver's answer to a pair that no admission round has included yet
// (a gap in Algorithm 1, closed in docs/design.md §10): until the VM's next
// round, the max-min fair share among equal requests, phi_alpha over the n
// pairs that now ask this VM for tokens (the new one included). A request at
// or below that share is UNBOUND, as in TokenAdmission. Answering UNBOUND
// instead would let each of n simultaneous new senders keep its whole sender
// token, n * phi_alpha in all, until its next response (an incast).
inline double provisional_admission(double phi_alpha, uint32_t n_requesting, double requested) {
  const double share = phi_alpha / static_cast<double>(n_requesting > 0 ? n_requesting : 1);
  return requested > share ? share : kTokenUnbound;
}

// Algorithm 1, TokenAssignment (sender). pairs: all active pairs from one VM.
// unit_bw_Bps = B_u > 0. scratch is resized to at least pairs.size().
void assign_tokens(double phi_alpha, double unit_bw_Bps, std::span<PairToken> pairs,
                   std::vector<uint32_t>& scratch);

// Algorithm 1, TokenAdmission (receiver). pairs: all active pairs towards one
// VM. scratch is resized to at least pairs.size().
void admit_tokens(double phi_alpha, std::span<PairToken> pairs,
                  std::vector<uint32_t>& scratch);

// Algorithm 2, MultipathAssignment. phi_S: the token the pair may use (pass
// effective_token(phi_S, phi_D)); paths: the paths the pair sends on.
void assign_path_tokens(double phi_S, double unit_bw_Bps, std::span<PathToken> paths);

}  // namespace ufab
