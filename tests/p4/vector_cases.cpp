// The conformance cases (tests/p4/README.md lists them with what each
// exercises). Each case sets up a state on a live model (not recorded), takes
// that snapshot as state_in, then records packets and ticks; the expected
// output is whatever run_case() produces from state_in, so generation and the
// test's replay share one definition.
#include <algorithm>
#include <initializer_list>
#include <stdexcept>

#include "p4/model/slot_table.hpp"
#include "probe/wire.hpp"
#include "tests/p4/vector_cases.hpp"

namespace ufab::p4vec {
namespace {

using swmodel::SwitchConfig;
using swmodel::SwitchModel;
using wire::Message;
using wire::MsgType;

constexpr uint32_t kSrc = 0x0a000001, kDst = 0x0a000002, kOtherSrc = 0x0a000003;  // 10.0.0.1 / .2 / .3
constexpr uint32_t kVni = 77;
constexpr Nanos kMsT = kMs;

// The vector switch: 8 ports (bmv2 ports 0..7), a 16-bucket x 4-way table per
// bank (small enough to list; the P4 programs take the geometry at compile time).
SwitchConfig vector_config() {
  SwitchConfig c;
  c.n_ports = 8;
  c.cap_codes = {9, 9, 5, 9, 9, 6, 9, 11};
  c.slots = {16, 4, 24};
  return c;
}

wire::OuterAddrs outer(uint32_t src = kSrc, uint32_t dst = kDst) {
  wire::OuterAddrs o;
  o.src_mac = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(src)};
  o.dst_mac = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(dst)};
  o.src_ip = src;
  o.dst_ip = dst;
  o.src_port = 49152;
  return o;
}

wire::SourceRoute route(std::initializer_list<uint16_t> labels, uint8_t next = 0) {
  wire::SourceRoute r;
  for (uint16_t l : labels) r.label[r.n_labels++] = l;
  r.next = next;
  return r;
}

std::vector<uint8_t> ufab_frame(const wire::SourceRoute& r, uint8_t next, uint32_t pair_id,
                                const std::vector<uint8_t>& payload, uint32_t src = kSrc) {
  const size_t len = wire::kShimBytes + r.wire_bytes() + payload.size();
  std::vector<uint8_t> f(wire::kOuterBytes + len);
  std::span<uint8_t> b(f);
  size_t off = wire::encode_outer(outer(src), len, b);
  off += wire::encode_shim({next, kVni, pair_id}, b.subspan(off));
  off += wire::encode_route(r, b.subspan(off));
  std::copy(payload.begin(), payload.end(), f.begin() + static_cast<ptrdiff_t>(off));
  return f;
}

Message msg(MsgType type, uint32_t pair_id, uint32_t phi, std::initializer_list<uint32_t> w, uint8_t hop_index = 0,
            uint8_t flags = 0) {
  Message m;
  m.type = type;
  m.pair_id = pair_id;
  m.phi = phi;
  m.flags = flags;
  m.hop_index = hop_index;
  m.seq = 1000 + pair_id;
  m.timestamp_ns = 0x0102030405060708ull;
  m.bytes_sent = 1500ull * pair_id;
  for (uint32_t x : w) m.hop[m.n_hop++].w = x;
  return m;
}

std::vector<uint8_t> control(const wire::SourceRoute& r, const Message& m, uint32_t src = kSrc) {
  std::vector<uint8_t> b(m.wire_bytes());
  if (wire::encode_message(m, b) != b.size()) throw std::logic_error("vector: bad message");
  return ufab_frame(r, wire::kNextControl, m.pair_id, b, src);
}

std::vector<uint8_t> probe(uint16_t port, uint32_t pair, uint32_t phi, uint32_t w, uint32_t src = kSrc) {
  return control(route({port, 1}), msg(MsgType::probe, pair, phi, {w, 0}), src);
}

