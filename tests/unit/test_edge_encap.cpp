// ufab-edge's data encapsulation from a per-path template
// (pipeline/encap_template.hpp) against the wire encoders
// (pipeline/encap.hpp encap(): encode_outer + encode_shim + encode_route):
// byte for byte the same frame, mbuf lengths and offsets the same, for routes
// of 1..15 labels, bodies of 0..9000 bytes and addresses whose IPv4 checksum
// sum carries. The mbufs are plain structs over a local buffer (no EAL).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "pipeline/encap.hpp"

namespace ufab::pipeline {
namespace {

constexpr uint16_t kHeadroom = 128;

struct FakeMbuf {
  std::vector<uint8_t> buf;
  std::unique_ptr<rte_mbuf> mb = std::make_unique<rte_mbuf>();
  rte_mbuf& m = *mb;
  FakeMbuf(uint32_t body, uint16_t headroom) : buf(headroom + body) {
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 7 + 3);  // headroom not zero
    m.buf_addr = buf.data();
    m.buf_len = static_cast<uint16_t>(buf.size());
    m.data_off = headroom;
    m.pkt_len = body;
    m.data_len = static_cast<uint16_t>(body);
    m.nb_segs = 1;
  }
  std::vector<uint8_t> data() const {
    const auto* p = static_cast<const uint8_t*>(m.buf_addr) + m.data_off;
    return {p, p + m.data_len};
  }
};

wire::OuterAddrs outer(uint32_t src_ip, uint32_t dst_ip) {
  wire::OuterAddrs a;
  a.src_mac = {0x02, 0, 0, 0, 0, 0x01};
  a.dst_mac = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xfe};
  a.src_ip = src_ip;
  a.dst_ip = dst_ip;
  a.dst_port = wire::kUdpPort;
  return a;
}

wire::SourceRoute route(uint8_t n, uint8_t next) {
  wire::SourceRoute r;
  r.n_labels = n;
  r.next = next;
  for (uint8_t i = 0; i < n; ++i) r.label[i] = static_cast<uint16_t>(0xff00 + 37 * i);
  return r;
}

void expect_same(const wire::OuterAddrs& a, uint16_t src_port, const wire::SourceRoute& r, uint32_t vni,
                 uint32_t pair, uint32_t body) {
  SCOPED_TRACE(testing::Message() << "labels=" << int{r.n_labels} << " body=" << body << " src_ip=" << a.src_ip);
  FakeMbuf want(body, kHeadroom), got(body, kHeadroom);
  ASSERT_TRUE(encap(&want.m, a, src_port, r, wire::kNextData, vni, pair));
  const EncapTemplate t = EncapTemplate::make(a, src_port, r);
  ASSERT_EQ(t.len, wire::kOuterBytes + wire::kShimBytes + r.wire_bytes());
  ASSERT_TRUE(encap_data(&got.m, t, EncapTemplate::shim_word(vni, pair)));
  EXPECT_EQ(got.m.data_off, want.m.data_off);
  EXPECT_EQ(got.m.pkt_len, want.m.pkt_len);
  EXPECT_EQ(got.m.data_len, want.m.data_len);
  EXPECT_EQ(got.data(), want.data());
  // And it parses as the uFAB data frame of that pair.
  const std::vector<uint8_t> f = got.data();
  wire::FrameView v;
  ASSERT_EQ(wire::parse_frame(f, v, wire::kUdpPort), wire::WireError::ok);
  EXPECT_EQ(v.shim.next, wire::kNextData);
  EXPECT_EQ(v.shim.vni, vni);
  EXPECT_EQ(v.shim.pair_id, pair);
  EXPECT_EQ(v.outer.src_port, src_port);
  EXPECT_EQ(v.route.n_labels, r.n_labels);
  EXPECT_EQ(v.payload_len, body);
  // The IPv4 header's words sum to 0xffff (RFC 1071).
  uint32_t sum = 0;
  for (size_t i = 14; i < 34; i += 2) sum += uint32_t{f[i]} << 8 | f[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  EXPECT_EQ(sum, 0xffffu);
}

TEST(EdgeEncap, TemplateMatchesTheWireEncoders) {
  for (const auto& [src, dst] : {std::pair<uint32_t, uint32_t>{0x0a000001, 0x0a000002},
                                 {0xfffffffe, 0xfffefffd}, {0, 0}}) {
    for (uint8_t n = 1; n <= wire::kMaxLabels; ++n)
      for (const uint32_t body : {0u, 1u, 60u, 61u, 1500u, 9000u})
        expect_same(outer(src, dst), static_cast<uint16_t>(49152 + n), route(n, n / 2), 0xabcdef, 0x12345678u + n,
                    body);
  }
}

TEST(EdgeEncap, HandComputedHeaderOfOneFrame) {
  // 10.0.0.1 -> 10.0.0.2, one label, a 64 B body: UDP length 8 + 8 + 4 + 64 =
  // 84, IPv4 total length 104; the checksum is the complement of the sum of
  // 4500 0068 0000 4000 4011 (0000) 0a00 0001 0a00 0002 = 0xd97c: 0x2683.
  // Shim: version 1 << 4 | next 0, VNI 1000, pair 0x00010002; route 1 label.
  const wire::OuterAddrs a = outer(0x0a000001, 0x0a000002);
  FakeMbuf got(64, kHeadroom);
  ASSERT_TRUE(encap_data(&got.m, EncapTemplate::make(a, 5000, route(1, 0)), EncapTemplate::shim_word(1000, 0x10002)));
  const std::vector<uint8_t> f = got.data();
  ASSERT_EQ(f.size(), 54u + 64u);
  EXPECT_EQ(f[16] << 8 | f[17], 104);
  EXPECT_EQ(f[24], 0x26);
  EXPECT_EQ(f[25], 0x83);
  EXPECT_EQ(f[34] << 8 | f[35], 5000);
  EXPECT_EQ(f[38] << 8 | f[39], 84);
  const uint8_t shim[8] = {0x10, 0x00, 0x03, 0xe8, 0x00, 0x01, 0x00, 0x02};
  EXPECT_EQ(std::memcmp(&f[42], shim, 8), 0);
  const uint8_t rt[4] = {1, 0, 0xff, 0x00};
  EXPECT_EQ(std::memcmp(&f[50], rt, 4), 0);
}

TEST(EdgeEncap, NoHeadroomLeavesTheMbufUntouched) {
  const EncapTemplate t = EncapTemplate::make(outer(1, 2), 1, route(3, 0));
  FakeMbuf m(100, static_cast<uint16_t>(t.len - 1));
  const std::vector<uint8_t> before = m.buf;
  EXPECT_FALSE(encap_data(&m.m, t, EncapTemplate::shim_word(1, 2)));
  EXPECT_EQ(m.m.data_off, t.len - 1);
  EXPECT_EQ(m.m.pkt_len, 100u);
  EXPECT_EQ(m.buf, before);
  FakeMbuf exact(100, t.len);
  EXPECT_TRUE(encap_data(&exact.m, t, EncapTemplate::shim_word(1, 2)));
  EXPECT_EQ(exact.m.data_off, 0);
}

}  // namespace
}  // namespace ufab::pipeline
