// Wire units of every uFAB field (design-notes §4.4, docs/wire-format.md).
//
// The paper (App. G) packs a hop into 64 bits; its 16-bit sums overflow long
// before 20K VM-pairs. ufab widens a hop record to 128 bits (16 B, as HPCC-style
// INT budgets suggest) and fixes these units, chosen so that the switch's sums
// over 20,000 VM-pairs on a 400 Gb/s link fit their fields:
//
//   token   phi, Phi_l : 1/64 token, u32 -> 20K pairs x 1023 tokens x 64 = 1.3e9 < 2^32
//   window  w, W_l     : 64 bytes,   u32 -> 20K x (400 Gb/s x 100 us = 5 MB) / 64 = 1.56e9 < 2^32
//   tx rate tx_l       : 1 Mb/s,     u24 -> 16.7 Tb/s
//   queue   q_l        : 64 bytes,   u24 -> 1 GiB
//   capacity C'_l      : 4-bit code, see capacity_code_bps()
//
// A pair's window is capped at C_l*T (Eqn 3), so with base RTTs up to 100 us
// on 400 Gb/s every per-pair value is <= 5 MB; W_l saturates (never wraps)
// if a deployment exceeds that.
#pragma once

#include <cstdint>

namespace ufab::wire {

inline constexpr uint32_t kTokenScale = 64;      // wire units per token
inline constexpr uint32_t kWindowUnitBytes = 64; // bytes per window unit
inline constexpr uint32_t kQueueUnitBytes = 64;  // bytes per queue unit
inline constexpr uint64_t kTxUnitBps = 1'000'000; // bits/s per tx unit

inline constexpr uint32_t kMax24 = (1u << 24) - 1;
inline constexpr uint32_t kMax32 = 0xffffffffu;

// 4-bit capacity code of an egress port (C'_l, the physical capacity; the
// target C_l = eta * C'_l is applied by the edge). Codes 1..4 are the scaled
// rates used by on-host emulated fabrics.
inline constexpr uint64_t capacity_code_bps(uint8_t code) {
  switch (code & 0xf) {
    case 1: return 10'000'000ull;        // 10 Mb/s   (emulation)
    case 2: return 100'000'000ull;       // 100 Mb/s  (emulation)
    case 3: return 1'000'000'000ull;     // 1 Gb/s
    case 4: return 2'500'000'000ull;     // 2.5 Gb/s
    case 5: return 10'000'000'000ull;    // 10 Gb/s
    case 6: return 25'000'000'000ull;    // 25 Gb/s
    case 7: return 40'000'000'000ull;    // 40 Gb/s
    case 8: return 50'000'000'000ull;    // 50 Gb/s
    case 9: return 100'000'000'000ull;   // 100 Gb/s
    case 10: return 200'000'000'000ull;  // 200 Gb/s
    case 11: return 400'000'000'000ull;  // 400 Gb/s
    case 12: return 800'000'000'000ull;  // 800 Gb/s
    default: return 0;                   // 0 and 13..15: unknown / reserved
  }
}

// The code of an exact capacity, or 0 if the rate has no code.
inline constexpr uint8_t capacity_code_of(uint64_t bps) {
  for (uint8_t c = 1; c <= 12; ++c)
    if (capacity_code_bps(c) == bps) return c;
  return 0;
}

// Conversions between SI values and wire units. Encoders saturate, never wrap.
inline constexpr uint32_t sat32(uint64_t v) { return v > kMax32 ? kMax32 : static_cast<uint32_t>(v); }
inline constexpr uint32_t sat24(uint64_t v) { return v > kMax24 ? kMax24 : static_cast<uint32_t>(v); }
// The same from a double, truncating: NaN and v <= 0 give 0. Clamping before
// the cast matters: converting an out-of-range double to an integer is UB.
inline constexpr uint32_t sat_floor(double v, uint32_t max) {
  return !(v > 0) ? 0 : v >= static_cast<double>(max) ? max : static_cast<uint32_t>(v);
}

inline constexpr uint32_t tokens_to_wire(double tokens) {
  return tokens <= 0 ? 0 : sat_floor(tokens * kTokenScale + 0.5, kMax32);
}
inline constexpr double wire_to_tokens(uint32_t v) { return static_cast<double>(v) / kTokenScale; }

// Windows round up (ceil, also for fractional bytes) so a non-zero window never encodes as zero.
inline constexpr uint32_t window_to_wire(double bytes) {
  const double units = bytes / kWindowUnitBytes;
  const uint32_t n = sat_floor(units, kMax32);
  return (n < kMax32 && n < units) ? n + 1 : n;
}
inline constexpr double wire_to_window(uint32_t v) { return static_cast<double>(v) * kWindowUnitBytes; }

inline constexpr uint32_t queue_to_wire(uint64_t bytes) { return sat24(bytes / kQueueUnitBytes); }
inline constexpr double wire_to_queue(uint32_t v) { return static_cast<double>(v) * kQueueUnitBytes; }

inline constexpr uint32_t tx_to_wire(double bps) {
  return bps <= 0 ? 0 : sat_floor(bps / kTxUnitBps + 0.5, kMax24);
}
inline constexpr double wire_to_tx(uint32_t v) { return static_cast<double>(v) * kTxUnitBps; }

}  // namespace ufab::wire
