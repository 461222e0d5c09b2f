// A path's data encapsulation as ready bytes (docs/wire-format.md §1-§3):
// outer Ethernet/IPv4/UDP, tunnel shim and source route, encoded once with the
// wire encoders when the edge starts. Per frame only what depends on the frame
// changes: the IPv4 total length, the IPv4 checksum (the template's sum of the
// fixed header words plus the length, RFC 1071) and the UDP length, and the
// shim's VNI and pair id (8 bytes per pair, also encoded once). The header
// fields that depend on the path (MACs, IPs, UDP ports, labels) are copied.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "probe/wire.hpp"

namespace ufab::pipeline {

struct EncapTemplate {
  static constexpr size_t kMaxBytes = wire::kOuterBytes + wire::kShimBytes + 2 + 2 * wire::kMaxLabels;
  // Offsets in the outer headers (Ethernet 14 B, IPv4 20 B without options, UDP 8 B).
  static constexpr size_t kIpTotalLen = 14 + 2, kIpChecksum = 14 + 10, kUdpLen = 14 + 20 + 4;
  static constexpr size_t kShim = wire::kOuterBytes;

  std::array<uint8_t, kMaxBytes> bytes{};
  uint16_t len = 0;     // outer + shim + route
  uint16_t port = 0;    // the fabric port (uplink) the path's frames leave on (edge::PathCfg::port)
  uint32_t ip_sum = 0;  // one's-complement sum of the IPv4 header's words, total length and checksum 0

  // Encodes outer(src_port) + shim(kNextData, 0, 0) + route. len == 0 when
  // the route cannot be encoded (no labels, too many).
  static EncapTemplate make(wire::OuterAddrs outer, uint16_t src_port, const wire::SourceRoute& route) {
    EncapTemplate t;
    outer.src_port = src_port;
    const size_t tail = wire::kShimBytes + route.wire_bytes();
    if (route.wire_bytes() + wire::kOuterBytes + wire::kShimBytes > kMaxBytes) return t;
    std::span<uint8_t> b(t.bytes.data(), kMaxBytes);
    if (wire::encode_outer(outer, tail, b.first(wire::kOuterBytes)) == 0) return t;
    if (wire::encode_shim({wire::kNextData, 0, 0}, b.subspan(kShim, wire::kShimBytes)) == 0) return t;
    if (wire::encode_route(route, b.subspan(kShim + wire::kShimBytes, route.wire_bytes())) == 0) return t;
    for (size_t o : {kIpTotalLen, kIpChecksum, kUdpLen}) t.bytes[o] = t.bytes[o + 1] = 0;
    for (size_t i = 14; i < 34; i += 2) t.ip_sum += uint32_t{t.bytes[i]} << 8 | t.bytes[i + 1];
    t.len = static_cast<uint16_t>(wire::kOuterBytes + tail);
    return t;
  }

  // The 8 shim bytes of a pair's data frames (next = data), as stored in memory.
  static uint64_t shim_word(uint32_t vni, uint32_t pair_id) {
    uint8_t s[wire::kShimBytes] = {};
    wire::encode_shim({wire::kNextData, vni, pair_id}, std::span<uint8_t>(s, wire::kShimBytes));
    uint64_t w;
    std::memcpy(&w, s, sizeof w);
    return w;
  }

  // Writes the encapsulation of a body of `body` bytes (what follows the
  // route) at p, which has room for len bytes.
  void write(uint8_t* p, uint32_t body, uint64_t shim) const {
    // The template's fields are read before any store: stores through p may alias them.
    const uint32_t n = len;
    const uint32_t udp = 8 + (n - wire::kOuterBytes) + body;  // UDP header, shim, route, body
    const uint32_t ip = 20 + udp;
    uint32_t sum = ip_sum + ip;
    copy_bytes(p, n);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    put16(p + kIpTotalLen, static_cast<uint16_t>(ip));
    put16(p + kIpChecksum, static_cast<uint16_t>(~sum));
    put16(p + kUdpLen, static_cast<uint16_t>(udp));
    std::memcpy(p + kShim, &shim, sizeof shim);
  }

 private:
  // The template's n = len bytes to p in fixed 32-byte blocks, a few vector
  // moves inline where memcpy of a length known only at run time is a call:
  // the first block, the one ending at n (50 <= n <= 82, so the two overlap
  // or meet) and, past 64 bytes, the middle one.
  static constexpr size_t kBlock = 32;
  static_assert(wire::kOuterBytes + wire::kShimBytes >= kBlock && kMaxBytes <= 3 * kBlock);
  void copy_bytes(uint8_t* p, size_t n) const {
    const uint8_t* b = bytes.data();
    std::memcpy(p, b, kBlock);
    if (n > 2 * kBlock) std::memcpy(p + kBlock, b + kBlock, kBlock);
    std::memcpy(p + n - kBlock, b + n - kBlock, kBlock);
  }
  static void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
  }
};

}  // namespace ufab::pipeline