// A plain UDP or TCP frame of `len` bytes (not to the uFAB port).
std::vector<uint8_t> l3_frame(uint32_t dst, uint8_t proto, uint16_t sport, size_t len = 96) {
  std::vector<uint8_t> f(len, 0x5a);
  wire::OuterAddrs o = outer(kSrc, dst);
  o.src_port = sport;
  o.dst_port = 80;
  wire::encode_outer(o, len - wire::kOuterBytes, f);
  if (proto != 17) {  // re-label as TCP and fix the IPv4 checksum
    f[23] = proto;
    f[24] = f[25] = 0;
    uint32_t sum = 0;
    for (size_t i = 14; i < 34; i += 2) sum += static_cast<uint32_t>((f[i] << 8) | f[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    f[24] = static_cast<uint8_t>(~sum >> 8);
    f[25] = static_cast<uint8_t>(~sum);
  }
  return f;
}

class Builder {
 public:
  Builder(std::string name, std::string what, std::vector<Route> routes = {}) : sw_(vector_config()) {
    spec_.name = std::move(name);
    spec_.what = std::move(what);
    spec_.config = vector_config();
    spec_.routes = std::move(routes);
    for (const Route& r : spec_.routes) sw_.l3().add_host_route(r.dst_ip, r.ports);
  }
  // Setup (before state_in): runs on the live model, not recorded.
  Builder& setup(std::vector<uint8_t> f, uint16_t in_port, Nanos t) {
    if (!sw_.process(f, in_port, t, 0).forward) throw std::logic_error("vector setup packet dropped");
    return *this;
  }
  Builder& setup_tick(Nanos t) { return sw_.tick(t), *this; }
  Builder& setup_port(uint16_t p, bool up) { return sw_.set_port_up(p, up), *this; }
  // Recorded events.
  Builder& packet(std::vector<uint8_t> f, uint16_t in_port, Nanos t, uint64_t queue_bytes = 0) {
    Event e;
    e.time = t;
    e.in_port = in_port;
    e.queue_bytes = queue_bytes;
    spec_.events.push_back(e);
    in_.push_back({t, std::move(f)});
    return *this;
  }
  Builder& tick(Nanos t) {
    Event e;
    e.kind = Event::Kind::tick;
    e.time = t;
    spec_.events.push_back(e);
    return *this;
  }
  VectorFiles build() {
    const swmodel::SwitchState s_in = sw_.snapshot();
    RunResult r = run_case(spec_, s_in, in_);
    const auto& geo = spec_.config.slots;
    return {spec_.name,
            write_pcap(in_),
            write_pcap(r.out),
            to_text(state_to_json(s_in, geo)),
            to_text(state_to_json(r.state_out, geo)),
            to_text(case_to_json(spec_))};
  }
  const SwitchModel& model() const { return sw_; }

 private:
  SwitchModel sw_;
  CaseSpec spec_;
  std::vector<Packet> in_;
};

VectorFiles first_probe() {
  Builder b("first_probe", "first probe of a pair registers it (design-notes 4.1, App. G); a data frame ahead of it "
                           "is source-routed and counted in tx_l");
  b.packet(ufab_frame(route({2, 5}), wire::kNextData, 7, std::vector<uint8_t>(64, 0xdd)), 0, 1 * kMsT);
  b.packet(control(route({2, 5}), msg(MsgType::probe, 7, 128, {40, 41}, 0, wire::kMsgNewPair)), 0, 2 * kMsT, 1280);
  return b.build();
}

VectorFiles window_change() {
  Builder b("window_change", "a pair's window grows: W_l moves by new - old; a duplicate changes nothing (4.1)");
  b.setup(probe(3, 1, 64, 100), 0, 1 * kMsT).setup(probe(3, 2, 128, 50), 1, 2 * kMsT);
  b.packet(probe(3, 1, 64, 150), 0, 3 * kMsT).packet(probe(3, 1, 64, 150), 0, 4 * kMsT);
  b.packet(probe(3, 1, 64, 20), 0, 5 * kMsT);  // and shrinks (negative delta)
  return b.build();
}

VectorFiles token_change() {
  Builder b("token_change", "a pair's token changes up then down: Phi_l moves by new - old (design-notes 4.1)");
  b.setup(probe(3, 1, 64, 100), 0, 1 * kMsT).setup(probe(3, 2, 640, 10, kOtherSrc), 1, 2 * kMsT);
  b.packet(probe(3, 1, 192, 100), 0, 3 * kMsT).packet(probe(3, 1, 32, 100), 0, 4 * kMsT);
  return b.build();
}

VectorFiles finish_ack() {
  Builder b("finish_ack", "finish subtracts the pair and sets kHopAck; a retried finish is acked too (3.6, "
                          "design-notes 4.3)");
  b.setup(probe(4, 1, 64, 100), 0, 1 * kMsT).setup(probe(4, 2, 128, 60), 0, 2 * kMsT);
  b.packet(control(route({4, 1}), msg(MsgType::finish, 1, 64, {0, 0})), 0, 3 * kMsT);
  b.packet(control(route({4, 1}), msg(MsgType::finish, 1, 64, {0, 0}, 0, wire::kMsgRetry)), 0, 4 * kMsT);
  b.packet(probe(4, 2, 128, 60), 0, 5 * kMsT);
  return b.build();
}

VectorFiles aging() {
  Builder b("aging", "a pair silent for a whole aging period is removed at the next epoch (4.2)");
  b.setup(probe(1, 1, 64, 100), 0, 1 * kMsT);                   // pair 1 at epoch 0
  b.setup_tick(10 * kSec).setup(probe(1, 2, 128, 30), 0, 10 * kSec + kMsT);  // pair 2 at epoch 1
  b.tick(20 * kSec);                                            // epoch 2: pair 1 (epoch 0) ages out
  b.packet(probe(1, 2, 128, 30), 0, 20 * kSec + kMsT);          // pair 2 refreshed at epoch 2
  b.tick(30 * kSec);                                            // epoch 3: pair 2 (epoch 2) stays
  b.packet(probe(1, 2, 128, 30), 0, 30 * kSec + kMsT);
  return b.build();
}

VectorFiles bank_collision() {
  Builder b("bank_collision", "pairs colliding in one bank-0 bucket fill its 4 ways, the 5th spills to bank 1; "
                              "after a finish leaves a hole, the bank-1 pair is still matched, not re-inserted (4.2)");
  const swmodel::SlotTable t(vector_config().slots);
  auto key = [](uint32_t id) { return swmodel::PairKey{kSrc, kVni, id}; };
  const uint32_t bucket = t.bucket_of(key(1), 0);
  std::vector<uint32_t> ids{1};
  for (uint32_t id = 2; ids.size() < 6; ++id)
    if (t.bucket_of(key(id), 0) == bucket) ids.push_back(id);
  Nanos t0 = 1 * kMsT;
  for (size_t i = 0; i < 5; ++i) b.packet(probe(6, ids[i], 64 * static_cast<uint32_t>(i + 1), 10), 0, t0 += kMsT);
  b.packet(control(route({6, 1}), msg(MsgType::finish, ids[0], 64, {0, 0})), 0, t0 += kMsT);
  b.packet(probe(6, ids[4], 320, 99), 0, t0 += kMsT);   // matched in bank 1 despite the hole in bank 0
  b.packet(probe(6, ids[5], 384, 11), 0, t0 += kMsT);   // a new colliding pair takes the hole
  return b.build();
}

VectorFiles max_hops() {
  Builder b("max_hops", "nHop = 15: the last record is stamped; with every record used the probe is forwarded "
                        "unstamped (App. G, hops_exhausted)");
  wire::SourceRoute r;
  for (uint16_t i = 0; i < 15; ++i) r.label[r.n_labels++] = static_cast<uint16_t>(i % 8);
  r.label[14] = 7;
  r.next = 14;
  Message m = msg(MsgType::probe, 9, 64, {}, 14);
  m.n_hop = 15;
  for (size_t i = 0; i < 15; ++i) m.hop[i] = {static_cast<uint32_t>(10 + i), 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < 14; ++i) m.hop[i] = {static_cast<uint32_t>(500 + i), 64, 100, 2, 9, wire::kHopStamped,
                                              static_cast<uint8_t>(i)};
  b.packet(control(r, m), 3, 1 * kMsT);
  m.hop_index = 15;
  b.packet(control(r, m), 3, 2 * kMsT);
  return b.build();
}

VectorFiles malformed() {
  Builder b("malformed", "malformed uFAB frames are dropped and counted by WireError; exhausted routes and unknown "
                         "ports are dropped (p4/model README 8)");
  const auto good = control(route({2, 1}), msg(MsgType::probe, 1, 64, {10, 10}));
  constexpr size_t kShim = 42, kRoute = 50, kMsg = 50 + 2 + 4;
  auto patched = [&](size_t off, uint8_t v) {
    auto f = good;
    f[off] = v;
    return f;
  };
  Nanos t = 0;
  b.packet(patched(kShim, 0x21), 0, t += kMsT);          // shim version 2: bad_version
  b.packet(patched(kShim, 0x12), 0, t += kMsT);          // shim next 2: bad_next
  b.packet(patched(kRoute, 0), 0, t += kMsT);            // 0 labels: bad_label_count
  b.packet(patched(kRoute, 16), 0, t += kMsT);           // 16 labels: bad_label_count
  b.packet(patched(kRoute + 1, 3), 0, t += kMsT);        // next 3 > 2 labels: bad_label_index
  b.packet(patched(kMsg, 0x72), 0, t += kMsT);           // type 7: bad_type
  b.packet(patched(kMsg, 0x10), 0, t += kMsT);           // n_hop 0: bad_hop_count
  b.packet(patched(kMsg, 0x13), 0, t += kMsT);           // n_hop 3 with 2 records: truncated
  b.packet(patched(kMsg + 2, 3), 0, t += kMsT);          // hop_index 3 > n_hop 2: bad_hop_index
  b.packet(patched(kMsg + 3, 2), 0, t += kMsT);          // message version 2: bad_version
  b.packet(control(route({2, 1}, 2), msg(MsgType::probe, 1, 64, {10, 10})), 0, t += kMsT);  // route_exhausted
  b.packet(control(route({9, 1}), msg(MsgType::probe, 1, 64, {10, 10})), 0, t += kMsT);     // label 9: bad_port
  b.packet(good, 0, t += kMsT);                                                            // and a good one
  return b.build();
}

VectorFiles non_ufab() {
  const uint32_t h1 = 0x0a000901, h2 = 0x0a000902;  // 10.0.9.1, 10.0.9.2
  Builder b("non_ufab", "non-uFAB traffic is forwarded unchanged by /32 host routes with CRC-32 ECMP; unrouted "
                        "and non-IPv4 frames are dropped (p4/model README 8)",
            {{h1, {3, 4}}, {h2, {5}}});
  Nanos t = 0;
  for (uint16_t sport = 1000; sport < 1004; ++sport) b.packet(l3_frame(h1, 17, sport), 1, t += kMsT);
  b.packet(l3_frame(h2, 6, 2000, 120), 1, t += kMsT);   // TCP
  b.packet(l3_frame(0x0a000903, 17, 1000), 1, t += kMsT);  // no route
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  b.packet(arp, 1, t += kMsT);                             // not IPv4: no_route
  auto to_other_udp = l3_frame(h2, 17, 7341);              // UDP *source* port 7341 is not uFAB
  b.packet(to_other_udp, 1, t += kMsT);
  return b.build();
}

VectorFiles query_probe() {
  Builder b("query_probe", "a kMsgQuery candidate-path probe is stamped with the link's view but not registered "
                           "(3.5)");
  b.setup(probe(5, 1, 64, 100), 0, 1 * kMsT);
  b.packet(control(route({5, 1}), msg(MsgType::probe, 2, 640, {77, 0}, 0, wire::kMsgQuery)), 0, 2 * kMsT, 640);
  b.packet(control(route({5, 1}), msg(MsgType::response, 2, 640, {77, 0})), 0, 3 * kMsT);  // passes unstamped
  return b.build();
}

VectorFiles failure_notice() {
  Builder b("failure_notice", "a probe to a down port becomes a failure notice routed back over the recorded "
                              "ingress ports; data and finish to the down port are dropped (App. G)");
  b.setup_port(5, false);
  Message m = msg(MsgType::probe, 3, 64, {10, 10, 10, 10}, 2);
  m.hop[0] = {300, 64, 10, 0, 9, wire::kHopStamped, 6};
  m.hop[1] = {200, 128, 20, 1, 9, wire::kHopStamped, 2};
  b.packet(control(route({1, 3, 5, 0}, 2), m), 4, 1 * kMsT);
  b.packet(ufab_frame(route({5, 0}), wire::kNextData, 3, std::vector<uint8_t>(40, 0xdd)), 4, 2 * kMsT);
  b.packet(control(route({5, 0}), msg(MsgType::finish, 3, 64, {0, 0})), 4, 3 * kMsT);
  return b.build();
}

VectorFiles tx_rate() {
  Builder b("tx_rate", "tx_l over back-to-back 32 us windows (8 us << 2): bytes >> 2 Mb/s, an idle window gives 0 "
                       "(3.6, p4/model README 7)");
  const auto data = [] { return ufab_frame(route({2, 1}), wire::kNextData, 1, std::vector<uint8_t>(938, 0)); };
  Nanos t = 1 * kMsT;  // window opens at the first packet (idle since 0)
  for (int i = 0; i < 8; ++i) b.packet(data(), 0, t + static_cast<Nanos>(i) * 4 * kUs);  // 8 x 1000 B in window 1
  b.packet(probe(2, 1, 64, 10), 0, t + 33 * kUs);   // closes window 1: 8000 >> 2 = 2000 Mb/s
  b.packet(probe(2, 1, 64, 10), 0, t + 140 * kUs);  // a whole window idle: 0
  return b.build();
}

}  // namespace

std::vector<VectorFiles> make_all_vectors() {
  return {first_probe(), window_change(), token_change(), finish_ack(), aging(), bank_collision(),
          max_hops(),    malformed(),     non_ufab(),     query_probe(), failure_notice(), tx_rate()};
}

}  // namespace ufab::p4vec
