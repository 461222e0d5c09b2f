// VM frames meant for the VM's own link, which the fabric never carries:
// a pair joins two configured unicast addresses, so these find no pair and
// are dropped as local_scope rather than unknown_pair (a guest's DHCP,
// IGMP, mDNS, router solicitations and MLD reports would otherwise fill the
// counter that names real misconfigurations). Read only on the drop path.
// `d`: the frame from its Ethernet header, tags stripped, with its IPv4
// (20 bytes) or IPv6 (40 bytes) header there.
#pragma once

#include <cstdint>

namespace ufab::pipeline {

// IPv4: a multicast (224.0.0.0/4) or limited broadcast destination, or the
// unspecified source of a DHCP client.
inline bool ipv4_local_scope(const uint8_t* d) {
  const uint8_t* src = d + 26;
  const uint8_t* dst = d + 30;
  const bool broadcast = dst[0] == 255 && dst[1] == 255 && dst[2] == 255 && dst[3] == 255;
  const bool unspecified = (src[0] | src[1] | src[2] | src[3]) == 0;
  return (dst[0] & 0xf0) == 0xe0 || broadcast || unspecified;
}

// IPv6: a multicast destination (ff00::/8), a link-local source or
// destination (fe80::/10), or the unspecified source.
inline bool ipv6_local_scope(const uint8_t* d) {
  const uint8_t* src = d + 22;
  const uint8_t* dst = d + 38;
  const auto link_local = [](const uint8_t* a) { return a[0] == 0xfe && (a[1] & 0xc0) == 0x80; };
  uint8_t any = 0;
  for (int i = 0; i < 16; ++i) any |= src[i];
  return dst[0] == 0xff || link_local(src) || link_local(dst) || any == 0;
}

}  // namespace ufab::pipeline
