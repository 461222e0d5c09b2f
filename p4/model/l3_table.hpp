// Plain L3 forwarding for non-uFAB traffic through a μFAB-C switch: /32 host
// routes, each a set of ports, one chosen by CRC-32 (IEEE) of the 5-tuple —
// the ECMP a Tofino action selector does. Frames are forwarded unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "p4/model/crc32.hpp"

namespace ufab::swmodel {

struct FiveTuple {
  uint32_t src_ip = 0, dst_ip = 0;
  uint8_t proto = 0;
  uint16_t src_port = 0, dst_port = 0;  // 0 unless TCP/UDP and not a fragment
};

// Untagged Ethernet + IPv4 only; nullopt for anything else or a short frame.
inline std::optional<FiveTuple> parse_five_tuple(std::span<const uint8_t> f) {
  if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4) return std::nullopt;
  const size_t ihl = size_t{f[14] & 0xfu} * 4;
  if (ihl < 20 || f.size() < 14 + ihl) return std::nullopt;
  auto be32 = [&](size_t o) {
    return (uint32_t{f[o]} << 24) | (uint32_t{f[o + 1]} << 16) | (uint32_t{f[o + 2]} << 8) | f[o + 3];
  };
  FiveTuple t;
  t.proto = f[23];
  t.src_ip = be32(26);
  t.dst_ip = be32(30);
  const bool fragment = ((f[20] & 0x3f) | f[21]) != 0;  // MF flag or offset
  const size_t l4 = 14 + ihl;
  if ((t.proto == 6 || t.proto == 17) && !fragment && f.size() >= l4 + 4) {
    t.src_port = static_cast<uint16_t>((f[l4] << 8) | f[l4 + 1]);
    t.dst_port = static_cast<uint16_t>((f[l4 + 2] << 8) | f[l4 + 3]);
  }
  return t;
}

// CRC-32 over src_ip(4) | dst_ip(4) | proto(1) | src_port(2) | dst_port(2).
inline uint32_t ecmp_hash(const FiveTuple& t) {
  const uint8_t b[13] = {static_cast<uint8_t>(t.src_ip >> 24), static_cast<uint8_t>(t.src_ip >> 16),
                         static_cast<uint8_t>(t.src_ip >> 8),  static_cast<uint8_t>(t.src_ip),
                         static_cast<uint8_t>(t.dst_ip >> 24), static_cast<uint8_t>(t.dst_ip >> 16),
                         static_cast<uint8_t>(t.dst_ip >> 8),  static_cast<uint8_t>(t.dst_ip),
                         t.proto,
                         static_cast<uint8_t>(t.src_port >> 8), static_cast<uint8_t>(t.src_port),
                         static_cast<uint8_t>(t.dst_port >> 8), static_cast<uint8_t>(t.dst_port)};
  return crc32<kCrc32Ieee>(b);
}

class L3Table {
 public:
  void add_host_route(uint32_t dst_ip, std::vector<uint16_t> ports) { routes_[dst_ip] = std::move(ports); }
  void remove_host_route(uint32_t dst_ip) { routes_.erase(dst_ip); }
  // Member ecmp_hash % n of the route's port set, or nullopt with no route.
  std::optional<uint16_t> lookup(const FiveTuple& t) const {
    const auto it = routes_.find(t.dst_ip);
    if (it == routes_.end() || it->second.empty()) return std::nullopt;
    return it->second[ecmp_hash(t) % it->second.size()];
  }

 private:
  std::map<uint32_t, std::vector<uint16_t>> routes_;
};

}  // namespace ufab::swmodel
