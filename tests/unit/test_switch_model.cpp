// μFAB-C switch model on real wire bytes (§3.6, §4.2, App. G; design-notes
// §4.1–§4.5; p4/model/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <random>
#include <string>
#include <set>
#include <vector>

#include "p4/model/switch_model.hpp"
#include "probe/units.hpp"
#include "probe/wire.hpp"
#include "tests/mutate_frame.hpp"

namespace ufab::swmodel {
namespace {

using wire::HopRecord;
using wire::Message;
using wire::MsgType;
using wire::WireError;

constexpr uint32_t kSrcIp = 0x0a000001, kDstIp = 0x0a000002;

wire::OuterAddrs outer(uint32_t src = kSrcIp, uint32_t dst = kDstIp) {
  wire::OuterAddrs o;
  o.src_mac = {2, 0, 0, 0, 0, 1};
  o.dst_mac = {2, 0, 0, 0, 0, 2};
  o.src_ip = src;
  o.dst_ip = dst;
  o.src_port = 4242;
  return o;
}

wire::SourceRoute route(std::initializer_list<uint16_t> labels, uint8_t next = 0) {
  wire::SourceRoute r;
  for (uint16_t l : labels) r.label[r.n_labels++] = l;
  r.next = next;
  return r;
}

std::vector<uint8_t> ufab_frame(const wire::OuterAddrs& o, const wire::TunnelShim& s, const wire::SourceRoute& r,
                                std::span<const uint8_t> payload) {
  const size_t len = wire::kShimBytes + r.wire_bytes() + payload.size();
  std::vector<uint8_t> f(wire::kOuterBytes + len);
  std::span<uint8_t> b(f);
  size_t off = wire::encode_outer(o, len, b);
  off += wire::encode_shim(s, b.subspan(off));
  off += wire::encode_route(r, b.subspan(off));
  std::copy(payload.begin(), payload.end(), f.begin() + static_cast<ptrdiff_t>(off));
  return f;
}

std::vector<uint8_t> control_frame(const wire::SourceRoute& r, const Message& m, uint32_t src = kSrcIp,
                                   uint32_t vni = 77) {
  std::vector<uint8_t> msg(m.wire_bytes());
  EXPECT_EQ(wire::encode_message(m, msg), msg.size());
  return ufab_frame(outer(src), {wire::kNextControl, vni, m.pair_id}, r, msg);
}

Message probe(uint32_t pair_id, uint32_t phi, std::initializer_list<uint32_t> w, MsgType type = MsgType::probe) {
  Message m;
  m.type = type;
  m.pair_id = pair_id;
  m.phi = phi;
  m.seq = 9;
  m.timestamp_ns = 123456789;
  for (uint32_t x : w) m.hop[m.n_hop++].w = x;
  return m;
}

struct Parsed {
  wire::FrameView v;
  Message m;
};
Parsed parse(const std::vector<uint8_t>& f) {
  Parsed p;
  EXPECT_EQ(wire::parse_frame(f, p.v), WireError::ok);
  EXPECT_EQ(wire::decode_message(std::span<const uint8_t>(f).subspan(p.v.payload_offset, p.v.payload_len), p.m),
            WireError::ok);
  return p;
}

// A plain UDP/IPv4 frame (not to the uFAB port) of `len` bytes.
std::vector<uint8_t> l3_frame(uint32_t dst, uint16_t sport, size_t len = 100) {
  std::vector<uint8_t> f(len, 0xab);
  wire::OuterAddrs o = outer(kSrcIp, dst);
  o.src_port = sport;
  o.dst_port = 53;
  wire::encode_outer(o, len - wire::kOuterBytes, f);
  return f;
}

SwitchConfig cfg4() {
  SwitchConfig c;
  c.n_ports = 4;
  c.cap_codes = {9, 9, 5, 9};  // port 2: 10 Gb/s
  return c;
}

TEST(SwitchModel, FirstProbeRegistersAndStampsHandComputedUnits) {
  SwitchModel sw(cfg4());
  const Nanos t0 = 1 * kMs;
  // 2.5 Gb/s on port 2 for one 32 µs tx window: 10 000 B -> 10000 >> 2 = 2500 Mb/s.
  for (int i = 0; i < 10; ++i) {
    auto d = l3_frame(kDstIp, 1, 1000);
    ASSERT_TRUE(sw.egress(d, 2, 0, t0 + Nanos(i) * kUs, 0).forward);
  }
  auto f = control_frame(route({2}), probe(5, 640, {100}));
  const Decision d = sw.process(f, 1, t0 + 40 * kUs, 6400);
  ASSERT_TRUE(d.forward);
  EXPECT_EQ(d.port, 2);
  const Parsed p = parse(f);
  EXPECT_EQ(p.v.route.next, 1);
  EXPECT_EQ(p.m.hop_index, 1);
  EXPECT_EQ(p.m.hop[0], (HopRecord{100, 640, 2500, 100, 5, wire::kHopStamped, 1}));
  EXPECT_EQ(p.m.phi, 640u);
  EXPECT_EQ(sw.link(2).phi_sum(), 640u);
  EXPECT_EQ(sw.link(2).w_sum(), 100u);
  EXPECT_EQ(sw.link(2).counters().tx_packets, 11u);
  EXPECT_EQ(sw.link(2).counters().tx_bytes, 10000u + f.size());
  EXPECT_EQ(sw.counters().ufab_forwarded, 1u);
}

TEST(SwitchModel, WindowAndTokenChangesApplyExactDeltasAndDuplicatesNothing) {
  SwitchModel sw(cfg4());
  auto send = [&](uint32_t pair, uint32_t phi, uint32_t w, uint32_t src = kSrcIp) {
    auto f = control_frame(route({3}), probe(pair, phi, {w}), src);
    EXPECT_TRUE(sw.process(f, 0, kMs, 0).forward);
    return parse(f).m.hop[0];
  };
  send(1, 640, 100);
  EXPECT_EQ(send(1, 640, 150).w, 150u);  // window grows by 50 units
  EXPECT_EQ(sw.link(3).phi_sum(), 640u);
  const HopRecord r = send(1, 320, 150);  // token halves
  EXPECT_EQ(r.phi, 320u);
  EXPECT_EQ(r.w, 150u);
  EXPECT_EQ(send(1, 320, 150).phi, 320u);  // duplicate / retransmission
  EXPECT_EQ(sw.link(3).w_sum(), 150u);
  // A second pair: same pair id from another sending edge is another pair.
  const HopRecord two = send(1, 64, 10, 0x0a000009);
  EXPECT_EQ(two.phi, 384u);
  EXPECT_EQ(two.w, 160u);
  EXPECT_EQ(sw.link(3).counters().pairs_inserted, 2u);
  EXPECT_EQ(sw.link(3).counters().pairs_updated, 3u);
}

TEST(SwitchModel, FinishSubtractsExactlyAndAcksEvenForUnknownPair) {
  SwitchModel sw(cfg4());
  auto p1 = control_frame(route({3}), probe(1, 640, {100}));
  auto p2 = control_frame(route({3}), probe(2, 64, {30}));
  sw.process(p1, 0, kMs, 0);
  sw.process(p2, 0, kMs, 0);
  auto fin = control_frame(route({3}), probe(1, 640, {0}, MsgType::finish));
  ASSERT_TRUE(sw.process(fin, 0, kMs, 0).forward);
  const Parsed p = parse(fin);
  EXPECT_EQ(p.m.hop_index, 1);
  EXPECT_EQ(p.m.hop[0], (HopRecord{0, 0, 0, 0, 0, wire::kHopAck, 0}));
  EXPECT_EQ(sw.link(3).phi_sum(), 64u);
  EXPECT_EQ(sw.link(3).w_sum(), 30u);
  auto again = control_frame(route({3}), probe(1, 640, {0}, MsgType::finish));  // retry: unknown now
  ASSERT_TRUE(sw.process(again, 2, kMs, 0).forward);
  EXPECT_EQ(parse(again).m.hop[0].flags, wire::kHopAck);
  EXPECT_EQ(parse(again).m.hop[0].port, 2);
  EXPECT_EQ(sw.link(3).phi_sum(), 64u);
  EXPECT_EQ(sw.link(3).w_sum(), 30u);
  EXPECT_EQ(sw.link(3).counters().finishes_found, 1u);
  EXPECT_EQ(sw.link(3).counters().finishes_unknown, 1u);
}

TEST(SwitchModel, ResponsesAndFinishAcksPassUnstamped) {
  SwitchModel sw(cfg4());
  for (MsgType t : {MsgType::response, MsgType::finish_ack, MsgType::failure}) {
    Message m = probe(3, 64, {11, 22});
    m.type = t;
    m.hop[0].flags = wire::kHopStamped;
    auto f = control_frame(route({1, 2}), m);
    ASSERT_TRUE(sw.process(f, 0, kMs, 0).forward);
    EXPECT_EQ(parse(f).m, m);
    EXPECT_EQ(parse(f).v.route.next, 1);
  }
  EXPECT_EQ(sw.link(1).phi_sum(), 0u);
  EXPECT_EQ(sw.link(1).table().occupancy(), 0u);
}

TEST(SwitchModel, QueryProbeIsStampedButNotRegistered) {
  SwitchModel sw(cfg4());
  auto reg = control_frame(route({3}), probe(1, 640, {100}));
  sw.process(reg, 0, kMs, 0);
  Message q = probe(2, 128, {50});
  q.flags = wire::kMsgQuery;
  auto f = control_frame(route({3}), q);
  sw.process(f, 0, kMs, 0);
  EXPECT_EQ(parse(f).m.hop[0], (HopRecord{100, 640, 0, 0, 9, wire::kHopStamped, 0}));
  EXPECT_EQ(sw.link(3).table().occupancy(), 1u);
  EXPECT_EQ(sw.link(3).counters().queries, 1u);
}

TEST(SwitchModel, AgingRemovesSilentPairExactlyAndKeepsActivePair) {
  SwitchModel sw(cfg4());
  auto send = [&](uint32_t pair, uint32_t phi, uint32_t w, Nanos now) {
    sw.tick(now);
    auto f = control_frame(route({3}), probe(pair, phi, {w}));
    sw.process(f, 0, now, 0);
  };
  send(1, 640, 100, 1 * kSec);   // epoch 0; silent afterwards
  send(2, 64, 30, 1 * kSec);     // epoch 0
  send(2, 64, 35, 12 * kSec);    // epoch 1
  EXPECT_EQ(sw.epoch(), 1u);
  EXPECT_EQ(sw.tick(15 * kSec).removed, 0u);  // same epoch: no sweep
  const AgeResult r = sw.tick(20 * kSec);     // epoch 2: pair 1 silent all of epoch 1
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.phi, 640u);
  EXPECT_EQ(r.w, 100u);
  EXPECT_EQ(sw.link(3).phi_sum(), 64u);
  EXPECT_EQ(sw.link(3).w_sum(), 35u);
  EXPECT_EQ(sw.tick(30 * kSec).removed, 1u);  // pair 2 silent during epoch 2
  EXPECT_EQ(sw.link(3).phi_sum(), 0u);
  EXPECT_EQ(sw.link(3).w_sum(), 0u);
}

TEST(SwitchModel, IncrementalAgeStepMatchesFullSweep) {
  SwitchConfig c = cfg4();
  c.slots = {16, 4, 24};
  SwitchModel sw(c);
  for (uint32_t i = 0; i < 30; ++i) {
    auto f = control_frame(route({3}), probe(i, 64, {i + 1}));
    sw.process(f, 0, kMs, 0);
  }
  sw.set_epoch(2);
  size_t removed = 0;
  for (size_t b = 0; b < 16; b += 4) removed += sw.age_step(3, b, 4).removed;
  EXPECT_EQ(removed, sw.link(3).counters().pairs_inserted);
  EXPECT_EQ(sw.link(3).phi_sum(), 0u);
  EXPECT_EQ(sw.link(3).w_sum(), 0u);
}

TEST(SwitchModel, CollidingPairsAndUncountedFlag) {
  SwitchConfig c = cfg4();
  c.slots = {1, 1, 24};  // one slot per bank
  SwitchModel sw(c);
  HopRecord last;
  for (uint32_t pair = 1; pair <= 3; ++pair) {
    auto f = control_frame(route({3}), probe(pair, 64 * pair, {10 * pair}));
    sw.process(f, 0, kMs, 0);
    last = parse(f).m.hop[0];
  }
  EXPECT_EQ(last, (HopRecord{30, 192, 0, 0, 9, wire::kHopStamped | wire::kHopUncounted, 0}));
  EXPECT_EQ(sw.link(3).counters().pairs_uncounted, 1u);
}

TEST(SwitchModel, WlSaturatesWhenSumsExceed32Bits) {
  SwitchModel sw(cfg4());
  auto a = control_frame(route({3}), probe(1, 0xF0000000u, {0xF0000000u}));
  auto b = control_frame(route({3}), probe(2, 0x20000000u, {0x20000000u}));
  sw.process(a, 0, kMs, 0);
  sw.process(b, 0, kMs, 0);
  EXPECT_EQ(parse(b).m.hop[0].w, 0xFFFFFFFFu);
  EXPECT_EQ(parse(b).m.hop[0].phi, 0xFFFFFFFFu);
  EXPECT_EQ(sw.link(3).w_sum(), 0x110000000ull);
}

TEST(SwitchModel, FifteenSwitchChainFillsEveryRecord) {
  std::vector<SwitchModel> chain;
  for (uint8_t i = 0; i < 15; ++i) {
    SwitchConfig c;
    c.n_ports = 8;
    c.cap_codes = {9, static_cast<uint8_t>(3 + i % 9)};
    chain.emplace_back(c);
  }
  Message m;
  m.pair_id = 7;
  m.phi = 64;
  m.n_hop = 15;
  for (uint8_t i = 0; i < 15; ++i) m.hop[i].w = 100u + i;
  auto f = control_frame(route({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}), m);
  for (SwitchModel& sw : chain) ASSERT_TRUE(sw.process(f, 0, kMs, 64 * 3).forward);
  const Parsed p = parse(f);
  EXPECT_EQ(p.m.hop_index, 15);
  EXPECT_EQ(p.v.route.next, 15);
  for (uint8_t i = 0; i < 15; ++i) {
    EXPECT_EQ(p.m.hop[i], (HopRecord{100u + i, 64, 0, 3, static_cast<uint8_t>(3 + i % 9), wire::kHopStamped, 0}));
    EXPECT_EQ(chain[i].link(1).w_sum(), 100u + i);
  }
  // One more switch: the route is exhausted -> dropped and counted.
  SwitchModel extra(cfg4());
  EXPECT_EQ(extra.process(f, 0, kMs, 0), Decision::drop(DropReason::route_exhausted));
  EXPECT_EQ(extra.counters().drops_of(DropReason::route_exhausted), 1u);
}

TEST(SwitchModel, ProbeWithAllRecordsUsedIsForwardedUnstamped) {
  SwitchModel sw(cfg4());
  Message m = probe(4, 64, {5});
  m.hop_index = 1;  // == n_hop
  m.hop[0] = {1, 2, 3, 4, 5, wire::kHopStamped, 6};
  auto f = control_frame(route({2}), m);
  ASSERT_TRUE(sw.process(f, 0, kMs, 0).forward);
  EXPECT_EQ(parse(f).m, m);
  EXPECT_EQ(sw.link(2).counters().hops_exhausted, 1u);
  EXPECT_EQ(sw.link(2).table().occupancy(), 0u);
}

TEST(SwitchModel, MalformedFramesAreDroppedAndCountedByReason) {
  SwitchModel sw(cfg4());
  const auto good = control_frame(route({2}), probe(1, 64, {5}));
  const size_t msg_off = wire::kOuterBytes + wire::kShimBytes + route({2}).wire_bytes();

  auto bad_type = good;
  bad_type[msg_off] = static_cast<uint8_t>((9 << 4) | 1);
  EXPECT_EQ(sw.process(bad_type, 0, kMs, 0), Decision::drop(DropReason::malformed));
  EXPECT_EQ(sw.counters().malformed_of(WireError::bad_type), 1u);

  auto bad_index = good;
  bad_index[msg_off + 2] = 2;  // hop_index > n_hop
  EXPECT_FALSE(sw.process(bad_index, 0, kMs, 0).forward);
  EXPECT_EQ(sw.counters().malformed_of(WireError::bad_hop_index), 1u);

  auto bad_shim = good;
  bad_shim[wire::kOuterBytes] = 0x21;  // shim version 2
  EXPECT_FALSE(sw.process(bad_shim, 0, kMs, 0).forward);
  EXPECT_EQ(sw.counters().malformed_of(WireError::bad_version), 1u);

  // A control message cut short (IP/UDP lengths consistent with the cut).
  Message shortm = probe(1, 64, {5});
  std::vector<uint8_t> enc(shortm.wire_bytes());
  wire::encode_message(shortm, enc);
  enc.resize(enc.size() - 8);
  auto cut = ufab_frame(outer(), {wire::kNextControl, 77, 1}, route({2}), enc);
  EXPECT_FALSE(sw.process(cut, 0, kMs, 0).forward);
  EXPECT_EQ(sw.counters().malformed_of(WireError::truncated), 1u);

  auto bad_label = control_frame(route({9}), probe(1, 64, {5}));
  EXPECT_EQ(sw.process(bad_label, 0, kMs, 0), Decision::drop(DropReason::bad_port));

  EXPECT_EQ(sw.counters().drops_of(DropReason::malformed), 4u);
  EXPECT_EQ(sw.link(2).table().occupancy(), 0u);
  EXPECT_EQ(sw.link(2).counters().tx_packets, 0u);
}

TEST(SwitchModel, NonUfabTrafficIsForwardedByteIdenticalWithEcmp) {
  SwitchModel sw(cfg4());
  sw.l3().add_host_route(0x0a000063, {1, 3});
  std::set<uint16_t> used;
  for (uint16_t sport = 1000; sport < 1032; ++sport) {
    auto f = l3_frame(0x0a000063, sport, 120);
    const auto orig = f;
    const Decision d = sw.process(f, 0, kMs, 0);
    ASSERT_TRUE(d.forward);
    EXPECT_EQ(f, orig);
    const FiveTuple t{kSrcIp, 0x0a000063, 17, sport, 53};
    EXPECT_EQ(d.port, (ecmp_hash(t) % 2 == 0) ? 1 : 3);
    used.insert(d.port);
  }
  EXPECT_EQ(used, (std::set<uint16_t>{1, 3}));
  EXPECT_EQ(sw.counters().l3_forwarded, 32u);
  // ECMP hash by hand: CRC-32 of 0a000001 0a000063 11 03e8 0035.
  const uint8_t b[13] = {0x0a, 0, 0, 1, 0x0a, 0, 0, 0x63, 17, 0x03, 0xe8, 0x00, 0x35};
  EXPECT_EQ(ecmp_hash({kSrcIp, 0x0a000063, 17, 1000, 53}), crc32<kCrc32Ieee>(b));

  auto unknown = l3_frame(0x0a0000ff, 1);
  EXPECT_EQ(sw.process(unknown, 0, kMs, 0), Decision::drop(DropReason::no_route));
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(sw.process(arp, 0, kMs, 0), Decision::drop(DropReason::no_route));
  EXPECT_EQ(sw.counters().drops_of(DropReason::no_route), 2u);
}

TEST(SwitchModel, DataToDownPortIsDropped) {
  SwitchModel sw(cfg4());
  const uint8_t inner[20] = {};
  auto data = ufab_frame(outer(), {wire::kNextData, 77, 1}, route({2}), inner);
  sw.set_port_up(2, false);
  EXPECT_EQ(sw.process(data, 0, kMs, 0), Decision::drop(DropReason::port_down));
  sw.set_port_up(2, true);
  const auto before = data;
  ASSERT_TRUE(sw.process(data, 0, kMs, 0).forward);
  // Only the route's next-label byte changed.
  size_t diffs = 0;
  for (size_t i = 0; i < data.size(); ++i) diffs += data[i] != before[i];
  EXPECT_EQ(diffs, 1u);
  EXPECT_EQ(data[wire::kOuterBytes + wire::kShimBytes + 1], 1);
}

TEST(SwitchModel, ProbeToDownPortBecomesFailureWithReversedRoute) {
  SwitchModel sw(SwitchConfig{});
  Message m = probe(6, 64, {10, 20, 30, 40});
  m.hop_index = 2;
  m.hop[0] = {1, 1, 1, 1, 9, wire::kHopStamped, 7};  // switch 0 received the probe on port 7
  m.hop[1] = {2, 2, 2, 2, 9, wire::kHopStamped, 4};  // switch 1 on port 4
  auto f = control_frame(route({11, 12, 3, 13}, 2), m);
  sw.set_port_up(3, false);
  const Decision d = sw.process(f, 5, kMs, 0);
  ASSERT_EQ(d, Decision::to(5));
  EXPECT_EQ(sw.counters().failures_generated, 1u);
  const Parsed p = parse(f);
  Message want = m;
  want.type = MsgType::failure;
  want.hop[2] = {0, 0, 0, 0, 0, wire::kHopStamped, 5};
  EXPECT_EQ(p.m, want);
  EXPECT_EQ(p.v.route.n_labels, 3);
  EXPECT_EQ(p.v.route.next, 1);
  EXPECT_EQ(p.v.route.label[0], 5);
  EXPECT_EQ(p.v.route.label[1], 4);
  EXPECT_EQ(p.v.route.label[2], 7);
  EXPECT_EQ(p.v.outer.src_ip, kDstIp);
  EXPECT_EQ(p.v.outer.dst_ip, kSrcIp);
  EXPECT_EQ(p.v.outer.dst_port, wire::kUdpPort);
  EXPECT_EQ(p.v.shim.vni, 77u);
  EXPECT_EQ(sw.link(3).table().occupancy(), 0u);
  EXPECT_EQ(sw.link(5).counters().tx_packets, 1u);
}

TEST(SwitchModel, FailureTravelsBackThroughTheChainToTheSender) {
  std::vector<SwitchModel> s(3, SwitchModel(SwitchConfig{}));
  // S0: in 0 -> out 1; S1: in 2 -> out 3; S2: in 4 -> out 5 (down).
  s[2].set_port_up(5, false);
  auto f = control_frame(route({1, 3, 5}), probe(8, 64, {1, 2, 3}));
  ASSERT_EQ(s[0].process(f, 0, kMs, 0), Decision::to(1));
  ASSERT_EQ(s[1].process(f, 2, kMs, 0), Decision::to(3));
  ASSERT_EQ(s[2].process(f, 4, kMs, 0), Decision::to(4));  // failure back out the ingress port
  ASSERT_EQ(s[1].process(f, 3, kMs, 0), Decision::to(2));
  ASSERT_EQ(s[0].process(f, 1, kMs, 0), Decision::to(0));  // to the sender's host
  const Parsed p = parse(f);
  EXPECT_EQ(p.m.type, MsgType::failure);
  EXPECT_EQ(p.m.hop_index, 2);
  EXPECT_EQ(p.m.hop[2].cap_code, 0);
  EXPECT_EQ(p.v.route.next, p.v.route.n_labels);
  // The upstream switches registered the pair on the links before the failure.
  EXPECT_EQ(s[0].link(1).phi_sum(), 64u);
  EXPECT_EQ(s[1].link(3).w_sum(), 2u);
}

TEST(SwitchModel, SnapshotRestoreReproducesState) {
  SwitchModel a(cfg4());
  auto f = control_frame(route({3}), probe(1, 640, {100}));
  a.process(f, 0, kMs, 0);
  a.set_port_up(1, false);
  SwitchModel b(cfg4());
  EXPECT_NE(a.snapshot(), b.snapshot());
  b.restore(a.snapshot());
  EXPECT_EQ(a.snapshot(), b.snapshot());
  // Same packet into both -> same bytes out and same state.
  auto fa = control_frame(route({3}), probe(2, 64, {7}));
  auto fb = fa;
  EXPECT_EQ(a.process(fa, 0, 2 * kMs, 640), b.process(fb, 0, 2 * kMs, 640));
  EXPECT_EQ(fa, fb);
  EXPECT_EQ(a.snapshot(), b.snapshot());
}

TEST(SwitchModel, TxRateUsesFixedWindowsAndZeroAfterIdle) {
  SwitchModel sw(cfg4());  // tx window 32 µs
  EXPECT_EQ(sw.link(0).tx().interval(), 32 * kUs);
  const Nanos t0 = 10 * kMs;
  auto pkt = [&](Nanos t, size_t len) {
    auto f = l3_frame(kDstIp, 1, len);
    sw.egress(f, 0, 1, t, 0);
  };
  pkt(t0, 1000);                 // idle before: rate 0, window starts at t0
  pkt(t0 + 10 * kUs, 3000);
  EXPECT_EQ(sw.link(0).tx_wire(), 0u);
  pkt(t0 + 33 * kUs, 500);       // closes [t0, t0+32): 4000 B -> 1000 Mb/s
  EXPECT_EQ(sw.link(0).tx_wire(), 1000u);
  EXPECT_EQ(sw.link(0).tx().state().win_start, t0 + 32 * kUs);
  pkt(t0 + 64 * kUs, 100);       // closes [t0+32, t0+64): 500 B -> 125
  EXPECT_EQ(sw.link(0).tx_wire(), 125u);
  pkt(t0 + 200 * kUs, 100);      // a whole idle window: 0
  EXPECT_EQ(sw.link(0).tx_wire(), 0u);
}

// Random and mutated frames (fixed seeds): probes, queries, finishes,
// responses, data and L3 frames over one- to three-label routes, as sent
// and mutated (tests/mutate_frame.hpp: bit flips, random bytes,
// truncation, random tails, extreme 16-bit fields). Every frame is
// forwarded or dropped for one reason, a forwarded frame still parses as
// what it was (a uFAB frame stays one), Phi_l and W_l stay the exact sums
// over each link's live slots (restore() checks them), and aging periods of
// silence leave every link's sums at 0: garbage never leaves demand behind
// on a link.
TEST(SwitchModel, RandomAndMutatedFramesKeepTheSumsExact) {
  for (const uint64_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937_64 rng(seed);
    const auto below = [&rng](uint64_t n) { return rng() % n; };
    SwitchModel sw(cfg4());
    sw.l3().add_host_route(kDstIp, {1, 3});
    uint64_t frames = 0, forwarded_ufab = 0, broken_out = 0;
    Nanos now = kMs;
    for (int i = 0; i < 20000; ++i) {
      wire::SourceRoute r;
      r.n_labels = static_cast<uint8_t>(1 + below(3));
      for (size_t k = 0; k < r.n_labels; ++k) r.label[k] = static_cast<uint16_t>(below(5));  // port 4: none
      std::vector<uint8_t> f;
      const uint32_t pair = static_cast<uint32_t>(below(64));
      switch (below(6)) {
        case 0: case 1: {
          Message m = probe(pair, static_cast<uint32_t>(rng()), {static_cast<uint32_t>(rng()), 7, 9});
          m.flags = below(4) == 0 ? wire::kMsgQuery : 0;
          m.hop_index = static_cast<uint8_t>(below(4));
          f = control_frame(r, m);
          break;
        }
        case 2: f = control_frame(r, probe(pair, 0, {0, 0}, MsgType::finish)); break;
        case 3: f = control_frame(r, probe(pair, 5, {1}, MsgType::response)); break;
        case 4: {
          const std::vector<uint8_t> inner(below(200), 0x5a);
          f = ufab_frame(outer(), {wire::kNextData, 77, pair}, r, inner);
          break;
        }
        default: f = l3_frame(below(2) ? kDstIp : 0x0a0000ff, static_cast<uint16_t>(rng()), 60 + below(100));
      }
      if (below(10) < 7) f = ufab::testing::mutate_frame(std::move(f), rng);
      wire::FrameView v;
      const bool in_ufab = wire::parse_frame(f, v) == WireError::ok;
      now += static_cast<Nanos>(below(20 * kUs));
      const Decision d = sw.process(f, static_cast<uint16_t>(below(4)), now, below(1u << 20));
      ++frames;
      if (d.forward) {
        if (d.port >= 4) ++broken_out;
        if (in_ufab) {
          ++forwarded_ufab;
          if (wire::parse_frame(f, v) != WireError::ok) ++broken_out;
        }
      }
    }
    SwitchCounters c = sw.counters();
    uint64_t dropped = 0;
    for (const uint64_t n : c.drops) dropped += n;
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_EQ(c.ufab_forwarded + c.l3_forwarded + dropped, frames);
    EXPECT_GT(forwarded_ufab, 0u);
    EXPECT_GT(c.drops_of(DropReason::malformed), 0u);
    EXPECT_EQ(broken_out, 0u);
    uint64_t registered = 0;
    for (uint16_t p = 0; p < 4; ++p) registered += sw.link(p).table().occupancy();
    EXPECT_GT(registered, 0u);
    EXPECT_NO_THROW(sw.restore(sw.snapshot()));  // the sums are the sums over the live slots
    sw.tick(now + 10 * kSec);
    sw.tick(now + 20 * kSec);
    sw.tick(now + 30 * kSec);
    for (uint16_t p = 0; p < 4; ++p) {
      EXPECT_EQ(sw.link(p).table().occupancy(), 0u) << "port " << p;
      EXPECT_EQ(sw.link(p).phi_sum(), 0u) << "port " << p;
      EXPECT_EQ(sw.link(p).w_sum(), 0u) << "port " << p;
    }
  }
}

}  // namespace
}  // namespace ufab::swmodel
