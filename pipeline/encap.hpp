// Building uFAB frames in mbufs with the wire encoders (wire-format §1-§5):
// the data encapsulation prepended into the headroom, and control frames
// (probe, response, finish, finish-ack) written into a fresh or reused mbuf.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "pipeline/edge_state.hpp"
#include "probe/wire.hpp"

namespace ufab::pipeline {

// Outer Ethernet/IPv4/UDP + shim(next) + route, prepended in front of what the
// mbuf holds. False (mbuf untouched) without headroom.
inline bool encap(rte_mbuf* m, const wire::OuterAddrs& outer, uint16_t src_port, const wire::SourceRoute& route,
                  uint8_t next, uint32_t vni, uint32_t pair_id) {
  const size_t tail = wire::kShimBytes + route.wire_bytes();
  const uint32_t body = rte_pktmbuf_pkt_len(m);
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, static_cast<uint16_t>(wire::kOuterBytes + tail)));
  if (p == nullptr) return false;
  wire::OuterAddrs a = outer;
  a.src_port = src_port;
  size_t off = wire::encode_outer(a, tail + body, std::span<uint8_t>(p, wire::kOuterBytes));
  off += wire::encode_shim({next, vni, pair_id}, std::span<uint8_t>(p + off, wire::kShimBytes));
  wire::encode_route(route, std::span<uint8_t>(p + off, route.wire_bytes()));
  return true;
}

// A pair's data frame: its path's encoded headers (encap_template.hpp) and
// its shim prepended, the lengths and IPv4 checksum filled; the same bytes as
// encap(m, outer, src_port, route, kNextData, vni, pair_id). False (mbuf
// untouched) without headroom.
inline bool encap_data(rte_mbuf* m, const EncapTemplate& t, uint64_t shim) {
  const uint32_t body = rte_pktmbuf_pkt_len(m);
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, t.len));
  if (p == nullptr) return false;
  t.write(p, body, shim);
  return true;
}

// Replaces the mbuf's content with a control frame carrying msg. The mbuf
// must be a single segment (fresh from the pool, or a received probe).
inline bool write_control(rte_mbuf* m, const wire::OuterAddrs& outer, uint16_t src_port,
                          const wire::SourceRoute& route, uint32_t vni, const wire::Message& msg) {
  rte_pktmbuf_reset(m);
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(msg.wire_bytes())));
  if (p == nullptr) return false;
  wire::encode_message(msg, std::span<uint8_t>(p, msg.wire_bytes()));
  return encap(m, outer, src_port, route, wire::kNextControl, vni, msg.pair_id);
}

}  // namespace ufab::pipeline
