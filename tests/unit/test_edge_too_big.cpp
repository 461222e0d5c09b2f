// ufab-edge's answer to a VM frame above the VM MTU (pipeline/too_big.hpp,
// no DPDK): an ICMP "fragmentation needed" (IPv4 with DF) or ICMPv6 "packet
// too big", byte for byte, with the header checksum computed by hand; the
// frames not to answer; and the answers' token bucket.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pipeline/too_big.hpp"

namespace ufab::pipeline::too_big {
namespace {

constexpr uint8_t kVmMac[6] = {0x02, 0, 0, 0, 0x0a, 0x01}, kPeerMac[6] = {0x02, 0, 0, 0, 0x0b, 0x01};

// An IPv4 frame of `len` bytes from 192.168.0.1 to 192.168.0.2, protocol
// `proto`, DF as asked, its payload bytes counting up; `tags` 802.1Q tags.
std::vector<uint8_t> ipv4(size_t len, bool df, uint8_t proto = 6, int tags = 0) {
  std::vector<uint8_t> f(len, 0);
  std::copy(kPeerMac, kPeerMac + 6, f.begin());
  std::copy(kVmMac, kVmMac + 6, f.begin() + 6);
  size_t o = 12;
  for (int t = 0; t < tags; ++t, o += 4) {
    f[o] = 0x81, f[o + 1] = 0x00, f[o + 2] = 0x00, f[o + 3] = static_cast<uint8_t>(10 + t);
  }
  f[o] = 0x08, f[o + 1] = 0x00;
  uint8_t* ip = f.data() + o + 2;
  const size_t total = len - (o + 2);
  ip[0] = 0x45;
  ip[2] = static_cast<uint8_t>(total >> 8), ip[3] = static_cast<uint8_t>(total);
  ip[6] = df ? 0x40 : 0x00;
  ip[8] = 64, ip[9] = proto;
  ip[12] = 192, ip[13] = 168, ip[14] = 0, ip[15] = 1;
  ip[16] = 192, ip[17] = 168, ip[18] = 0, ip[19] = 2;
  for (size_t i = 20; i < total; ++i) ip[i] = static_cast<uint8_t>(i);
  return f;
}

std::vector<uint8_t> ipv6(size_t len, uint8_t next = 6) {
  std::vector<uint8_t> f(len, 0);
  std::copy(kPeerMac, kPeerMac + 6, f.begin());
  std::copy(kVmMac, kVmMac + 6, f.begin() + 6);
  f[12] = 0x86, f[13] = 0xdd;
  uint8_t* ip = f.data() + 14;
  const size_t payload = len - 54;
  ip[0] = 0x60;
  ip[4] = static_cast<uint8_t>(payload >> 8), ip[5] = static_cast<uint8_t>(payload);
  ip[6] = next, ip[7] = 64;
  ip[8] = 0xfd, ip[23] = 1;   // fd00::1
  ip[24] = 0xfd, ip[39] = 2;  // fd00::2
  for (size_t i = 40; i < len - 14; ++i) ip[i] = static_cast<uint8_t>(i);
  return f;
}

// RFC 1071: a header or message whose checksum field holds its checksum sums to 0xffff.
uint32_t folded(const uint8_t* p, uint32_t n) {
  uint32_t s = nd::add_words(0, p, n);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return s;
}

TEST(TooBig, Ipv4WithDfIsAnsweredFragmentationNeeded) {
  const std::vector<uint8_t> f = ipv4(1600, true);
  uint8_t out[kMaxBytes];
  // 14 + IPv4 20 + ICMP 8 + the first 548 bytes of the packet (576 in all).
  ASSERT_EQ(answer(f.data(), 1600, 14, 1518, out), 590u);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 6), std::vector<uint8_t>(kVmMac, kVmMac + 6));
  EXPECT_EQ(std::vector<uint8_t>(out + 6, out + 12), std::vector<uint8_t>(kPeerMac, kPeerMac + 6));
  // 45 c0 | 02 40 (576) | id 0 | flags 0 | TTL 64, ICMP | checksum | from .2 to .1.
  // Checksum by hand: 45c0 + 0240 + 4001 + c0a8 + 0002 + c0a8 + 0001 = 0x20954,
  // folded 0x0956, complemented 0xf6a9.
  const std::vector<uint8_t> ip_header = {0x08, 0x00, 0x45, 0xc0, 0x02, 0x40, 0, 0, 0, 0, 64, 1, 0xf6, 0xa9,
                                          192,  168,  0,    2,    192,  168,  0, 1};
  EXPECT_EQ(std::vector<uint8_t>(out + 12, out + 34), ip_header);
  EXPECT_EQ(out[34], 3);  // destination unreachable
  EXPECT_EQ(out[35], 4);  // fragmentation needed and DF set
  EXPECT_EQ(out[36 + 2], 0);
  EXPECT_EQ(out[36 + 3], 0);
  EXPECT_EQ(out[40], 0x05);  // next-hop MTU 1518
  EXPECT_EQ(out[41], 0xee);
  EXPECT_EQ(folded(out + 34, 8 + 548), 0xffffu);
  EXPECT_EQ(std::vector<uint8_t>(out + 42, out + 590), std::vector<uint8_t>(f.begin() + 14, f.begin() + 14 + 548));
}

