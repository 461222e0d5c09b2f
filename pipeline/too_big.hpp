// A VM frame too big for the fabric (edge.fabric_mtu, edge/config.hpp): the
// edge carries each VM frame whole inside one fabric frame, so a frame
// above the VM MTU cannot go. Path MTU discovery is how the VM learns it
// (RFC 1191 for IPv4, RFC 8201 for IPv6): the edge answers such a frame
// with an ICMP "fragmentation needed and DF set" (type 3, code 4, RFC 792)
// or an ICMPv6 "packet too big" (type 2, RFC 4443 §3.2) naming the VM MTU,
// as from the frame's destination (a VM's stack takes it from anyone; its
// route cache then holds the smaller MTU, and TCP re-segments). This is
// what a Linux VXLAN or Geneve device does for the bridges behind it.
//
// Not answered (the frame is only dropped, `too_big`): IPv4 without DF
// (RFC 1191 §2: only DF datagrams ask for it), a fragment past the first,
// ICMP errors themselves (RFC 792, RFC 4443 §2.4 (e)), sources that are
// unspecified, multicast or broadcast, and frames cut short.
//
// The bytes only, no DPDK types (vm_too_big.cpp sends them; unit test
// test_edge_too_big).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "control/clock.hpp"
#include "pipeline/nd.hpp"

namespace ufab::pipeline::too_big {

// An answer quotes as much of the frame as fits in the smallest datagram
// every host takes: 576 bytes for IPv4 (RFC 1812 §4.3.2.3), 1280 for IPv6.
inline constexpr uint32_t kIp4Max = 576, kIp6Max = 1280;
inline constexpr uint32_t kMaxTagBytes = 8;  // an 802.1ad S-tag and a C-tag
inline constexpr uint32_t kMaxBytes = 14 + kMaxTagBytes + kIp6Max;

// Writes into `out` (room for kMaxBytes) the answer to `frame`, whose first
// `have` bytes are readable (a multi-segment frame: its first segment) and
// whose IP packet starts at `l2` (14, or 18 / 22 behind tags; the answer
// keeps the tags and swaps the MACs). mtu: what the answer names. Returns
// the answer's length, or 0 when the frame is not one to answer.
inline uint32_t answer(const uint8_t* frame, uint32_t have, uint32_t l2, uint32_t mtu, uint8_t* out) {
  if (l2 < 14 || have < l2 + 20) return 0;
  const uint8_t* ip = frame + l2;
  const uint16_t type = static_cast<uint16_t>(frame[l2 - 2] << 8 | frame[l2 - 1]);
  std::memcpy(out, frame + 6, 6);  // to the sender
  std::memcpy(out + 6, frame, 6);  // from the MAC it sent to
  std::memcpy(out + 12, frame + 12, l2 - 12);  // its tags and EtherType
  uint8_t* o = out + l2;
  if (type == 0x0800) {
    const uint32_t ihl = 4u * (ip[0] & 0xfu);
    if ((ip[0] >> 4) != 4 || ihl < 20 || have < l2 + ihl + 8) return 0;
    const bool df = (ip[6] & 0x40) != 0, later_fragment = ((ip[6] & 0x1f) | ip[7]) != 0;
    if (!df || later_fragment) return 0;
    if (ip[12] == 0 || ip[12] >= 224) return 0;  // 0.0.0.0/8, multicast, reserved, broadcast
    if (ip[9] == 1) {
      const uint8_t t = ip[ihl];
      if (t == 3 || t == 4 || t == 5 || t == 11 || t == 12) return 0;  // an ICMP error
    }
    const uint32_t total = uint32_t{ip[2]} << 8 | ip[3];
    const uint32_t quote = std::min({have - l2, std::max(total, ihl), kIp4Max - 28});
    const uint32_t len = 28 + quote;
    const uint8_t h[20] = {0x45, 0xc0, static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len), 0, 0, 0, 0, 64, 1,
                           0,    0,    ip[16], ip[17], ip[18], ip[19], ip[12], ip[13], ip[14], ip[15]};
    std::memcpy(o, h, 20);
    const uint16_t hc = nd::complement(nd::add_words(0, o, 20));
    o[10] = static_cast<uint8_t>(hc >> 8);
    o[11] = static_cast<uint8_t>(hc);
    uint8_t* icmp = o + 20;
    const uint8_t ih[8] = {3, 4, 0, 0, 0, 0, static_cast<uint8_t>(mtu >> 8), static_cast<uint8_t>(mtu)};
    std::memcpy(icmp, ih, 8);
    std::memcpy(icmp + 8, ip, quote);
    const uint16_t ic = nd::complement(nd::add_words(0, icmp, 8 + quote));
    icmp[2] = static_cast<uint8_t>(ic >> 8);
    icmp[3] = static_cast<uint8_t>(ic);
    return l2 + len;
  }
  if (type == 0x86dd) {
    if ((ip[0] >> 4) != 6 || have < l2 + 40) return 0;
    const uint8_t* src = ip + 8;
    static constexpr uint8_t kZero[16] = {};
    if (src[0] == 0xff || std::memcmp(src, kZero, 16) == 0) return 0;  // multicast, unspecified
    if (ip[6] == nd::kIcmp6 && have >= l2 + 41 && ip[40] < 128) return 0;  // an ICMPv6 error
    const uint32_t total = 40 + (uint32_t{ip[4]} << 8 | ip[5]);
    const uint32_t quote = std::min({have - l2, total, kIp6Max - 48});
    const uint32_t payload = 8 + quote;
    uint8_t* h = o;
    std::memset(h, 0, 8);
    h[0] = 0x60;
    h[4] = static_cast<uint8_t>(payload >> 8);
    h[5] = static_cast<uint8_t>(payload);
    h[6] = nd::kIcmp6;
    h[7] = 64;
    std::memcpy(h + 8, ip + 24, 16);  // from its destination
    std::memcpy(h + 24, src, 16);     // to its source
    uint8_t* icmp = h + 40;
    const uint8_t ih[8] = {2, 0, 0, 0, static_cast<uint8_t>(mtu >> 24), static_cast<uint8_t>(mtu >> 16),
                           static_cast<uint8_t>(mtu >> 8), static_cast<uint8_t>(mtu)};
    std::memcpy(icmp, ih, 8);
    std::memcpy(icmp + 8, ip, quote);
    const uint16_t c = nd::icmp6_checksum(h + 8, h + 24, icmp, payload);
    icmp[2] = static_cast<uint8_t>(c >> 8);
    icmp[3] = static_cast<uint8_t>(c);
    return l2 + 40 + payload;
  }
  return 0;
}

// How many answers a worker sends: a token bucket of kBurst answers refilled
// at kPerSecond, Linux's defaults for the ICMP errors a host sends
// (net.ipv4.icmp_msgs_per_sec, icmp_msgs_burst). A VM that keeps sending
// frames too big needs one answer per destination, not one per frame.
class Limiter {
 public:
  static constexpr uint64_t kPerSecond = 1000, kBurst = 50;
  bool allow(Nanos now) {
    if (now > last_) {
      const uint64_t dt = now - last_;  // a full bucket after kBurst / kPerSecond seconds
      tokens_ = dt >= kBurst * kSec / kPerSecond ? kBurst * kSec : std::min(kBurst * kSec, tokens_ + dt * kPerSecond);
      last_ = now;
    }
    if (tokens_ < kSec) return false;
    tokens_ -= kSec;
    return true;
  }

 private:
  uint64_t tokens_ = kBurst * kSec;  // answers x 1e9
  Nanos last_ = 0;
};

}  // namespace ufab::pipeline::too_big
