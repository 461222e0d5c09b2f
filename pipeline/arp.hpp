// Proxy ARP on the VM side (RFC 826; edge/README.md, "ARP"). The fabric
// carries a tenant's IPv4 frames between VM-pairs and nothing else, so a
// VM's ARP request for a remote VM of its tenant cannot reach that VM: the
// edge answers it in the remote VM's name, with the MAC its configuration
// gives (remote_vms[].mac, the VM's vNIC MAC at its own edge), and the VM's
// frames then carry that MAC end to end (the receiving edge delivers the
// inner frame unchanged). vm_arp.cpp decides whom to answer; this file reads
// a request and turns it into its reply, on the frame's bytes (an untagged
// Ethernet frame: vm_rx strips the tenant's tags first), with no DPDK types.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

namespace ufab::pipeline::arp {

inline constexpr uint32_t kEth = 14;
inline constexpr uint32_t kBytes = kEth + 28;  // Ethernet + ARP for IPv4 over Ethernet

using Mac = std::array<uint8_t, 6>;

// EtherType 0x0806 (precondition: at least 14 bytes).
inline bool is_arp(const uint8_t* d) { return d[12] == 0x08 && d[13] == 0x06; }

enum class Kind : uint8_t {
  request,    // an IPv4-over-Ethernet request (op 1)
  other,      // well formed, not a request (a reply, RARP, ...)
  malformed,  // shorter than 42 bytes, or not IPv4 over Ethernet (htype 1, ptype 0x0800, hlen 6, plen 4)
};

struct Request {
  Mac sha{};         // sender hardware address
  uint32_t spa = 0;  // sender protocol (IPv4) address, network order as in the frame
  uint32_t tpa = 0;  // target protocol address, network order
};

// Reads an ARP frame (precondition: is_arp); `r` is filled for a request.
inline Kind read(const uint8_t* d, uint32_t len, Request& r) {
  if (len < kBytes) return Kind::malformed;
  const uint8_t* a = d + kEth;
  if (a[0] != 0 || a[1] != 1 || a[2] != 0x08 || a[3] != 0x00 || a[4] != 6 || a[5] != 4) return Kind::malformed;
  if (a[6] != 0 || a[7] != 1) return Kind::other;
  std::memcpy(r.sha.data(), a + 8, 6);
  std::memcpy(&r.spa, a + 14, 4);
  std::memcpy(&r.tpa, a + 24, 4);
  return Kind::request;
}

// Rewrites request `r` (read from `d`) in place into the reply of the VM
// at r.tpa whose MAC is `mac`: Ethernet destination the requester's frame
// source, source `mac`; op 2; sender (mac, r.tpa); target (r.sha, r.spa).
// The frame keeps its length (padding after the 42 bytes is left as it was).
inline void answer(uint8_t* d, const Request& r, const Mac& mac) {
  std::memmove(d, d + 6, 6);
  std::memcpy(d + 6, mac.data(), 6);
  uint8_t* a = d + kEth;
  a[6] = 0;
  a[7] = 2;
  std::memcpy(a + 8, mac.data(), 6);
  std::memcpy(a + 14, &r.tpa, 4);
  std::memcpy(a + 18, r.sha.data(), 6);
  std::memcpy(a + 24, &r.spa, 4);
}

}  // namespace ufab::pipeline::arp
