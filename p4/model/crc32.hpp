// CRC-32 variants for the μFAB-C slot table and ECMP (paper §4.2; README
// "Hash functions"). Each one is a plain CRC that a Tofino `Hash<bit<32>>`
// extern computes with a `CRCPolynomial<bit<32>>(coeff, reversed, msb=false,
// extended=false, init, xor)`, so the P4 program and this model index the
// same buckets. Table-driven, the table built at compile time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ufab::swmodel {

struct Crc32Spec {
  uint32_t poly;     // normal (MSB-first) form of the polynomial
  bool reflected;    // reflect input bytes and output (Tofino `reversed`)
  uint32_t init;
  uint32_t xor_out;
};

// CRC-32 (IEEE 802.3 / zlib): check("123456789") = 0xCBF43926. Bank 0 index, ECMP.
inline constexpr Crc32Spec kCrc32Ieee{0x04C11DB7u, true, 0xFFFFFFFFu, 0xFFFFFFFFu};
// CRC-32C (Castagnoli): check = 0xE3069283. Bank 1 index.
inline constexpr Crc32Spec kCrc32C{0x1EDC6F41u, true, 0xFFFFFFFFu, 0xFFFFFFFFu};
// CRC-32Q (aviation, non-reflected): check = 0x3010BF7F. Slot fingerprint.
inline constexpr Crc32Spec kCrc32Q{0x814141ABu, false, 0x00000000u, 0x00000000u};

namespace detail {
constexpr uint32_t reflect32(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i)
    if (v & (1u << i)) r |= 1u << (31 - i);
  return r;
}
constexpr std::array<uint32_t, 256> crc_table(const Crc32Spec& s) {
  std::array<uint32_t, 256> t{};
  const uint32_t rpoly = reflect32(s.poly);
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = s.reflected ? b : b << 24;
    for (int k = 0; k < 8; ++k) {
      if (s.reflected) c = (c & 1u) ? (c >> 1) ^ rpoly : c >> 1;
      else c = (c & 0x80000000u) ? (c << 1) ^ s.poly : c << 1;
    }
    t[b] = c;
  }
  return t;
}
}  // namespace detail

template <const Crc32Spec& S>
constexpr uint32_t crc32(std::span<const uint8_t> bytes) {
  constexpr std::array<uint32_t, 256> kTable = detail::crc_table(S);
  uint32_t c = S.init;
  if constexpr (S.reflected) {
    for (uint8_t b : bytes) c = (c >> 8) ^ kTable[(c ^ b) & 0xffu];
  } else {
    for (uint8_t b : bytes) c = (c << 8) ^ kTable[((c >> 24) ^ b) & 0xffu];
  }
  return c ^ S.xor_out;
}

}  // namespace ufab::swmodel
