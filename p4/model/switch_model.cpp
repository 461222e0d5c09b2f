// μFAB-C switch reference model (§3.2, §3.6, §4.2, App. G; design-notes
// §4.1–§4.5). Decisions are documented in p4/model/README.md.
#include "p4/model/switch_model.hpp"

#include <stdexcept>
#include <utility>

#include "probe/units.hpp"

namespace ufab::swmodel {

using wire::FrameView;
using wire::HopRecord;
using wire::Message;
using wire::MsgType;
using wire::WireError;

SwitchModel::SwitchModel(SwitchConfig cfg) : cfg_(std::move(cfg)) {
  if (cfg_.n_ports == 0 || cfg_.n_ports > 256) throw std::invalid_argument("switch: n_ports must be 1..256");
  if (cfg_.aging_period == 0) throw std::invalid_argument("switch: aging_period must be > 0");
  if (cfg_.tx_shift > 20) throw std::invalid_argument("switch: tx_shift must be <= 20");
  if (cfg_.cap_codes.size() > cfg_.n_ports) throw std::invalid_argument("switch: more cap_codes than ports");
  links_.reserve(cfg_.n_ports);
  for (uint16_t p = 0; p < cfg_.n_ports; ++p) {
    const uint8_t code = p < cfg_.cap_codes.size() ? cfg_.cap_codes[p] : cfg_.default_cap_code;
    links_.emplace_back(static_cast<uint8_t>(code & 0xf), cfg_.slots, cfg_.tx_shift);
  }
  up_.assign(cfg_.n_ports, true);
}

Decision SwitchModel::drop(DropReason r) {
  ++ctr_.drops[static_cast<size_t>(r)];
  return Decision::drop(r);
}

Decision SwitchModel::drop_malformed(WireError e) {
  ++ctr_.malformed[static_cast<size_t>(e) % kWireErrorSlots];
  return drop(DropReason::malformed);
}

Decision SwitchModel::forward_l3(std::span<const uint8_t> frame) {
  const auto t = parse_five_tuple(frame);
  if (!t) return drop(DropReason::no_route);
  const auto port = l3_.lookup(*t);
  if (!port) return drop(DropReason::no_route);
  if (*port >= cfg_.n_ports) return drop(DropReason::bad_port);
  if (!up_[*port]) return drop(DropReason::port_down);
  ++ctr_.l3_forwarded;
  return Decision::to(*port);
}

Decision SwitchModel::ingress(std::vector<uint8_t>& frame, uint16_t in_port, Nanos /*now*/) {
  if (in_port >= cfg_.n_ports) throw std::out_of_range("switch: in_port out of range");
  FrameView v;
  const WireError e = wire::parse_frame(frame, v, cfg_.udp_port);
  if (e == WireError::not_ufab) return forward_l3(frame);
  if (e != WireError::ok) return drop_malformed(e);
  const bool control = v.shim.next == wire::kNextControl;
  if (control) {
    const WireError me = wire::check_message(std::span<const uint8_t>(frame).subspan(v.payload_offset, v.payload_len));
    if (me != WireError::ok) return drop_malformed(me);
  }
  if (v.route.next >= v.route.n_labels) return drop(DropReason::route_exhausted);
  const uint16_t out = v.route.label[v.route.next];
  if (out >= cfg_.n_ports) return drop(DropReason::bad_port);
  if (!up_[out]) {
    if (control) {
      Message m;
      wire::decode_message(std::span<const uint8_t>(frame).subspan(v.payload_offset, v.payload_len), m);
      if (m.type == MsgType::probe) return make_failure(frame, v, in_port);
    }
    return drop(DropReason::port_down);
  }
  // Consume this hop's label (design-notes §4.5): the route is rewritten in
  // place with next + 1; its length does not change.
  wire::SourceRoute r = v.route;
  ++r.next;
  wire::encode_route(r, std::span<uint8_t>(frame).subspan(v.route_offset, r.wire_bytes()));
  ++ctr_.ufab_forwarded;
  return Decision::to(out);
}

// A probe whose next link is down becomes a failure notice to its sender
// (App. G "failure notification"; README "Failures"). Hop record hop_index is
// marked (stamped, cap_code 0 = no capacity) and hop_index is left pointing at
// it. The way back is this switch's ingress port, then the ingress ports the
// upstream switches recorded, newest first; this switch consumes label 0.
Decision SwitchModel::make_failure(std::vector<uint8_t>& frame, const FrameView& v, uint16_t in_port) {
  Message m;
  wire::decode_message(std::span<const uint8_t>(frame).subspan(v.payload_offset, v.payload_len), m);
  const size_t h = m.hop_index;
  if (h + 1 > wire::kMaxLabels) return drop(DropReason::failure_unroutable);
  if (!up_[in_port]) return drop(DropReason::port_down);
  if (h < m.n_hop) m.hop[h] = HopRecord{0, 0, 0, 0, 0, wire::kHopStamped, static_cast<uint8_t>(in_port)};
  m.type = MsgType::failure;

  wire::SourceRoute back;
  back.n_labels = static_cast<uint8_t>(h + 1);
  back.next = 1;
  back.label[0] = in_port;
  for (size_t i = 1; i <= h; ++i) back.label[i] = m.hop[h - i].port;

  wire::OuterAddrs o = v.outer;  // back to the sender: swap addresses, keep the uFAB UDP ports
  std::swap(o.src_mac, o.dst_mac);
  std::swap(o.src_ip, o.dst_ip);
  const size_t payload = wire::kShimBytes + back.wire_bytes() + m.wire_bytes();
  std::vector<uint8_t> out(wire::kOuterBytes + payload);
  std::span<uint8_t> s(out);
  size_t off = wire::encode_outer(o, payload, s);
  off += wire::encode_shim(v.shim, s.subspan(off));
  off += wire::encode_route(back, s.subspan(off));
  wire::encode_message(m, s.subspan(off));
  frame = std::move(out);
  ++ctr_.failures_generated;
  return Decision::to(in_port);
}

// App. G stamping: the record's w is the pair's w^l and the message's φ its
// token; register them (design-notes §4.1: the slot keeps the last values and
// the sums move by new − old), then overwrite the record with the link view.
// A kMsgQuery probe (§3.5 candidate path) is stamped without registering.
void SwitchModel::stamp_probe(LinkState& l, const PairKey& key, Message& m, uint16_t in_port, uint64_t queue_bytes) {
  const size_t h = m.hop_index;
  HopRecord& rec = m.hop[h];
  bool uncounted = false;
  if (m.flags & wire::kMsgQuery) {
    ++l.counters().queries;
  } else {
    uncounted = l.register_pair(key, m.phi, rec.w, epoch_).outcome == Upsert::uncounted;
  }
  rec.w = l.w_wire();
  rec.phi = l.phi_wire();
  rec.tx = l.tx_wire();
  rec.q = wire::queue_to_wire(queue_bytes);
  rec.cap_code = l.cap_code();
  rec.flags = static_cast<uint8_t>(rec.flags | wire::kHopStamped | (uncounted ? wire::kHopUncounted : 0));
  rec.port = static_cast<uint8_t>(in_port);
  ++m.hop_index;
  ++l.counters().probes_stamped;
}

// Finish (design-notes §4.3): subtract exactly what the pair's slot held and
// ack whether or not it was found ("this switch no longer holds the pair").
void SwitchModel::ack_finish(LinkState& l, const PairKey& key, Message& m, uint16_t in_port) {
  l.finish_pair(key);
  HopRecord& rec = m.hop[m.hop_index];
  rec.flags = static_cast<uint8_t>(rec.flags | wire::kHopAck);
  rec.port = static_cast<uint8_t>(in_port);
  ++m.hop_index;
}

Decision SwitchModel::egress(std::span<uint8_t> frame, uint16_t port, uint16_t in_port, Nanos now, uint64_t queue_bytes) {
  if (port >= cfg_.n_ports || in_port >= cfg_.n_ports) throw std::out_of_range("switch: port out of range");
  LinkState& l = links_[port];
  FrameView v;
  const WireError e = wire::parse_frame(frame, v, cfg_.udp_port);
  Message m;
  const bool control = e == WireError::ok && v.shim.next == wire::kNextControl;
  if (e != WireError::ok && e != WireError::not_ufab) return drop_malformed(e);
  const auto payload = control ? frame.subspan(v.payload_offset, v.payload_len) : std::span<uint8_t>{};
  if (control) {
    if (const WireError me = wire::decode_message(payload, m); me != WireError::ok) return drop_malformed(me);
  }
  // The packet leaves: it counts towards tx_l before a probe reads tx_l.
  l.count_tx(frame.size(), now);
  if (!control || (m.type != MsgType::probe && m.type != MsgType::finish)) return Decision::to(port);
  if (m.hop_index >= m.n_hop) {  // every record used: forward unstamped
    ++l.counters().hops_exhausted;
    if (m.type == MsgType::finish) l.finish_pair({v.outer.src_ip, v.shim.vni, m.pair_id});
    return Decision::to(port);
  }
  const PairKey key{v.outer.src_ip, v.shim.vni, m.pair_id};
  if (m.type == MsgType::probe) stamp_probe(l, key, m, in_port, queue_bytes);
  else ack_finish(l, key, m, in_port);
  wire::encode_message(m, payload);
  return Decision::to(port);
}

Decision SwitchModel::process(std::vector<uint8_t>& frame, uint16_t in_port, Nanos now, uint64_t queue_bytes) {
  const Decision d = ingress(frame, in_port, now);
  if (!d.forward) return d;
  return egress(frame, d.port, in_port, now, queue_bytes);
}

void SwitchModel::set_port_up(uint16_t port, bool up) { up_.at(port) = up; }

AgeResult SwitchModel::tick(Nanos now) {
  AgeResult total;
  const uint64_t e = now / cfg_.aging_period;
  if (e <= epoch_) return total;
  epoch_ = static_cast<uint32_t>(e);
  for (LinkState& l : links_) {
    const AgeResult r = l.age(epoch_);
    total.removed += r.removed;
    total.phi += r.phi;
    total.w += r.w;
  }
  return total;
}

AgeResult SwitchModel::age_step(uint16_t port, size_t first_bucket, size_t n_buckets) {
  return links_.at(port).age(epoch_, first_bucket, n_buckets);
}

SwitchState SwitchModel::snapshot() const {
  SwitchState s{epoch_, up_, {}, ctr_};
  s.links.reserve(links_.size());
  for (const LinkState& l : links_) s.links.push_back(l.snapshot());
  return s;
}

void SwitchModel::restore(const SwitchState& s) {
  if (s.links.size() != links_.size() || s.port_up.size() != up_.size())
    throw std::invalid_argument("switch: snapshot port count differs");
  for (size_t p = 0; p < links_.size(); ++p) links_[p].restore(s.links[p]);
  epoch_ = s.epoch;
  up_ = s.port_up;
  ctr_ = s.counters;
}

}  // namespace ufab::swmodel
