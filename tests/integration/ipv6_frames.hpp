// IPv6 and neighbour discovery frames for the integration tests, written
// out field by field from RFC 8200 and RFC 4861 (independent of
// pipeline/nd.hpp, which they check).
#pragma once

#include <cstdint>
#include <vector>

#include "tests/integration/pcap_io.hpp"

namespace ufab::itest {

using Bytes = std::vector<uint8_t>;

// The ICMPv6 checksum of frame f (Ethernet, IPv6 with the ICMPv6 message
// right after it), over RFC 4443's pseudo-header, with f's checksum field
// counted as it is (zero it first to compute one).
uint16_t icmp6_sum(const Frame& f);
// Writes icmp6_sum into f's checksum field.
void set_icmp6_sum(Frame& f);
// Ethernet/IPv6 with `next` header, hop limit `hops` and `payload`.
Frame ip6_frame(const Bytes& dst_mac, const Bytes& src_mac, const Bytes& src, const Bytes& dst, uint8_t next,
                uint8_t hops, const Bytes& payload);
// A neighbour solicitation from MAC `from` at address src for `target`, to
// the target's solicited-node group; with `sllao`, the source link-layer
// address option after it (8 bytes more).
Frame solicitation(const Bytes& from, const Bytes& src, const Bytes& target, bool sllao = false);
// fd00::x, or :: for x = 0.
Bytes fd00(uint8_t x);
// A UDP datagram of `n` bytes of data from VM MAC `from` at fd00::src to
// MAC `to` at fd00::dst, from UDP port sport to 5001.
Frame udp6(const Bytes& from, const Bytes& to, uint8_t src, uint8_t dst, uint16_t sport, size_t n);
// The advertisement that answers solicitation(to, fd00(src), fd00(target))
// with `mac`: solicited and override flags, the target link-layer address.
Frame advertise(const Bytes& to, uint8_t src, uint8_t target, const Bytes& mac);

}  // namespace ufab::itest
