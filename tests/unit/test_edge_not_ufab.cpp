// ufab-edge's VM-side fast filter (pipeline/not_ufab.hpp) against
// wire::parse_frame: surely_not_ufab(f) implies parse_frame(f) == not_ufab,
// over hand-made frames of each kind and 200K random mutations of their
// header bytes and lengths; and the fast path does fire for the frames VMs
// send (TCP, UDP to other ports, ARP, IPv6, fragments). plain_not_ufab (the
// one test vm_rx makes for most frames) implies surely_not_ufab, no VLAN
// tag and IPv4, over the same frames and mutations.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "pipeline/not_ufab.hpp"
#include "probe/wire.hpp"

namespace ufab::pipeline {
namespace {

constexpr uint16_t kPort = wire::kUdpPort;

std::vector<uint8_t> ipv4(uint8_t proto, uint16_t dport, size_t len, uint8_t ihl_words = 5) {
  std::vector<uint8_t> f(len, 0);
  f[12] = 0x08;
  f[13] = 0x00;
  f[14] = static_cast<uint8_t>(0x40 | ihl_words);
  const size_t ip_total = len - 14;
  f[16] = static_cast<uint8_t>(ip_total >> 8);
  f[17] = static_cast<uint8_t>(ip_total);
  f[20] = 0x40;  // DF
  f[22] = 64;
  f[23] = proto;
  const size_t l4 = 14 + 4 * size_t{ihl_words};
  if (len >= l4 + 4) {
    f[l4 + 2] = static_cast<uint8_t>(dport >> 8);
    f[l4 + 3] = static_cast<uint8_t>(dport);
  }
  if (len >= l4 + 6) {
    const size_t udp_len = len - l4;
    f[l4 + 4] = static_cast<uint8_t>(udp_len >> 8);
    f[l4 + 5] = static_cast<uint8_t>(udp_len);
  }
  return f;
}

wire::WireError parse(const std::vector<uint8_t>& f) {
  wire::FrameView v;
  return wire::parse_frame(f, v, kPort);
}

bool fast(const std::vector<uint8_t>& f) { return surely_not_ufab(f.data(), static_cast<uint32_t>(f.size()), kPort); }
bool plain(const std::vector<uint8_t>& f) { return plain_not_ufab(f.data(), static_cast<uint32_t>(f.size()), kPort); }
// What plain_not_ufab promises vm_rx: surely_not_ufab, and IPv4 of at
// least 34 bytes (EtherType 0x0800 where a tag would have 0x8100 or 0x88a8).
void expect_plain_implies(const std::vector<uint8_t>& f) {
  if (!plain(f)) return;
  EXPECT_TRUE(fast(f));
  EXPECT_GE(f.size(), 34u);
  EXPECT_TRUE(f[12] == 0x08 && f[13] == 0x00);
}

TEST(EdgeNotUfab, FiresForWhatVmsSend) {
  std::vector<std::vector<uint8_t>> plain = {ipv4(17, 5001, 64), ipv4(6, 80, 64), ipv4(17, 5001, 1500),
                                             ipv4(17, 53, 60, 6), ipv4(1, 0, 98)};
  std::vector<uint8_t> arp(60, 0), v6(80, 0), frag = ipv4(17, kPort, 64);
  arp[12] = 0x08, arp[13] = 0x06;
  v6[12] = 0x86, v6[13] = 0xdd;
  frag[20] = 0x20;  // MF: not a whole datagram, not uFAB even to the uFAB port
  plain.insert(plain.end(), {arp, v6, frag});
  for (const auto& f : plain) {
    EXPECT_TRUE(fast(f));
    EXPECT_EQ(parse(f), wire::WireError::not_ufab);
  }
  // The one-test path takes the IPv4 ones without options (the first
  // three, ICMP, the fragment); IPv4 with options, ARP and IPv6 go the
  // long way.
  const std::vector<bool> want = {true, true, true, false, true, false, false, true};
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(plain_not_ufab(plain[i].data(), static_cast<uint32_t>(plain[i].size()), kPort), want[i]) << "frame " << i;
    expect_plain_implies(plain[i]);
  }
}

TEST(EdgeNotUfab, LeavesUfabAndTruncatedFramesToParseFrame) {
  // To the uFAB port (whatever follows), a truncated IPv4/UDP, a frame too
  // short for an IPv4 header: parse_frame decides (ok, truncated, ...).
  std::vector<uint8_t> ufab = ipv4(17, kPort, 100), truncated = ipv4(17, 5001, 64), tiny(20, 0);
  truncated[16] = 0x05;  // IPv4 total length 1280 > the 50 bytes there
  tiny[12] = 0x08;
  std::vector<uint8_t> tagged = ipv4(17, 5001, 68);  // an 802.1Q tag where the EtherType was
  tagged[12] = 0x81;
  EXPECT_FALSE(plain(tagged));
  for (const auto& f : {ufab, truncated, tiny}) {
    EXPECT_FALSE(fast(f));
    EXPECT_FALSE(plain(f));
    EXPECT_NE(parse(f), wire::WireError::not_ufab);
  }
}

TEST(EdgeNotUfab, NeverSaysNotUfabWhereParseFrameDoesNot) {
  std::mt19937 rng(4);
  const std::vector<std::vector<uint8_t>> bases = {ipv4(17, 5001, 64), ipv4(17, kPort, 80), ipv4(6, 80, 64),
                                                   ipv4(17, kPort, 90, 7), ipv4(17, 1, 34)};
  uint64_t fired = 0, checked = 0, plain_fired = 0;
  for (int i = 0; i < 200000; ++i) {
    std::vector<uint8_t> f = bases[rng() % bases.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const uint32_t what = rng() % 8;
      if (what == 0) {
        f.resize(rng() % (f.size() + 8));
      } else {  // a header byte: Ethernet type, IPv4 version/IHL, length, flags, protocol, UDP ports/length
        static constexpr size_t kAt[] = {12, 13, 14, 16, 17, 20, 21, 23, 36, 37, 38, 39, 40, 41, 44, 45};
        const size_t at = kAt[rng() % std::size(kAt)];
        if (at < f.size()) f[at] = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : f[at] ^ (1u << (rng() % 8)));
      }
    }
    ++checked;
    expect_plain_implies(f);
    plain_fired += plain(f);
    if (fast(f)) {
      ++fired;
      ASSERT_EQ(parse(f), wire::WireError::not_ufab) << "frame " << i << " of " << f.size() << " bytes";
    }
  }
  // The mutations reach both sides of the filter.
  EXPECT_GT(fired, checked / 10);
  EXPECT_LT(fired, checked);
  EXPECT_GT(plain_fired, checked / 20);
  EXPECT_LE(plain_fired, fired);
}

}  // namespace
}  // namespace ufab::pipeline
