// Neighbour discovery proxy on the VM side (RFC 4861), IPv6's counterpart
// of arp.hpp: a VM's neighbour solicitation for a remote VM of its tenant
// cannot reach that VM, so the edge answers it with a neighbour
// advertisement in the remote VM's name (vm_ipv6.cpp decides whom). This
// file reads a solicitation and writes the advertisement, on the frame's
// bytes (an untagged Ethernet frame, vm_rx strips the tenant's tags first),
// with no DPDK types.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

namespace ufab::pipeline::nd {

inline constexpr uint32_t kEth = 14, kIp6 = 40;
inline constexpr uint8_t kIcmp6 = 58;
inline constexpr uint8_t kSolicitation = 135, kAdvertisement = 136;
inline constexpr uint32_t kNaBytes = kEth + kIp6 + 24 + 8;  // header, target, target link-layer address option

using Mac = std::array<uint8_t, 6>;
using Ip6 = std::array<uint8_t, 16>;

// EtherType 0x86dd (precondition: at least 14 bytes).
inline bool is_ipv6(const uint8_t* d) { return d[12] == 0x86 && d[13] == 0xdd; }

// One's complement sum of `n` bytes as big-endian 16-bit words, added to `sum`.
inline uint32_t add_words(uint32_t sum, const uint8_t* p, uint32_t n) {
  for (uint32_t i = 0; i + 1 < n; i += 2) sum += uint32_t{p[i]} << 8 | p[i + 1];
  if (n % 2 != 0) sum += uint32_t{p[n - 1]} << 8;
  return sum;
}
// The checksum field for a one's complement sum: folded to 16 bits, complemented.
inline uint16_t complement(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}
// The ICMPv6 checksum (RFC 4443 §2.3) of message `msg` (`len` bytes, its
// checksum field as it is) between `src` and `dst`: over the pseudo-header
// (addresses, upper-layer length, next header 58) and the message. A
// message whose field holds its checksum sums to 0 here.
inline uint16_t icmp6_checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* msg, uint32_t len) {
  uint32_t s = add_words(add_words(0, src, 16), dst, 16);
  s += (len >> 16) + (len & 0xffff) + kIcmp6;
  return complement(add_words(s, msg, len));
}

enum class Kind : uint8_t {
  solicitation,  // a valid neighbour solicitation (RFC 4861 §7.1.1)
  other,         // a well-formed IPv6 frame that is not one: the VM's data, or other ICMPv6
  malformed,     // not IPv6, cut short (header or payload length), or an invalid solicitation
};

struct Solicitation {
  Mac from{};     // the frame's Ethernet source: the requesting vNIC
  Ip6 src{};      // its IPv6 source (:: for duplicate address detection)
  Ip6 target{};   // the address asked for
};

// Reads an IPv6 frame (precondition: is_ipv6). A solicitation is valid when
// its ICMPv6 checksum holds, its hop limit is 255 and its code 0, it is at
// least 24 bytes and its target is not multicast (§7.1.1; an option's
// length is not checked: the answer uses none of them).
inline Kind read(const uint8_t* d, uint32_t len, Solicitation& s) {
  if (len < kEth + kIp6) return Kind::malformed;
  const uint8_t* ip = d + kEth;
  const uint32_t payload = uint32_t{ip[4]} << 8 | ip[5];
  if ((ip[0] >> 4) != 6 || kEth + kIp6 + payload > len) return Kind::malformed;
  const uint8_t* icmp = ip + kIp6;
  if (ip[6] != kIcmp6 || payload < 1 || icmp[0] != kSolicitation) return Kind::other;
  if (payload < 24 || ip[7] != 255 || icmp[1] != 0 || icmp[8] == 0xff) return Kind::malformed;
  if (icmp6_checksum(ip + 8, ip + 24, icmp, payload) != 0) return Kind::malformed;
  std::memcpy(s.from.data(), d + 6, 6);
  std::memcpy(s.src.data(), ip + 8, 16);
  std::memcpy(s.target.data(), icmp + 8, 16);
  return Kind::solicitation;
}

// Writes into `d` (at least kNaBytes) the solicited advertisement of the
// VM at s.target whose MAC is `mac`, for the requester of `s`: Ethernet
// from `mac` to s.from; IPv6 from s.target to s.src, hop limit 255; ICMPv6
// type 136 with the solicited and override flags (the edge is the only one
// to answer for the address), the target, and the target link-layer
// address option (type 2, length 1: 8 bytes) carrying `mac`.
inline void answer(uint8_t* d, const Solicitation& s, const Mac& mac) {
  std::memset(d, 0, kNaBytes);
  std::memcpy(d, s.from.data(), 6);
  std::memcpy(d + 6, mac.data(), 6);
  d[12] = 0x86;
  d[13] = 0xdd;
  uint8_t* ip = d + kEth;
  ip[0] = 0x60;
  ip[5] = 32;  // payload length
  ip[6] = kIcmp6;
  ip[7] = 255;
  std::memcpy(ip + 8, s.target.data(), 16);
  std::memcpy(ip + 24, s.src.data(), 16);
  uint8_t* icmp = ip + kIp6;
  icmp[0] = kAdvertisement;
  icmp[4] = 0x60;  // S (solicited), O (override)
  std::memcpy(icmp + 8, s.target.data(), 16);
  icmp[24] = 2;  // target link-layer address
  icmp[25] = 1;  // in units of 8 bytes
  std::memcpy(icmp + 26, mac.data(), 6);
  const uint16_t c = icmp6_checksum(ip + 8, ip + 24, icmp, 32);
  icmp[2] = static_cast<uint8_t>(c >> 8);
  icmp[3] = static_cast<uint8_t>(c);
}

}  // namespace ufab::pipeline::nd
