// Eqn 3 (paper §3.4) in fixed point, written in synthesizable HLS style for
// the FPGA edge (μFAB-E, §4.1): no floating point, no division on the data
// path except one reciprocal per link, bounded loops, plain integer types (no
// vendor headers; UFix is a tiny unsigned fixed-point helper).
//
//   w^l = min( phi / Phi_l * W_l * C_l*T / (tx_l*T + q_l),  C_l*T )
//   w   = min_l w^l
//
// with the guards of ufab::window_bytes (control/window.cpp):
//   Phi_l < phi -> Phi_l := phi;  W_l := max(W_l, own previous w^l);
//   W_l = 0 -> W_l := tx_l*T + q_l;  load = 0 -> C_l*T;  C_l = 0 -> no constraint.
//
// Units: bytes and nanoseconds as integers, tokens as Q16.16.
// Error bound (test_window_eqn3.cpp) against the double-precision model:
// |w_fx - w| <= w * (2^-20 + 1/load) + 2 bytes, load = tx_l*T + q_l in bytes
// (C_l*T and tx_l*T are floored to whole bytes).
#pragma once

#include <cstdint>

namespace ufab::hls {

inline constexpr int kMaxHops = 8;  // loop bound for the path (paths have <= 5 hops in the paper)

// Unsigned fixed point with F fractional bits in 64 bits (ap_ufixed-like).
template <int F>
struct UFix {
  uint64_t raw = 0;
  static constexpr UFix from_int(uint64_t v) { return UFix{v << F}; }
  static constexpr UFix from_raw(uint64_t r) { return UFix{r}; }
  constexpr uint64_t to_int() const { return raw >> F; }
};

using Token = UFix<16>;  // Q16.16 tokens (phi, Phi_l)

struct LinkFx {
  uint64_t cap_Bps = 0;       // C_l (bytes/s); 0: unknown, no constraint
  uint64_t tx_Bps = 0;        // tx_l (bytes/s)
  uint64_t queue_bytes = 0;   // q_l
  Token phi_tokens;           // Phi_l
  uint64_t window_bytes = 0;  // W_l
};

inline constexpr uint64_t kNoConstraint = UINT64_MAX;

// w^l for one link (bytes, rounded down). T in ns.
uint64_t window_link_fx(Token phi, uint64_t own_prev_w, const LinkFx& l, uint64_t T_ns);

// min over the first n links (n <= kMaxHops); own_prev_w[i] per link.
uint64_t path_window_fx(Token phi, const LinkFx* links, const uint64_t* own_prev_w, int n, uint64_t T_ns);

}  // namespace ufab::hls
