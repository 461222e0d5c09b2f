// The VM-side frame filter's fast path (vm_rx.cpp): most frames a VM sends
// are IPv4 to some port other than the uFAB UDP port, which
// wire::parse_frame answers with not_ufab after reading a few header fields.
// surely_not_ufab() reads the same fields in the same order and is true only
// where parse_frame would return not_ufab (tests/unit/test_edge_not_ufab.cpp
// checks this against parse_frame); false means "ask parse_frame" (a uFAB
// frame, a truncated one, or one too short to decide here).
#pragma once

#include <cstdint>

namespace ufab::pipeline {

inline bool surely_not_ufab(const uint8_t* d, uint32_t len, uint16_t udp_port) {
  constexpr uint32_t kEth = 14, kIp = 20, kUdp = 8;
  if (len < kEth + kIp) return false;
  if (d[12] != 0x08 || d[13] != 0x00) return true;  // not IPv4 (ARP, IPv6, a tag, ...)
  const uint32_t ihl = 4u * (d[kEth] & 0xfu);
  if ((d[kEth] >> 4) != 4 || ihl < kIp) return true;
  const bool fragment = ((d[kEth + 6] & 0x3f) | d[kEth + 7]) != 0;  // MF or an offset
  if (d[kEth + 9] != 17 || fragment) return true;  // not UDP, or not a whole datagram
  const uint32_t ip_total = uint32_t{d[kEth + 2]} << 8 | d[kEth + 3];
  if (ip_total > len - kEth || ip_total < ihl + kUdp) return false;  // parse_frame: truncated
  const uint32_t dport = uint32_t{d[kEth + ihl + 2]} << 8 | d[kEth + ihl + 3];
  return dport != udp_port;
}

// The frames VMs send most, in one test for vm_rx: untagged IPv4 without
// options (EtherType 0x0800, version 4, IHL 5) that surely_not_ufab passes
// (not UDP, a fragment, or a whole UDP datagram to another port). True
// implies: read_tags finds no tag, surely_not_ufab is true and the frame is
// IPv4 of at least 34 bytes (tests/unit/test_edge_not_ufab.cpp), so vm_rx
// skips all three. False: ask them. Inlined, surely_not_ufab's own header
// checks fold into the ones made here.
inline bool plain_not_ufab(const uint8_t* d, uint32_t len, uint16_t udp_port) {
  return len >= 34 && d[12] == 0x08 && d[13] == 0x00 && d[14] == 0x45 && surely_not_ufab(d, len, udp_port);
}

}  // namespace ufab::pipeline
