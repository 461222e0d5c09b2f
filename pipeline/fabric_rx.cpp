// Fabric frames: a burst from a fabric port (polled here or dispatched by
// its RX lcore to the worker owning the pair, dispatch.cpp), each frame parsed once
// (wire::parse_frame) and then, by the shim's `next`:
//  - data: the encapsulation is stripped and the tenant's inner frame goes to
//    the port of the local VM that owns (VNI, inner destination IPv4 or
//    IPv6 address), with
//    its tenant's 802.1Q tag (or QinQ tags) inserted when the tenant has a
//    VLAN (vlan.hpp);
//  - probe or finish: answered in place (the same mbuf) as a response carrying
//    this VM's admitted token (Alg. 1 TokenAdmission, design-notes §4.6) or
//    as a finish-ack carrying the per-hop ACK bits (design-notes §4.3), and
//    sent back on the reply path configured for the sender's host;
//  - response, finish-ack, failure notice: handed to its VmPair, whose new
//    acks and window go straight into the scheduler.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstring>

#include "pipeline/encap.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/vlan.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"

namespace ufab::pipeline {

namespace {

// Drops are counted under the fabric port the frame came in on.
void drop(EdgeState& s, uint16_t port, rte_mbuf* m, Drop why) {
  s.stats.drop(port, why);
  rte_pktmbuf_free(m);
}

void deliver(EdgeState& s, uint16_t port, rte_mbuf* m, const wire::FrameView& v) {
  const uint8_t* inner = rte_pktmbuf_mtod(m, const uint8_t*) + v.payload_offset;
  if (unlikely(v.payload_len < 14 + 20)) return drop(s, port, m, Drop::malformed);
  // IPv4 and IPv6 inner frames have a destination VM: the local VM of
  // (VNI, destination address). ARP never crosses the fabric (vm_arp.cpp).
  uint32_t vm;
  if (likely(inner[12] == 0x08 && inner[13] == 0x00)) {
    VmKey key{v.shim.vni, 0};
    std::memcpy(&key.ip, inner + 30, 4);
    vm = s.local_vms.lookup(&key);
  } else if (inner[12] == 0x86 && inner[13] == 0xdd) {
    if (unlikely(v.payload_len < 14 + 40)) return drop(s, port, m, Drop::malformed);
    Vm6Key key{};
    key.vni = v.shim.vni;
    std::memcpy(key.ip.data(), inner + 14 + 24, 16);
    vm = s.ip6.local_vms.lookup(&key);
  } else {
    return drop(s, port, m, Drop::unknown_vm);
  }
  if (unlikely(vm == HashTable::kMiss)) return drop(s, port, m, Drop::unknown_vm);
  rte_pktmbuf_adj(m, static_cast<uint16_t>(v.payload_offset));
  if (const uint32_t extra = rte_pktmbuf_pkt_len(m) - static_cast<uint32_t>(v.payload_len); extra != 0)
    rte_pktmbuf_trim(m, static_cast<uint16_t>(extra));  // Ethernet padding after the UDP payload
  if (unlikely(!to_vm_port(s, vm, m))) return drop(s, port, m, Drop::no_headroom);
  ++s.stats.decapsulated;
}

// A slot to reuse once every slot is taken: one a finished pair left
// (requesting nothing) and silent for params.idle_finish_ms, found by a
// clock hand over at most kReuseScan slots per new pair (a flood of new
// keys costs a bounded scan each, then incoming_full). Remote VMs come and
// go (remote_vms.hpp, and other edges' reloads), and each pair they sent
// from would otherwise hold its slot for good. kNoSlot when none is found.
constexpr uint32_t kReuseScan = 64;
uint32_t reusable_incoming(EdgeState& s, Nanos now) {
  const auto n = static_cast<uint32_t>(s.incoming.size());
  for (uint32_t k = 0; k < kReuseScan && k < n; ++k) {
    const uint32_t i = s.incoming_hand;
    s.incoming_hand = i + 1 == n ? 0 : i + 1;
    if (s.in_share[i].requested.load(std::memory_order_relaxed) == 0 &&
        now - s.incoming[i].last_seen >= s.cfg.params.idle_finish_ns)
      return i;
  }
  return EdgeState::kNoSlot;
}

// The receiver-side pair of a probe or finish; created on the first probe.
Incoming* incoming_of(EdgeState& s, const wire::FrameView& v, const wire::Message& msg, Drop& why, Nanos now) {
  const IncomingKey key{v.outer.src_ip, v.shim.vni, msg.pair_id};
  if (const uint32_t i = s.incoming_tbl.lookup(&key); i != HashTable::kMiss) {
    s.incoming[i].last_seen = now;
    return &s.incoming[i];
  }
  why = Drop::unknown_vm;
  // The local VM with the destination id, of this tenant (a VM a reload
  // removed has none: local_vms.hpp).
  const int32_t vm = s.layout.local_vm_of(msg.pair_id & 0xffff);
  if (vm >= 0 && s.cfg.vms[static_cast<size_t>(vm)].vni == v.shim.vni) {
    why = Drop::incoming_full;
    Incoming in;
    in.src_ip = v.outer.src_ip;
    in.vni = v.shim.vni;
    in.wire_id = msg.pair_id;
    in.local_vm = static_cast<uint32_t>(vm);
    in.last_seen = now;
    if (s.incoming.size() == s.incoming.capacity()) {
      const uint32_t i = reusable_incoming(s, now);
      if (i == EdgeState::kNoSlot) return nullptr;
      const Incoming& old = s.incoming[i];
      // Its key, unless a removed local VM's slot let it go already (and a
      // newer slot may hold it now: EdgeState::remove_local_vm).
      const IncomingKey old_key{old.src_ip, old.vni, old.wire_id};
      if (s.incoming_tbl.lookup(&old_key) == i) s.incoming_tbl.remove(&old_key);
      if (!s.incoming_tbl.add(&key, i)) return nullptr;  // not reached: a key just left
      s.incoming[i] = in;
      IncomingShare& sh = s.in_share[i];  // requested is 0 already
      sh.admitted.store(kTokenNotYetAdmitted, std::memory_order_relaxed);
      sh.local_vm.store(in.local_vm, std::memory_order_relaxed);
      s.bump(s.incoming_gen);
      ++s.stats.incoming_reused;
      return &s.incoming[i];
    }
    const auto i = static_cast<uint32_t>(s.incoming.size());
    if (!s.incoming_tbl.add(&key, i)) return nullptr;
    s.in_share[i].local_vm.store(in.local_vm, std::memory_order_relaxed);
    s.incoming.push_back(in);  // within the capacity reserved at start-up
    // The control lcore reads slots below this count (token_share.hpp).
    s.incoming_published.store(static_cast<uint32_t>(s.incoming.size()), std::memory_order_release);
    return &s.incoming.back();
  }
  return nullptr;
}

void reflect(EdgeState& s, uint16_t port, rte_mbuf* m, const wire::FrameView& v, const wire::Message& msg, Nanos now) {
  const uint32_t host = s.host_by_ip.lookup(&v.outer.src_ip);
  if (unlikely(host == HashTable::kMiss)) return drop(s, port, m, Drop::unknown_pair);  // no way back
  Drop why = Drop::unknown_vm;
  Incoming* in = incoming_of(s, v, msg, why, now);
  uint32_t admitted = kWireUnbound;
  if (msg.type == wire::MsgType::probe) {
    if (unlikely(in == nullptr)) return drop(s, port, m, why);
    ++in->probes;
    IncomingShare& sh = s.in_share[in - s.incoming.data()];
    // A candidate query asks for nothing (§3.5: it does not register).
    const bool query = (msg.flags & wire::kMsgQuery) != 0;
    const double asked = msg.phi != 0 ? wire::wire_to_tokens(msg.phi) : 0.0;
    if (asked > 0 && !query) {
      const double before = sh.requested.load(std::memory_order_relaxed);
      if (before == 0) ++s.in_requesting[in->local_vm];
      if (before != asked) {
        sh.requested.store(asked, std::memory_order_relaxed);
        s.bump(s.incoming_gen);  // the next admission round looks again
      }
    }
    double a = sh.admitted.load(std::memory_order_relaxed);
    if (a == kTokenNotYetAdmitted)  // no round has included it yet (a query counts itself)
      a = asked > 0 ? provisional_admission(s.vm_tokens[in->local_vm].load(std::memory_order_relaxed),
                                            s.in_requesting[in->local_vm] + (query ? 1 : 0), asked)
                    : kTokenUnbound;
    if (a != kTokenUnbound) admitted = wire::tokens_to_wire(a);
  } else if (in != nullptr) {
    // finish: the pair left; it no longer competes for the VM's tokens
    IncomingShare& sh = s.in_share[in - s.incoming.data()];
    if (sh.requested.load(std::memory_order_relaxed) != 0) {
      --s.in_requesting[in->local_vm];
      sh.requested.store(0, std::memory_order_relaxed);
      s.bump(s.incoming_gen);
    }
  }
  const HostRoutes& h = s.hosts[host];
  const uint32_t vni = v.shim.vni;
  if (unlikely(!write_control(m, h.outer, h.reply_src_port, h.reply, vni, wire::reflect(msg, admitted))))
    return drop(s, port, m, Drop::no_headroom);
  ++s.stats.reflected;
  s.tx[h.reply_port].push(m);  // the reply path's uplink
}

void to_pair(EdgeState& s, uint16_t port, rte_mbuf* m, const wire::Message& msg, Nanos now) {
  const uint32_t p = s.wire_pairs.lookup(&msg.pair_id);
  if (unlikely(p == HashTable::kMiss)) return drop(s, port, m, Drop::unknown_pair);
  rte_pktmbuf_free(m);
  ++s.stats.absorbed;
  const VmPair::Result r = s.pairs[p].on_message(msg, now);
  if (r.acked_bytes != 0) s.sched.on_acked(p, r.acked_bytes);
  refresh_window(s, p, now);
  control_tx(s, p, now);
  s.mark_dirty(p);  // acks, phi_D
  rearm(s, p, now);
}

}  // namespace

void fabric_frames(EdgeState& s, uint16_t port, rte_mbuf* const* pkts, uint16_t n, Nanos now) {
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    if (unlikely(m->nb_segs != 1)) {
      drop(s, port, m, Drop::malformed);
      continue;
    }
    const std::span<const uint8_t> frame(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
    wire::FrameView v;
    if (const wire::WireError e = wire::parse_frame(frame, v, s.cfg.udp_port); unlikely(e != wire::WireError::ok)) {
      drop(s, port, m, e == wire::WireError::not_ufab ? Drop::not_ufab : Drop::malformed);
      continue;
    }
    if (v.shim.next == wire::kNextData) {
      deliver(s, port, m, v);
      continue;
    }
    wire::Message msg;
    if (unlikely(wire::decode_message(frame.subspan(v.payload_offset, v.payload_len), msg) != wire::WireError::ok)) {
      drop(s, port, m, Drop::malformed);
      continue;
    }
    if (msg.type == wire::MsgType::probe || msg.type == wire::MsgType::finish)
      reflect(s, port, m, v, msg, now);
    else
      to_pair(s, port, m, msg, now);
  }
}

}  // namespace ufab::pipeline
