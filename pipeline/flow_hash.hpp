// The flow of a VM's frame within its VM-pair (§4.1: round robin over a
// pair's flows keeps one flow's backlog from blocking the others): CRC32-C
// of the frame's 5-tuple, folded into [0, flows) by multiply-shift (the
// CRC's high bits). A flow is its 5-tuple, so
//  - the frames of one TCP or UDP connection always share a flow (and leave
//    in order: a flow is one FIFO);
//  - every fragment of a datagram shares one flow: a fragment is hashed on
//    its addresses and protocol without ports, since only the first
//    fragment carries them (IPv4: MF set or a non-zero offset; IPv6: a
//    fragment header), as RSS hashes fragments on L3 alone;
//  - IPv6 extension headers (hop-by-hop, routing, destination options,
//    authentication) are skipped to reach the upper-layer header, up to
//    kMaxIp6Ext of them within the frame; ESP, no next header, or a chain
//    longer than that or running past the frame hashes without ports.
// The tuple is hashed by value, word by word: hashing a tuple struct with
// rte_hash_crc(&t, sizeof t, 0) reads it through uint64_t pointers, which
// GCC at -O3 takes as not reading the fields just stored (strict aliasing):
// the flow then depended on stack contents, frames of one flow went to
// different FIFOs and left out of order.
// `d` is the frame from its Ethernet header (tags stripped), `len` the
// bytes of it in the first segment; the caller has checked that the fixed
// IP header is there.
#pragma once

#include <rte_hash_crc.h>

#include <cstdint>
#include <cstring>

namespace ufab::pipeline {

inline constexpr uint32_t kFlowEth = 14, kFlowIp6 = 40, kMaxIp6Ext = 8;

inline uint32_t fold_flow(uint32_t h, uint32_t flows) { return static_cast<uint32_t>((uint64_t{h} * flows) >> 32); }

inline bool carries_ports(uint32_t proto) { return proto == 6 || proto == 17; }

// IPv4, its addresses already read (classification's key).
inline uint32_t flow_of4(const uint8_t* d, uint32_t len, uint32_t src, uint32_t dst, uint32_t flows) {
  uint32_t ports = 0;
  const uint32_t proto = d[kFlowEth + 9];
  const uint32_t l4 = kFlowEth + 4 * (d[kFlowEth] & 0xfu);
  const bool fragment = (d[kFlowEth + 6] & 0x3f) != 0 || d[kFlowEth + 7] != 0;  // MF, offset
  if (carries_ports(proto) && !fragment && len >= l4 + 4) std::memcpy(&ports, d + l4, 4);
  // Two 8-byte words, (src, dst) and (ports, protocol).
  return fold_flow(rte_hash_crc_8byte(uint64_t{ports} | uint64_t{proto} << 32,
                                      rte_hash_crc_8byte(uint64_t{src} | uint64_t{dst} << 32, 0)),
                   flows);
}

// IPv6: the upper-layer protocol and where its header starts, past the
// extension headers; ports only when `ports_at` is set.
struct Ip6Upper {
  uint32_t proto;
  uint32_t ports_at;  // offset of the TCP/UDP ports in the frame, 0: hash without ports
};

inline Ip6Upper ip6_upper(const uint8_t* d, uint32_t len) {
  uint32_t next = d[kFlowEth + 6], at = kFlowEth + kFlowIp6;
  for (uint32_t n = 0; n < kMaxIp6Ext; ++n) {
    if (next != 0 && next != 43 && next != 60 && next != 51 && next != 44) break;
    if (len < at + 8) return {next, 0};
    if (next == 44) return {d[at], 0};  // a fragment: every fragment of the datagram alike
    const uint32_t ext = next == 51 ? (d[at + 1] + 2u) * 4 : (d[at + 1] + 1u) * 8;
    next = d[at];
    at += ext;
  }
  return {next, carries_ports(next) && len >= at + 4 ? at : 0};
}

inline uint32_t flow_of6(const uint8_t* d, uint32_t len, uint32_t flows) {
  const Ip6Upper up = ip6_upper(d, len);
  uint32_t ports = 0;
  if (up.ports_at != 0) std::memcpy(&ports, d + up.ports_at, 4);
  uint32_t h = 0;
  for (uint32_t i = 8; i < kFlowIp6; i += 8) {  // the source and destination addresses
    uint64_t w;
    std::memcpy(&w, d + kFlowEth + i, 8);
    h = rte_hash_crc_8byte(w, h);
  }
  return fold_flow(rte_hash_crc_8byte(uint64_t{ports} | uint64_t{up.proto} << 32, h), flows);
}

}  // namespace ufab::pipeline
