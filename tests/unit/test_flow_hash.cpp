// The flow of a VM's frame within its pair (pipeline/flow_hash.hpp): the
// same 5-tuple is the same flow whatever IPv6 extension headers precede the
// upper-layer header, every fragment of a datagram (IPv4 or IPv6) lands in
// the flow of its addresses and protocol without ports, and a header chain
// that runs past the frame is hashed without ports (never read beyond it:
// each frame is a vector of exactly its length, so ASan sees an overread).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "pipeline/flow_hash.hpp"

namespace ufab::pipeline {
namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint32_t kFlows = 4;
constexpr uint8_t kTcp = 6, kUdp = 17, kHopByHop = 0, kRouting = 43, kFragment = 44, kEsp = 50, kAh = 51, kDestOpts = 60;

Bytes ethernet(uint16_t type) { return {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, uint8_t(type >> 8), uint8_t(type)}; }

// push_back, not insert of an initializer list: GCC 12 warns falsely on that (-Wstringop-overflow).
void append(Bytes& f, std::initializer_list<uint8_t> bytes) {
  for (uint8_t b : bytes) f.push_back(b);
}
void append(Bytes& f, const Bytes& bytes) {
  for (uint8_t b : bytes) f.push_back(b);
}

// IPv4 from 10.0.0.1 to 10.0.0.2; `frag` the flags-and-offset field; then `l4`.
Bytes ipv4(uint8_t proto, uint16_t frag, const Bytes& l4) {
  Bytes f = ethernet(0x0800);
  const uint16_t total = static_cast<uint16_t>(20 + l4.size());
  append(f, {0x45, 0, uint8_t(total >> 8), uint8_t(total), 0x12, 0x34, uint8_t(frag >> 8), uint8_t(frag), 64,
                     proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2});
  append(f, l4);
  return f;
}

uint32_t flow4(const Bytes& f) { return flow_of4(f.data(), f.size(), 0x0100000a, 0x0200000a, kFlows); }

// A TCP/UDP header's first 20 bytes: the ports, then filler.
Bytes ports(uint16_t sport, uint16_t dport) {
  Bytes b(20, 0xaa);
  b[0] = uint8_t(sport >> 8), b[1] = uint8_t(sport), b[2] = uint8_t(dport >> 8), b[3] = uint8_t(dport);
  return b;
}

// IPv6 from fd00::1 to fd00::2 with next header `next`, then `rest`.
Bytes ipv6(uint8_t next, const Bytes& rest) {
  Bytes f = ethernet(0x86dd);
  const uint16_t plen = static_cast<uint16_t>(rest.size());
  append(f, {0x60, 0, 0, 0, uint8_t(plen >> 8), uint8_t(plen), next, 64});
  for (uint8_t last : {1, 2}) append(f, {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last});
  append(f, rest);
  return f;
}

// An options-style extension header (hop-by-hop, routing, destination
// options) of 8 * (units + 1) bytes, or AH of 4 * (units + 2).
Bytes ext(uint8_t next, uint8_t type, uint8_t units) {
  const size_t bytes = type == kAh ? 4u * (units + 2u) : 8u * (units + 1u);
  Bytes b(bytes, 0x55);
  b[0] = next, b[1] = units;
  return b;
}

Bytes fragment_header(uint8_t next, uint16_t offset_units, bool more) {
  const uint16_t v = static_cast<uint16_t>(offset_units << 3 | (more ? 1 : 0));
  return {next, 0, uint8_t(v >> 8), uint8_t(v), 0xde, 0xad, 0xbe, 0xef};
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) append(out, p);
  return out;
}

uint32_t flow6(const Bytes& f) { return flow_of6(f.data(), f.size(), kFlows); }

TEST(FlowHash, Ipv4PortsChooseTheFlowAndOneTupleIsOneFlow) {
  std::set<uint32_t> seen;
  for (uint16_t sport = 1000; sport < 1064; ++sport) {
    const uint32_t f = flow4(ipv4(kTcp, 0, ports(sport, 80)));
    ASSERT_LT(f, kFlows);
    EXPECT_EQ(f, flow4(ipv4(kTcp, 0x4000 /* DF */, ports(sport, 80)))) << "DF is not a fragment";
    seen.insert(f);
  }
  EXPECT_EQ(seen.size(), kFlows) << "64 source ports over 4 flows";
}

TEST(FlowHash, Ipv4FragmentsOfADatagramShareTheFlowOfItsAddressesAndProtocol) {
  const uint32_t no_ports = flow4(ipv4(kUdp, 0, ports(0, 0)));
  for (uint16_t sport = 1000; sport < 1064; ++sport) {
    SCOPED_TRACE(sport);
    EXPECT_EQ(flow4(ipv4(kUdp, 0x2000 /* MF, offset 0 */, ports(sport, 53))), no_ports);
    EXPECT_EQ(flow4(ipv4(kUdp, 0x2000 | 185, Bytes(20, uint8_t(sport)))), no_ports);
    EXPECT_EQ(flow4(ipv4(kUdp, 370, Bytes(20, uint8_t(sport >> 1)))), no_ports);  // the last fragment
  }
}

