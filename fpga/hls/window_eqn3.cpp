// Eqn 3 in fixed point (see window_eqn3.hpp). All arithmetic is 64/128-bit
// integer; the one division per link is a reciprocal of the load term
// (an HLS divider core), the rest are multiplies and shifts.
#include "fpga/hls/window_eqn3.hpp"

namespace ufab::hls {

namespace {

__extension__ typedef unsigned __int128 u128;  // the HLS tool's ap_uint<128>

// bytes/s * ns / 1e9 = bytes, rounded down (C_l*T, tx_l*T)
inline uint64_t rate_times_T(uint64_t Bps, uint64_t T_ns) {
  return static_cast<uint64_t>((static_cast<u128>(Bps) * T_ns) / 1'000'000'000u);
}

}  // namespace

uint64_t window_link_fx(Token phi, uint64_t own_prev_w, const LinkFx& l, uint64_t T_ns) {
  if (l.cap_Bps == 0) return kNoConstraint;
  if (phi.raw == 0) return 0;
  const uint64_t cT = rate_times_T(l.cap_Bps, T_ns);
  const uint64_t load = rate_times_T(l.tx_Bps, T_ns) + l.queue_bytes;  // tx_l*T + q_l
  if (load == 0) return cT;
  const uint64_t phi_l = l.phi_tokens.raw > phi.raw ? l.phi_tokens.raw : phi.raw;
  uint64_t W = l.window_bytes > own_prev_w ? l.window_bytes : own_prev_w;
  if (W == 0) W = load;
  // w = phi * W * cT / (phi_l * load): numerator and denominator in 128 bits
  const u128 num = static_cast<u128>(phi.raw) * W;          // Q16.16 * bytes
  const u128 den = static_cast<u128>(phi_l) * load;         // Q16.16 * bytes
  // share = phi*W / (phi_l*load) as Q.32, then times cT
  const u128 share_q32 = (num << 32) / den;
  const u128 w = (share_q32 * cT) >> 32;
  return w > cT ? cT : static_cast<uint64_t>(w);
}

uint64_t path_window_fx(Token phi, const LinkFx* links, const uint64_t* own_prev_w, int n, uint64_t T_ns) {
  uint64_t w = kNoConstraint;
  if (T_ns == 0) return 0;
  for (int i = 0; i < kMaxHops; ++i) {  // fixed trip count: unrolls in HLS
    if (i < n) {
      const uint64_t wl = window_link_fx(phi, own_prev_w[i], links[i], T_ns);
      w = wl < w ? wl : w;
    }
  }
  return w;
}

}  // namespace ufab::hls
