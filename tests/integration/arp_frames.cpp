#include "tests/integration/arp_frames.hpp"

#include <cstring>

namespace ufab::itest {

Frame arp(const Mac& eth_dst, const Mac& eth_src, uint8_t op, const Mac& sha, uint8_t spa, const Mac& tha,
          uint8_t tpa) {
  Frame f(eth_dst);
  f.insert(f.end(), eth_src.begin(), eth_src.end());
  f.insert(f.end(), {0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, op});
  f.insert(f.end(), sha.begin(), sha.end());
  f.insert(f.end(), {192, 168, 0, spa});
  f.insert(f.end(), tha.begin(), tha.end());
  f.insert(f.end(), {192, 168, 0, tpa});
  if (spa == 0) std::memset(f.data() + 28, 0, 4);
  return f;
}

Frame who_has(const Mac& from, uint8_t spa, uint8_t tpa) { return arp(kBcast, from, 1, from, spa, kZero, tpa); }

Frame is_at(const Mac& to, uint8_t to_ip, const Mac& mac, uint8_t ip) { return arp(to, mac, 2, mac, ip, to, to_ip); }

}  // namespace ufab::itest