TEST(FlowHash, Ipv6ExtensionHeadersAreSkippedToTheTransportPorts) {
  std::set<uint32_t> seen;
  for (uint16_t sport = 1000; sport < 1064; ++sport) {
    SCOPED_TRACE(sport);
    const uint32_t plain = flow6(ipv6(kTcp, ports(sport, 443)));
    ASSERT_LT(plain, kFlows);
    seen.insert(plain);
    EXPECT_EQ(flow6(ipv6(kHopByHop, cat({ext(kTcp, kHopByHop, 0), ports(sport, 443)}))), plain);
    EXPECT_EQ(flow6(ipv6(kHopByHop, cat({ext(kDestOpts, kHopByHop, 1), ext(kRouting, kDestOpts, 0),
                                         ext(kAh, kRouting, 2), ext(kTcp, kAh, 4), ports(sport, 443)}))),
              plain);
  }
  EXPECT_EQ(seen.size(), kFlows);
  // UDP is hashed on its ports as TCP is, under its own protocol number.
  std::set<uint32_t> udp;
  for (uint16_t sport = 1000; sport < 1064; ++sport) udp.insert(flow6(ipv6(kDestOpts, cat({ext(kUdp, kDestOpts, 0), ports(sport, 53)}))));
  EXPECT_EQ(udp.size(), kFlows);
}

TEST(FlowHash, Ipv6FragmentsOfADatagramShareTheFlowOfItsAddressesAndProtocol) {
  const uint32_t no_ports = flow6(ipv6(kUdp, ports(0, 0)));
  for (uint16_t sport = 1000; sport < 1064; ++sport) {
    SCOPED_TRACE(sport);
    EXPECT_EQ(flow6(ipv6(kFragment, cat({fragment_header(kUdp, 0, true), ports(sport, 53)}))), no_ports);
    EXPECT_EQ(flow6(ipv6(kFragment, cat({fragment_header(kUdp, 181, true), Bytes(24, uint8_t(sport))}))), no_ports);
    EXPECT_EQ(flow6(ipv6(kHopByHop, cat({ext(kFragment, kHopByHop, 0), fragment_header(kUdp, 362, false),
                                         Bytes(24, uint8_t(sport >> 1))}))),
              no_ports);
  }
}

TEST(FlowHash, Ipv6ChainsThatLeaveTheFrameOrHideThePortsHashWithoutPorts) {
  // A hop-by-hop header that claims 2 KB: TCP is named, its header is not there.
  const uint32_t tcp_no_ports = flow6(ipv6(kTcp, ports(0, 0)));
  Bytes hbh = ext(kTcp, kHopByHop, 0);
  hbh[1] = 255;
  EXPECT_EQ(flow6(ipv6(kHopByHop, cat({hbh, ports(1234, 80)}))), tcp_no_ports);
  // The frame ends inside an extension header: hashed as that header's type.
  const uint32_t dest_opts_no_ports = flow6(ipv6(kDestOpts, {}));
  EXPECT_EQ(flow6(ipv6(kHopByHop, cat({ext(kDestOpts, kHopByHop, 0), Bytes{kTcp, 0, 0}}))), dest_opts_no_ports);
  // ESP hides the transport header: the ports are not read.
  const uint32_t esp = flow6(ipv6(kEsp, Bytes(24, 0)));
  for (uint16_t spi = 0; spi < 16; ++spi) EXPECT_EQ(flow6(ipv6(kEsp, cat({ports(spi, spi), Bytes(4, 0)}))), esp);
  // More extension headers than kMaxIp6Ext: no ports.
  Bytes chain;
  for (uint32_t i = 0; i < kMaxIp6Ext; ++i) chain = cat({chain, ext(kDestOpts, kDestOpts, 0)});
  chain = cat({chain, ext(kTcp, kDestOpts, 0), ports(1234, 80)});
  EXPECT_EQ(flow6(ipv6(kDestOpts, chain)), dest_opts_no_ports);
}

TEST(FlowHash, FlowsFoldIntoTheirRange) {
  for (uint16_t sport = 0; sport < 256; ++sport) {
    const Bytes f = ipv4(kTcp, 0, ports(sport, 80));
    EXPECT_EQ(flow_of4(f.data(), f.size(), 1, 2, 1), 0u);
    EXPECT_LT(flow_of4(f.data(), f.size(), 1, 2, 8), 8u);
    EXPECT_LT(flow_of6(ipv6(kTcp, ports(sport, 80)).data(), 58, 3), 3u);
  }
}

}  // namespace
}  // namespace ufab::pipeline
