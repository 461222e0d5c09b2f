// The header ufab-traffic writes at the start of every UDP payload: who sent
// it (tenant, flow), its place in the flow (sequence number) and when
// (CLOCK_MONOTONIC ns, so sender and sink on one host share the clock).
// Big-endian on the wire, like the rest of the frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ufab::traffic {

inline constexpr uint32_t kMagic = 0x75465452;  // "uFTR"
inline constexpr size_t kPayloadHeaderBytes = 28;

struct PayloadHeader {
  uint32_t tenant = 0;  // the tenant (VNI) the generator sends for
  uint32_t flow = 0;    // flow id, unique per generator and tenant
  uint64_t seq = 0;     // 0, 1, 2, ... per flow
  uint64_t tx_ns = 0;   // CLOCK_MONOTONIC at transmission
};

inline void put_be(uint8_t* p, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
inline uint64_t get_be(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
  return v;
}

// Writes the header at p (kPayloadHeaderBytes).
inline void write_header(uint8_t* p, const PayloadHeader& h) {
  put_be(p, kMagic, 4);
  put_be(p + 4, h.tenant, 4);
  put_be(p + 8, h.flow, 4);
  put_be(p + 12, h.seq, 8);
  put_be(p + 20, h.tx_ns, 8);
}
// Only the two fields that change per frame (the rest is in the flow's template).
inline void write_seq_ts(uint8_t* p, uint64_t seq, uint64_t tx_ns) {
  put_be(p + 12, seq, 8);
  put_be(p + 20, tx_ns, 8);
}

// False when the payload is too short or does not carry the magic.
inline bool read_header(std::span<const uint8_t> payload, PayloadHeader& h) {
  if (payload.size() < kPayloadHeaderBytes || get_be(payload.data(), 4) != kMagic) return false;
  const uint8_t* p = payload.data();
  h.tenant = static_cast<uint32_t>(get_be(p + 4, 4));
  h.flow = static_cast<uint32_t>(get_be(p + 8, 4));
  h.seq = get_be(p + 12, 8);
  h.tx_ns = get_be(p + 20, 8);
  return true;
}

}  // namespace ufab::traffic
