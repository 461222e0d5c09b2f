// Wire-format codec tests (paper App. G, design-notes §4.4/§4.5,
// docs/wire-format.md). Expected bytes are computed by hand from the layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <span>
#include <string_view>
#include <vector>

#include "probe/units.hpp"
#include "probe/wire.hpp"

namespace ufab::wire {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr MsgType kAllTypes[] = {MsgType::probe, MsgType::response, MsgType::finish,
                                 MsgType::finish_ack, MsgType::failure};

// A message whose every field differs per hop, with values at the edges of
// their wire widths (tx/q = 2^24-1, cap_code/flags = 15, w = 2^32-1).
Message make_message(MsgType type, uint8_t n_hop) {
  Message m;
  m.type = type;
  m.n_hop = n_hop;
  m.flags = kMsgNewPair | kMsgQuery;
  m.hop_index = static_cast<uint8_t>(n_hop / 2);
  m.phi = 0xdeadbeef;
  m.pair_id = 0x01020304;
  m.seq = 0xfffffffe;
  m.timestamp_ns = 0x1122334455667788ull;
  m.bytes_sent = 0xffffffffffffffffull;
  for (uint8_t i = 0; i < n_hop; ++i) {
    HopRecord& h = m.hop[i];
    h.w = i == 0 ? kMax32 : 1000u * i;
    h.phi = 64u * (i + 1);
    h.tx = i == 0 ? kMax24 : 40'000u + i;
    h.q = i == 0 ? kMax24 : 16u * i;
    h.cap_code = static_cast<uint8_t>(i % 16);
    h.flags = static_cast<uint8_t>(15 - i);
    h.port = static_cast<uint8_t>(200 + i);
  }
  return m;
}

Bytes encode(const Message& m) {
  Bytes b(m.wire_bytes());
  WireError err = WireError::truncated;
  EXPECT_EQ(encode_message(m, b, &err), m.wire_bytes());
  EXPECT_EQ(err, WireError::ok);
  return b;
}

OuterAddrs make_addrs() {
  OuterAddrs a;
  a.src_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  a.dst_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
  a.src_ip = 0xc0a8010a;  // 192.168.1.10
  a.dst_ip = 0xc0a80114;  // 192.168.1.20
  a.src_port = 49152;
  return a;
}

SourceRoute make_route(uint8_t n) {
  SourceRoute r;
  r.n_labels = n;
  r.next = 0;
  for (uint8_t i = 0; i < n; ++i) r.label[i] = static_cast<uint16_t>(0x0100 + i);
  return r;
}

// Ethernet | IPv4 | UDP | shim | route | payload, as an edge would send it.
Bytes make_frame(const TunnelShim& shim, const SourceRoute& route, const Bytes& payload) {
  const size_t inner = kShimBytes + route.wire_bytes() + payload.size();
  Bytes f(kOuterBytes + inner);
  std::span<uint8_t> s(f);
  size_t o = encode_outer(make_addrs(), inner, s);
  o += encode_shim(shim, s.subspan(o));
  o += encode_route(route, s.subspan(o));
  std::copy(payload.begin(), payload.end(), f.begin() + static_cast<std::ptrdiff_t>(o));
  return f;
}

Bytes make_control_frame(uint8_t n_hop) {
  TunnelShim shim{kNextControl, 0x00abcdef, 0x01020304};
  return make_frame(shim, make_route(3), encode(make_message(MsgType::probe, n_hop)));
}

uint16_t be16(const Bytes& b, size_t o) { return static_cast<uint16_t>((b[o] << 8) | b[o + 1]); }

// ---------------------------------------------------------------- round trips

TEST(WireMessage, RoundTripEveryTypeWith1And5And15Hops) {
  for (MsgType t : kAllTypes) {
    for (uint8_t n : {uint8_t{1}, uint8_t{5}, uint8_t{15}}) {
      const Message m = make_message(t, n);
      const Bytes b = encode(m);
      ASSERT_EQ(b.size(), 32u + 16u * n);
      Message d;
      size_t used = 0;
      ASSERT_EQ(decode_message(b, d, &used), WireError::ok) << static_cast<int>(t) << " " << int{n};
      EXPECT_EQ(used, b.size());
      EXPECT_EQ(d, m) << "type " << static_cast<int>(t) << " hops " << int{n};
      EXPECT_EQ(check_message(b), WireError::ok);
    }
  }
}

TEST(WireMessage, HopIndexMayEqualHopCount) {  // every hop already stamped
  Message m = make_message(MsgType::response, 5);
  m.hop_index = 5;
  Message d;
  ASSERT_EQ(decode_message(encode(m), d), WireError::ok);
  EXPECT_EQ(d.hop_index, 5);
}

TEST(WireMessage, DecodeIgnoresTrailingBytes) {
  Bytes b = encode(make_message(MsgType::probe, 2));
  b.push_back(0xaa);
  Message d;
  size_t used = 0;
  ASSERT_EQ(decode_message(b, d, &used), WireError::ok);
  EXPECT_EQ(used, 64u);
}

TEST(WireShim, RoundTripDataAndControl) {
  for (uint8_t next : {kNextData, kNextControl}) {
    const TunnelShim s{next, kMax24, 0xfedcba98};
    uint8_t buf[kShimBytes];
    ASSERT_EQ(encode_shim(s, buf), kShimBytes);
    TunnelShim d;
    size_t used = 0;
    ASSERT_EQ(decode_shim(buf, d, &used), WireError::ok);
    EXPECT_EQ(used, kShimBytes);
    EXPECT_EQ(d.next, next);
    EXPECT_EQ(d.vni, kMax24);
    EXPECT_EQ(d.pair_id, 0xfedcba98u);
  }
}

TEST(WireShim, GoldenBytes) {
  const TunnelShim s{kNextControl, 0x00abcdef, 0x01020304};
  uint8_t buf[kShimBytes];
  ASSERT_EQ(encode_shim(s, buf), 8u);
  const uint8_t want[] = {0x11, 0xab, 0xcd, 0xef, 0x01, 0x02, 0x03, 0x04};  // ver 1 | next 1
  EXPECT_EQ(std::vector<uint8_t>(buf, buf + 8), std::vector<uint8_t>(want, want + 8));
}

TEST(WireRoute, RoundTripAndGoldenBytes) {
  for (uint8_t n : {uint8_t{1}, uint8_t{5}, uint8_t{15}}) {
    SourceRoute r = make_route(n);
    r.next = n;  // pointer past the last label: route fully consumed
    Bytes b(r.wire_bytes());
    ASSERT_EQ(encode_route(r, b), 2u + 2u * n);
    EXPECT_EQ(b[0], n);
    EXPECT_EQ(b[1], n);
    EXPECT_EQ(b[2], 0x01);  // label 0 = 0x0100, big-endian
    EXPECT_EQ(b[3], 0x00);
    EXPECT_EQ(b[2 + 2 * (n - 1) + 1], n - 1);  // last label low byte
    SourceRoute d;
    size_t used = 0;
    ASSERT_EQ(decode_route(b, d, &used), WireError::ok);
    EXPECT_EQ(used, b.size());
    EXPECT_EQ(d.n_labels, n);
    EXPECT_EQ(d.next, n);
    EXPECT_EQ(d.label, r.label);
  }
}

// ------------------------------------------------------------------ golden

// A 2-hop probe; every byte below was worked out by hand from the layout in
// docs/wire-format.md.
TEST(WireMessage, GoldenProbeBytes) {
  Message m;
  m.type = MsgType::probe;
  m.n_hop = 2;
  m.flags = kMsgNewPair;
  m.hop_index = 0;
  m.phi = tokens_to_wire(100.0);  // 100 tokens = 6400 = 0x1900
  m.pair_id = 0xa1b2c3d4;
  m.seq = 7;
  m.timestamp_ns = 0x0102030405060708ull;
  m.bytes_sent = 4096;
  // hop 0: the 5 MB per-pair window (78125 = 0x1312d units), 400 Gb/s link
  m.hop[0] = {window_to_wire(5e6), 6400, tx_to_wire(400e9), queue_to_wire(1024),
              capacity_code_of(400'000'000'000ull), 0, 3};
  // hop 1: tx over 24 bits saturates; cap_code 0x1f and flags 0x12 are masked
  m.hop[1] = {1, 0, kMax24 + 5, 0x123456, 0x1f, 0x12, 0xfe};

  const uint8_t want[64] = {
      // header
      0x12, 0x01, 0x00, 0x01,                          // type 1|n_hop 2, flags, hop_index, version
      0x00, 0x00, 0x19, 0x00,                          // phi = 6400
      0xa1, 0xb2, 0xc3, 0xd4,                          // pair_id
      0x00, 0x00, 0x00, 0x07,                          // seq
      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // timestamp_ns
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,  // bytes_sent = 4096
      // hop 0 (offset 32)
      0x00, 0x01, 0x31, 0x2d,  // w = 78125
      0x00, 0x00, 0x19, 0x00,  // phi = 6400
      0x06, 0x1a, 0x80,        // tx = 400000 Mb/s
      0x00, 0x00, 0x10,        // q = 1024 B / 64 = 16
      0xb0,                    // cap_code 11 (400 Gb/s) | flags 0
      0x03,                    // port
      // hop 1 (offset 48)
      0x00, 0x00, 0x00, 0x01,  // w = 1
      0x00, 0x00, 0x00, 0x00,  // phi = 0
      0xff, 0xff, 0xff,        // tx saturated
      0x12, 0x34, 0x56,        // q
      0xf2,                    // cap_code 0xf | flags 0x2
      0xfe,                    // port
  };
  Bytes b(64);
  ASSERT_EQ(encode_message(m, b), 64u);
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(b[i], want[i]) << "offset " << i;

  // Spot checks at named offsets (the same bytes, asserted individually).
  EXPECT_EQ(b[0], 0x12);
  EXPECT_EQ(b[3], kVersion);
  EXPECT_EQ(b[32 + 14], 0xb0);
  EXPECT_EQ(b[48 + 8], 0xff);
  EXPECT_EQ(b[48 + 14], 0xf2);

  Message d;
  ASSERT_EQ(decode_message(b, d), WireError::ok);
  EXPECT_EQ(d.hop[0], m.hop[0]);
  EXPECT_EQ(d.hop[1].tx, kMax24);
  EXPECT_EQ(d.hop[1].cap_code, 0xf);
  EXPECT_EQ(d.hop[1].flags, 0x2);
}

TEST(WireMessage, FivehopProbeIs112Bytes) {
  EXPECT_EQ(make_message(MsgType::probe, 5).wire_bytes(), 32u + 80u);
}

// ------------------------------------------------------------ outer headers

// IPv4 header for 192.168.1.10 -> 192.168.1.20, UDP payload 100 B (total 128):
// words 4500 0080 0000 4000 4011 [0000] c0a8 010a c0a8 0114
// sum = 0x248ff, fold 0x48ff + 0x2 = 0x4901, checksum = ~0x4901 = 0xb6fe.
TEST(WireOuter, GoldenHeadersAndHandComputedChecksum) {
  Bytes f(kOuterBytes);
  WireError err = WireError::truncated;
  ASSERT_EQ(encode_outer(make_addrs(), 100, f, &err), 42u);
  EXPECT_EQ(err, WireError::ok);
  const uint8_t want[42] = {
      0x02, 0x00, 0x00, 0x00, 0x00, 0x02,  // dst mac
      0x02, 0x00, 0x00, 0x00, 0x00, 0x01,  // src mac
      0x08, 0x00,                          // IPv4
      0x45, 0x00, 0x00, 0x80,              // v4 IHL 5, tos, total 128
      0x00, 0x00, 0x40, 0x00,              // id 0, DF
      0x40, 0x11, 0xb6, 0xfe,              // TTL 64, UDP, checksum
      0xc0, 0xa8, 0x01, 0x0a,              // src
      0xc0, 0xa8, 0x01, 0x14,              // dst
      0xc0, 0x00, 0x1c, 0xad,              // sport 49152, dport 7341
      0x00, 0x6c, 0x00, 0x00,              // UDP length 108, checksum 0
  };
  for (size_t i = 0; i < 42; ++i) EXPECT_EQ(f[i], want[i]) << "offset " << i;
  EXPECT_EQ(be16(f, 24), 0xb6fe);
  // Receiver-side check: the ones'-complement sum over the header is 0xffff.
  uint32_t sum = 0;
  for (size_t i = 14; i < 34; i += 2) sum += be16(f, i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  EXPECT_EQ(sum, 0xffffu);
}

TEST(WireFrame, ParseControlFrame) {
  const Bytes f = make_control_frame(5);
  FrameView v;
  ASSERT_EQ(parse_frame(f, v), WireError::ok);
  EXPECT_EQ(v.outer.src_ip, 0xc0a8010au);
  EXPECT_EQ(v.outer.dst_ip, 0xc0a80114u);
  EXPECT_EQ(v.outer.src_port, 49152);
  EXPECT_EQ(v.outer.dst_port, kUdpPort);
  EXPECT_EQ(v.outer.src_mac[5], 0x01);
  EXPECT_EQ(v.outer.dst_mac[5], 0x02);
  EXPECT_EQ(v.shim.next, kNextControl);
  EXPECT_EQ(v.shim.vni, 0xabcdefu);
  EXPECT_EQ(v.shim.pair_id, 0x01020304u);
  EXPECT_EQ(v.route.n_labels, 3);
  EXPECT_EQ(v.route.label[2], 0x0102);
  EXPECT_EQ(v.route_offset, 42u + 8u);
  EXPECT_EQ(v.payload_offset, 42u + 8u + 8u);
  EXPECT_EQ(v.payload_len, 112u);
  Message m;
  ASSERT_EQ(decode_message(std::span(f).subspan(v.payload_offset, v.payload_len), m), WireError::ok);
  EXPECT_EQ(m, make_message(MsgType::probe, 5));
}

TEST(WireFrame, DataFramePayloadIsInnerFrame) {
  const Bytes inner(60, 0x5a);
  const Bytes f = make_frame({kNextData, 42, 9}, make_route(1), inner);
  FrameView v;
  ASSERT_EQ(parse_frame(f, v), WireError::ok);
  EXPECT_EQ(v.shim.next, kNextData);
  EXPECT_EQ(v.payload_offset, 42u + 8u + 4u);
  EXPECT_EQ(v.payload_len, 60u);
}

TEST(WireFrame, EthernetPaddingIgnored) {
  Bytes f = make_control_frame(1);
  const size_t real = f.size();
  f.resize(real + 20, 0xee);  // trailer after the IP datagram
  FrameView v;
  ASSERT_EQ(parse_frame(f, v), WireError::ok);
  EXPECT_EQ(v.payload_offset + v.payload_len, real);
}

TEST(WireFrame, PayloadBoundedByUdpLength) {
  Bytes f = make_control_frame(1);  // 42 + 8 + 8 + 48 = 106 bytes
  // Shrink the UDP length by 16: the payload ends 16 bytes before the datagram.
  const uint16_t udp_len = be16(f, 38);
  f[38] = static_cast<uint8_t>((udp_len - 16) >> 8);
  f[39] = static_cast<uint8_t>(udp_len - 16);
  FrameView v;
  ASSERT_EQ(parse_frame(f, v), WireError::ok);
  EXPECT_EQ(v.payload_len, 48u - 16u);
  // A UDP length past the IP datagram, or below the UDP header, is truncated.
  f[38] = 0x7f;
  EXPECT_EQ(parse_frame(f, v), WireError::truncated);
  f[38] = 0;
  f[39] = 7;
  EXPECT_EQ(parse_frame(f, v), WireError::truncated);
}

TEST(WireFrame, AcceptsIpv4Options) {
  const Bytes plain = make_control_frame(2);
  // Insert 4 bytes of options (NOP NOP NOP EOL) after the 20-byte IP header.
  Bytes f(plain.begin(), plain.begin() + 34);
  f.insert(f.end(), {0x01, 0x01, 0x01, 0x00});
  f.insert(f.end(), plain.begin() + 34, plain.end());
  f[14] = 0x46;  // IHL 6
  const uint16_t total = static_cast<uint16_t>(be16(plain, 16) + 4);
  f[16] = static_cast<uint8_t>(total >> 8);
  f[17] = static_cast<uint8_t>(total);
  FrameView v;
  ASSERT_EQ(parse_frame(f, v), WireError::ok);
  EXPECT_EQ(v.route_offset, 46u + 8u);
  EXPECT_EQ(v.payload_offset, 46u + 16u);
  EXPECT_EQ(v.payload_len, 64u);
  Message m;
  EXPECT_EQ(decode_message(std::span(f).subspan(v.payload_offset, v.payload_len), m), WireError::ok);
  // An IHL pointing past the datagram is truncated.
  f[14] = 0x4f;
  f[16] = 0;
  f[17] = 40;
  f.resize(14 + 40);
  EXPECT_EQ(parse_frame(f, v), WireError::truncated);
}

TEST(WireFrame, CustomUdpPort) {
  OuterAddrs a = make_addrs();
  a.dst_port = 4789;
  Bytes f(kOuterBytes + 8 + 4);
  size_t o = encode_outer(a, 12, f);
  o += encode_shim({kNextData, 1, 2}, std::span(f).subspan(o));
  encode_route(make_route(1), std::span(f).subspan(o));
  FrameView v;
  EXPECT_EQ(parse_frame(f, v), WireError::not_ufab);
  EXPECT_EQ(parse_frame(f, v, 4789), WireError::ok);
}

// ---------------------------------------------------------- non-uFAB frames

TEST(WireFrame, NonUfabFrames) {
  FrameView v;
  const Bytes ufab = make_control_frame(1);

  Bytes arp(42, 0);  // Ethernet + ARP request
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(parse_frame(arp, v), WireError::not_ufab);

  Bytes ipv6(14 + 40 + 8, 0);
  ipv6[12] = 0x86;
  ipv6[13] = 0xdd;
  ipv6[14] = 0x60;
  EXPECT_EQ(parse_frame(ipv6, v), WireError::not_ufab);

  Bytes vlan = ufab;  // 802.1Q tag in front of the IPv4 ethertype
  vlan.insert(vlan.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  EXPECT_EQ(parse_frame(vlan, v), WireError::not_ufab);

  Bytes tcp = ufab;
  tcp[14 + 9] = 6;
  EXPECT_EQ(parse_frame(tcp, v), WireError::not_ufab);

  Bytes port = ufab;
  port[36] = 0x12;  // dst port 0x12b5 = 4789 (VXLAN)
  port[37] = 0xb5;
  EXPECT_EQ(parse_frame(port, v), WireError::not_ufab);

  Bytes first_fragment = ufab;
  first_fragment[20] = 0x20;  // MF, offset 0
  EXPECT_EQ(parse_frame(first_fragment, v), WireError::not_ufab);

  Bytes later_fragment = ufab;
  later_fragment[20] = 0x00;  // offset 1 (8 bytes)
  later_fragment[21] = 0x01;
  EXPECT_EQ(parse_frame(later_fragment, v), WireError::not_ufab);

  Bytes not_v4 = ufab;  // IPv4 ethertype but version 6 in the header
  not_v4[14] = 0x65;
  EXPECT_EQ(parse_frame(not_v4, v), WireError::not_ufab);

  EXPECT_EQ(parse_frame(ufab, v), WireError::ok);  // the unmodified frame parses
}

// ------------------------------------------------------------ malformed input

// Each prefix is copied into its own heap buffer of exactly that size, so
// ASan flags any read past it.
TEST(WireMalformed, EveryTruncationOfFiveHopMessage) {
  const Bytes full = encode(make_message(MsgType::probe, 5));
  ASSERT_EQ(full.size(), 112u);
  for (size_t len = 0; len < full.size(); ++len) {
    const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    Message m;
    EXPECT_EQ(decode_message(cut, m), WireError::truncated) << "len " << len;
    EXPECT_EQ(check_message(cut), WireError::truncated) << "len " << len;
  }
}

TEST(WireMalformed, EveryTruncationOfFullFrame) {
  const Bytes full = make_control_frame(5);
  ASSERT_EQ(full.size(), 42u + 8u + 8u + 112u);
  for (size_t len = 0; len < full.size(); ++len) {
    const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    FrameView v;
    EXPECT_EQ(parse_frame(cut, v), WireError::truncated) << "len " << len;
  }
}

TEST(WireMalformed, EveryTruncationOfShimAndRoute) {
  uint8_t shim[kShimBytes];
  ASSERT_EQ(encode_shim({kNextControl, 1, 2}, shim), kShimBytes);
  const SourceRoute r = make_route(15);
  Bytes route(r.wire_bytes());
  ASSERT_EQ(encode_route(r, route), 32u);
  for (size_t len = 0; len < kShimBytes; ++len) {
    const Bytes cut(shim, shim + len);
    TunnelShim s;
    EXPECT_EQ(decode_shim(cut, s), WireError::truncated) << len;
  }
  for (size_t len = 0; len < route.size(); ++len) {
    const Bytes cut(route.begin(), route.begin() + static_cast<std::ptrdiff_t>(len));
    SourceRoute d;
    EXPECT_EQ(decode_route(cut, d), WireError::truncated) << len;
  }
}

TEST(WireMalformed, TruncatedIpTotalLength) {
  Bytes f = make_control_frame(1);
  f[16] = 0x05;  // IP total length 0x05xx > frame
  FrameView v;
  EXPECT_EQ(parse_frame(f, v), WireError::truncated);
  f[16] = 0;
  f[17] = 24;  // total < IP header + UDP header
  EXPECT_EQ(parse_frame(f, v), WireError::truncated);
}

TEST(WireMalformed, BadVersion) {
  Bytes b = encode(make_message(MsgType::probe, 2));
  b[3] = 2;
  Message m;
  EXPECT_EQ(decode_message(b, m), WireError::bad_version);
  EXPECT_EQ(check_message(b), WireError::bad_version);

  uint8_t shim[kShimBytes];
  ASSERT_EQ(encode_shim({kNextData, 1, 2}, shim), kShimBytes);
  shim[0] = 0x20;  // version 2
  TunnelShim s;
  EXPECT_EQ(decode_shim(shim, s), WireError::bad_version);

  // A bad shim inside a frame surfaces from parse_frame too.
  Bytes f = make_control_frame(1);
  f[42] = 0x01;  // version 0, next 1
  FrameView v;
  EXPECT_EQ(parse_frame(f, v), WireError::bad_version);
}

TEST(WireMalformed, BadType) {
  Bytes b = encode(make_message(MsgType::probe, 2));
  Message m;
  for (uint8_t t : {0, 6, 15}) {
    b[0] = static_cast<uint8_t>((t << 4) | 2);
    EXPECT_EQ(decode_message(b, m), WireError::bad_type) << int{t};
    EXPECT_EQ(check_message(b), WireError::bad_type);
  }
  Message bad = make_message(MsgType::probe, 2);
  bad.type = static_cast<MsgType>(6);
  Bytes out(64);
  WireError err = WireError::ok;
  EXPECT_EQ(encode_message(bad, out, &err), 0u);
  EXPECT_EQ(err, WireError::bad_type);
}

TEST(WireMalformed, BadHopCount) {
  Bytes b = encode(make_message(MsgType::probe, 2));
  b[0] = 0x10;  // n_hop 0
  b[2] = 0;
  Message m;
  EXPECT_EQ(decode_message(b, m), WireError::bad_hop_count);
  EXPECT_EQ(check_message(b), WireError::bad_hop_count);
  Bytes out(512);
  WireError err = WireError::ok;
  for (uint8_t n : {uint8_t{0}, uint8_t{16}}) {
    Message bad = make_message(MsgType::probe, 1);
    bad.n_hop = n;
    bad.hop_index = 0;
    EXPECT_EQ(encode_message(bad, out, &err), 0u);
    EXPECT_EQ(err, WireError::bad_hop_count) << int{n};
  }
}

TEST(WireMalformed, BadHopIndex) {
  Bytes b = encode(make_message(MsgType::probe, 2));
  b[2] = 3;
  Message m;
  EXPECT_EQ(decode_message(b, m), WireError::bad_hop_index);
  EXPECT_EQ(check_message(b), WireError::bad_hop_index);
  Message bad = make_message(MsgType::probe, 2);
  bad.hop_index = 3;
  WireError err = WireError::ok;
  EXPECT_EQ(encode_message(bad, b, &err), 0u);
  EXPECT_EQ(err, WireError::bad_hop_index);
}

TEST(WireMalformed, BadLabelCountAndIndex) {
  SourceRoute d;
  const uint8_t zero[] = {0, 0};
  EXPECT_EQ(decode_route(zero, d), WireError::bad_label_count);
  Bytes sixteen(2 + 32, 0);
  sixteen[0] = 16;
  EXPECT_EQ(decode_route(sixteen, d), WireError::bad_label_count);
  const uint8_t past[] = {2, 3, 0, 1, 0, 2};  // next 3 > 2 labels
  EXPECT_EQ(decode_route(past, d), WireError::bad_label_index);

  Bytes out(64);
  WireError err = WireError::ok;
  SourceRoute r = make_route(1);
  r.n_labels = 0;
  EXPECT_EQ(encode_route(r, out, &err), 0u);
  EXPECT_EQ(err, WireError::bad_label_count);
  r.n_labels = 16;
  EXPECT_EQ(encode_route(r, out, &err), 0u);
  EXPECT_EQ(err, WireError::bad_label_count);
  r = make_route(4);
  r.next = 5;
  EXPECT_EQ(encode_route(r, out, &err), 0u);
  EXPECT_EQ(err, WireError::bad_label_index);

  // A frame whose route is bad is reported as such.
  Bytes f = make_control_frame(1);
  f[50] = 0;  // n_labels 0
  FrameView v;
  EXPECT_EQ(parse_frame(f, v), WireError::bad_label_count);
}

TEST(WireMalformed, BadNext) {
  uint8_t shim[kShimBytes];
  ASSERT_EQ(encode_shim({kNextControl, 1, 2}, shim), kShimBytes);
  shim[0] = 0x12;  // version 1, next 2
  TunnelShim s;
  EXPECT_EQ(decode_shim(shim, s), WireError::bad_next);
  WireError err = WireError::ok;
  EXPECT_EQ(encode_shim({2, 1, 2}, shim, &err), 0u);
  EXPECT_EQ(err, WireError::bad_next);
}

TEST(WireMalformed, BadFieldVniAndOversizedPayload) {
  uint8_t shim[kShimBytes];
  WireError err = WireError::ok;
  EXPECT_EQ(encode_shim({kNextData, 1u << 24, 2}, shim, &err), 0u);
  EXPECT_EQ(err, WireError::bad_field);
  Bytes f(kOuterBytes);
  EXPECT_EQ(encode_outer(make_addrs(), 65535 - 28, f, &err), 42u);  // largest datagram
  EXPECT_EQ(err, WireError::ok);
  EXPECT_EQ(be16(f, 16), 0xffff);
  EXPECT_EQ(encode_outer(make_addrs(), 65535 - 27, f, &err), 0u);
  EXPECT_EQ(err, WireError::bad_field);
}

TEST(WireMalformed, BufferTooSmall) {
  WireError err = WireError::ok;
  uint8_t small[7];
  EXPECT_EQ(encode_shim({kNextData, 1, 2}, small, &err), 0u);
  EXPECT_EQ(err, WireError::buffer_too_small);

  Bytes route(2 + 2 * 3 - 1);
  EXPECT_EQ(encode_route(make_route(3), route, &err), 0u);
  EXPECT_EQ(err, WireError::buffer_too_small);

  const Message m = make_message(MsgType::finish, 5);
  Bytes msg(m.wire_bytes() - 1, 0x77);
  EXPECT_EQ(encode_message(m, msg, &err), 0u);
  EXPECT_EQ(err, WireError::buffer_too_small);
  for (uint8_t b : msg) EXPECT_EQ(b, 0x77);  // nothing written on failure

  Bytes outer(kOuterBytes - 1);
  EXPECT_EQ(encode_outer(make_addrs(), 0, outer, &err), 0u);
  EXPECT_EQ(err, WireError::buffer_too_small);

  EXPECT_EQ(encode_message(m, msg), 0u);  // err pointer is optional
}

TEST(WireMalformed, ToStringNamesEveryError) {
  std::set<std::string_view> names;
  for (uint8_t e = 0; e <= static_cast<uint8_t>(WireError::bad_field); ++e) {
    const std::string_view s = to_string(static_cast<WireError>(e));
    EXPECT_NE(s, "unknown");
    names.insert(s);
  }
  EXPECT_EQ(names.size(), 12u);
  EXPECT_EQ(to_string(WireError::not_ufab), "not_ufab");
}

// --------------------------------------------------------- in-place access

// The switch path (§3.6, App. G): read the sender's w^l, write back W_l.
TEST(WireInPlace, ReadAndWriteHop) {
  const Message m = make_message(MsgType::probe, 5);
  Bytes b = encode(m);
  ASSERT_EQ(check_message(b), WireError::ok);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(read_hop(b, i), m.hop[i]) << i;

  const Bytes before = b;
  HopRecord h = read_hop(b, 2);
  h.w = 1'562'500'000;  // W_l: 20K pairs x 78125 units
  h.phi = 1'309'440'000;
  h.tx = 380'000;
  h.q = 3;
  h.cap_code = 11;
  h.flags = kHopStamped;
  write_hop(b, 2, h);
  EXPECT_EQ(read_hop(b, 2), h);
  for (size_t i = 0; i < b.size(); ++i) {
    if (i < 32 + 2 * 16 || i >= 32 + 3 * 16) {
      EXPECT_EQ(b[i], before[i]) << "offset " << i;
    }
  }
  Message d;
  ASSERT_EQ(decode_message(b, d), WireError::ok);
  Message want = m;
  want.hop[2] = h;
  EXPECT_EQ(d, want);

  // write_hop applies the same saturation / masking as the encoder.
  write_hop(b, 0, {0, 0, 0xffffffff, 1u << 24, 0x3b, 0x17, 9});
  const HopRecord r = read_hop(b, 0);
  EXPECT_EQ(r.tx, kMax24);
  EXPECT_EQ(r.q, kMax24);
  EXPECT_EQ(r.cap_code, 0xb);
  EXPECT_EQ(r.flags, 0x7);
}

TEST(WireInPlace, OutOfRangeHopIsHarmless) {
  const Message m = make_message(MsgType::probe, 2);
  Bytes b = encode(m);
  const Bytes before = b;
  write_hop(b, 2, {1, 1, 1, 1, 1, 1, 1});  // i == n_hop
  write_hop(b, 15, {1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(b, before);
  EXPECT_EQ(read_hop(b, 2), HopRecord{});
  const Bytes cut(b.begin(), b.begin() + 40);  // header says 2 hops, buffer has 0.5
  EXPECT_EQ(read_hop(cut, 0), HopRecord{});
  EXPECT_EQ(read_hop(Bytes{}, 0), HopRecord{});
}

}  // namespace
}  // namespace ufab::wire
