#include "tests/integration/ipv6_frames.hpp"

namespace ufab::itest {

uint16_t icmp6_sum(const Frame& f) {
  const size_t len = f.size() - 54;
  uint32_t s = 0;
  const auto words = [&](size_t from, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2) s += static_cast<uint32_t>(f[from + i] << 8 | f[from + i + 1]);
    if (n % 2 != 0) s += static_cast<uint32_t>(f[from + n - 1] << 8);
  };
  words(22, 32);  // source and destination addresses
  s += static_cast<uint32_t>(len) + 58;
  words(54, len);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

void set_icmp6_sum(Frame& f) {
  f[56] = f[57] = 0;
  const uint16_t c = icmp6_sum(f);
  f[56] = static_cast<uint8_t>(c >> 8);
  f[57] = static_cast<uint8_t>(c);
}

Frame ip6_frame(const Bytes& dst_mac, const Bytes& src_mac, const Bytes& src, const Bytes& dst, uint8_t next,
                uint8_t hops, const Bytes& payload) {
  Frame f(dst_mac);
  f.insert(f.end(), src_mac.begin(), src_mac.end());
  f.insert(f.end(), {0x86, 0xdd, 0x60, 0, 0, 0, static_cast<uint8_t>(payload.size() >> 8),
                     static_cast<uint8_t>(payload.size()), next, hops});
  f.insert(f.end(), src.begin(), src.end());
  f.insert(f.end(), dst.begin(), dst.end());
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

Frame solicitation(const Bytes& from, const Bytes& src, const Bytes& target, bool sllao) {
  const Bytes mc = {0x33, 0x33, 0xff, target[13], target[14], target[15]};
  const Bytes group = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, target[13], target[14], target[15]};
  Bytes icmp = {135, 0, 0, 0, 0, 0, 0, 0};
  icmp.insert(icmp.end(), target.begin(), target.end());
  if (sllao) {
    icmp.insert(icmp.end(), {1, 1});
    icmp.insert(icmp.end(), from.begin(), from.end());
  }
  Frame f = ip6_frame(mc, from, src, group, 58, 255, icmp);
  set_icmp6_sum(f);
  return f;
}

Bytes fd00(uint8_t x) {
  Bytes a(16, 0);
  if (x != 0) a[0] = 0xfd, a[15] = x;
  return a;
}

Frame udp6(const Bytes& from, const Bytes& to, uint8_t src, uint8_t dst, uint16_t sport, size_t n) {
  Bytes u = {static_cast<uint8_t>(sport >> 8), static_cast<uint8_t>(sport), 0x13, 0x89,
             static_cast<uint8_t>((n + 8) >> 8), static_cast<uint8_t>(n + 8), 0, 0};
  for (size_t i = 0; i < n; ++i) u.push_back(static_cast<uint8_t>(i * 13 + sport));
  return ip6_frame(to, from, fd00(src), fd00(dst), 17, 64, u);
}

Frame advertise(const Bytes& to, uint8_t src, uint8_t target, const Bytes& mac) {
  Bytes icmp = {136, 0, 0, 0, 0x60, 0, 0, 0};
  const Bytes t = fd00(target);
  icmp.insert(icmp.end(), t.begin(), t.end());
  icmp.insert(icmp.end(), {2, 1});
  icmp.insert(icmp.end(), mac.begin(), mac.end());
  Frame f = ip6_frame(to, mac, fd00(target), fd00(src), 58, 255, icmp);
  set_icmp6_sum(f);
  return f;
}

}  // namespace ufab::itest