TEST(TooBig, Ipv4TaggedKeepsItsTagsAndQuotesWhatTheFirstSegmentHas) {
  const std::vector<uint8_t> f = ipv4(3000, true, 17, 2);
  uint8_t out[kMaxBytes];
  // A chained frame whose first segment holds 22 + 100 bytes: those are quoted.
  ASSERT_EQ(answer(f.data(), 122, 22, 9118, out), 22u + 28 + 100);
  EXPECT_EQ(std::vector<uint8_t>(out + 12, out + 22), std::vector<uint8_t>(f.begin() + 12, f.begin() + 22));
  EXPECT_EQ(out[22 + 2], 0);
  EXPECT_EQ(out[22 + 3], 128);  // total length 20 + 8 + 100
  EXPECT_EQ(folded(out + 22, 20), 0xffffu);
  EXPECT_EQ(out[48], 0x23);  // 9118 = 0x239e
  EXPECT_EQ(out[49], 0x9e);
  EXPECT_EQ(folded(out + 42, 108), 0xffffu);
}

TEST(TooBig, FramesNotToAnswer) {
  uint8_t out[kMaxBytes];
  std::vector<uint8_t> f = ipv4(1600, false);
  EXPECT_EQ(answer(f.data(), 1600, 14, 1518, out), 0u) << "no DF: RFC 1191 asks no answer";
  f = ipv4(1600, true);
  f[14 + 7] = 1;  // fragment offset 8
  EXPECT_EQ(answer(f.data(), 1600, 14, 1518, out), 0u) << "a later fragment";
  f = ipv4(1600, true, 1);
  f[34] = 3;  // an ICMP destination unreachable
  EXPECT_EQ(answer(f.data(), 1600, 14, 1518, out), 0u) << "an ICMP error";
  f[34] = 8;  // an echo request is answered
  EXPECT_NE(answer(f.data(), 1600, 14, 1518, out), 0u);
  f = ipv4(1600, true);
  f[14 + 12] = 224;
  EXPECT_EQ(answer(f.data(), 1600, 14, 1518, out), 0u) << "a multicast source";
  f[14 + 12] = 0;
  EXPECT_EQ(answer(f.data(), 1600, 14, 1518, out), 0u) << "source 0.0.0.0";
  f = ipv4(1600, true);
  EXPECT_EQ(answer(f.data(), 14 + 27, 14, 1518, out), 0u) << "not the header and 8 bytes";
  f[12] = 0x08, f[13] = 0x06;
  EXPECT_EQ(answer(f.data(), 1600, 14, 1518, out), 0u) << "ARP";
  std::vector<uint8_t> g = ipv6(1600, 58);
  g[54] = 1;  // an ICMPv6 destination unreachable
  EXPECT_EQ(answer(g.data(), 1600, 14, 1518, out), 0u) << "an ICMPv6 error";
  g[54] = 128;  // an echo request is answered
  EXPECT_NE(answer(g.data(), 1600, 14, 1518, out), 0u);
  g = ipv6(1600);
  g[22] = 0xff;
  EXPECT_EQ(answer(g.data(), 1600, 14, 1518, out), 0u) << "a multicast source";
  g = ipv6(1600);
  g[22] = 0, g[37] = 0;
  EXPECT_EQ(answer(g.data(), 1600, 14, 1518, out), 0u) << "the unspecified source";
}

TEST(TooBig, Ipv6IsAnsweredPacketTooBig) {
  const std::vector<uint8_t> f = ipv6(1600);
  uint8_t out[kMaxBytes];
  // 14 + IPv6 40 + ICMPv6 8 + the first 1232 bytes of the packet (1280 in all).
  ASSERT_EQ(answer(f.data(), 1600, 14, 1518, out), 1294u);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 6), std::vector<uint8_t>(kVmMac, kVmMac + 6));
  EXPECT_EQ(out[12], 0x86);
  EXPECT_EQ(out[13], 0xdd);
  const uint8_t* ip = out + 14;
  EXPECT_EQ(ip[0], 0x60);
  EXPECT_EQ(ip[4] << 8 | ip[5], 1240);
  EXPECT_EQ(ip[6], 58);
  EXPECT_EQ(std::vector<uint8_t>(ip + 8, ip + 24), std::vector<uint8_t>(f.begin() + 38, f.begin() + 54));  // from fd00::2
  EXPECT_EQ(std::vector<uint8_t>(ip + 24, ip + 40), std::vector<uint8_t>(f.begin() + 22, f.begin() + 38));  // to fd00::1
  const uint8_t* icmp = ip + 40;
  EXPECT_EQ(icmp[0], 2);
  EXPECT_EQ(icmp[1], 0);
  EXPECT_EQ(std::vector<uint8_t>(icmp + 4, icmp + 8), (std::vector<uint8_t>{0, 0, 0x05, 0xee}));
  EXPECT_EQ(nd::icmp6_checksum(ip + 8, ip + 24, icmp, 1240), 0);
  EXPECT_EQ(std::vector<uint8_t>(icmp + 8, icmp + 1240), std::vector<uint8_t>(f.begin() + 14, f.begin() + 14 + 1232));
}

TEST(TooBig, LimiterLetsABurstOfFiftyThenOneAMillisecond) {
  Limiter l;
  const Nanos t = 5 * kSec;
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(l.allow(t)) << i;
  EXPECT_FALSE(l.allow(t));
  EXPECT_FALSE(l.allow(t + 999 * kUs));
  EXPECT_TRUE(l.allow(t + 1000 * kUs));
  EXPECT_FALSE(l.allow(t + 1000 * kUs));
  // 50 ms later the bucket is full again, and no fuller.
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(l.allow(t + 60 * kMs)) << i;
  EXPECT_FALSE(l.allow(t + 60 * kMs));
}

}  // namespace
}  // namespace ufab::pipeline::too_big
