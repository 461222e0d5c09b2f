// ARP frames for the integration tests, written out field by field from
// RFC 826 (independent of pipeline/arp.hpp, which they check). Addresses
// are 192.168.0.x, named by their last byte.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/integration/pcap_io.hpp"

namespace ufab::itest {

using Mac = std::vector<uint8_t>;
inline const Mac kBcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kZero = {0, 0, 0, 0, 0, 0};

// An untagged ARP frame for IPv4 over Ethernet with operation op (1
// request, 2 reply); spa 0 is the sender address 0.0.0.0 (a DAD probe).
Frame arp(const Mac& eth_dst, const Mac& eth_src, uint8_t op, const Mac& sha, uint8_t spa, const Mac& tha,
          uint8_t tpa);
// The broadcast request of `from` at .spa for .tpa.
Frame who_has(const Mac& from, uint8_t spa, uint8_t tpa);
// The reply to `to` at .to_ip: .ip is at `mac`.
Frame is_at(const Mac& to, uint8_t to_ip, const Mac& mac, uint8_t ip);

}  // namespace ufab::itest
