// VM-side frames: a burst from a VM's port (polled here or dispatched by the
// port's RX lcore, dispatch.cpp) is classified into VM-pairs by
// (port, source IP, destination IP) through the worker's exact-match cache
// and, for the keys it does not hold, one bulk rte_hash lookup
// (classify_cache.hpp; the port and source IP name the local VM and so its
// tenant) and enqueued into the hierarchical scheduler, each frame into one
// of its pair's flows by 5-tuple hash (§4.1: RR over the pair's flows avoids
// head-of-line blocking).
// uFAB frames from a VM are spoofing and never reach the fabric. A frame the
// scheduler lets go on arrival (nothing eligible, the pair's queue empty and
// its window open: HierScheduler::take_bypass, params.sched_bypass) goes to
// the fabric at once (send_data), as the next dequeue would have sent it;
// it needs no flow, so only queued frames are hashed (docs/design.md §16).
// An 802.1Q-tagged frame names its tenant by the VLAN id (vlan.hpp): the
// key is then (port, VLAN, source IP, destination IP), the tag is stripped
// here (the fabric carries the VNI) and a VLAN id no tenant has is dropped
// as unknown_vlan. A QinQ frame (S-tag, then C-tag) likewise by (port, S, C,
// source IP, destination IP); an S-tag without a C-tag, or an (S, C) no
// tenant has, is unknown_vlan too. An ARP frame goes to vm_arp (proxy ARP:
// a request for a remote VM of the tenant is answered in its name), an
// IPv6 frame to vm_ipv6 (gathered, then classified and queued together by
// vm_ipv6_burst; neighbour discovery proxy).
// A frame for another local VM of the tenant has no pair and goes to that
// VM's port (vm_local.cpp).
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "pipeline/arp.hpp"
#include "pipeline/flow_hash.hpp"
#include "pipeline/local_scope.hpp"
#include "pipeline/nd.hpp"
#include "pipeline/not_ufab.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/vlan.hpp"
#include "pipeline/vm_burst.hpp"

namespace ufab::pipeline {

namespace {

constexpr size_t kEth = 14;

// What classification gives an IPv4 key no pair has (vm_burst::classify):
// kLocalVm | the local VM it is for (stages.hpp), cached like a pair, or
// kMiss.
[[gnu::noinline, gnu::cold]] uint32_t unpaired(const EdgeState& s, const void* key) {
  const uint32_t to = local_peer_of(s, *static_cast<const ClassifyKey*>(key));
  return to == HashTable::kMiss ? HashTable::kMiss : kLocalVm | to;
}

// An IPv4 frame no pair takes (c: what classify gave, >= kLocalVm): to the
// local VM c names, else dropped as local_scope for one meant for the VM's
// own link (local_scope.hpp) or unknown_pair.
[[gnu::noinline, gnu::cold]] void local_or_drop(EdgeState& s, uint16_t port, rte_mbuf* m, uint32_t c) {
  if (c != HashTable::kMiss) return deliver_local(s, port, m, c & ~kLocalVm);
  s.stats.drop(port, ipv4_local_scope(rte_pktmbuf_mtod(m, const uint8_t*)) ? Drop::local_scope : Drop::unknown_pair);
  rte_pktmbuf_free(m);
}

// A VM frame that is not IPv4 (its tags stripped): IPv6 (gathered for
// vm_ipv6_burst, or a neighbour solicitation answered) or ARP (answered),
// else dropped as not_ipv4. Out of line and cold: vm_frames stays the size
// that lets GCC inline what its per-frame loop calls (with these branches
// inside it, EdgeState::on_enqueued went out of line: +27 instructions a
// frame at 8K pairs, callgrind).
[[gnu::noinline, gnu::cold]] void not_ipv4(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags) {
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len >= kEth && nd::is_ipv6(d)) return vm_ipv6(s, port, m, tags);
  if (len >= kEth && arp::is_arp(d)) return vm_arp(s, port, m, tags);
  s.stats.drop(port, Drop::not_ipv4);
  rte_pktmbuf_free(m);
}

static_assert(ClassifyCache::kMiss == HashTable::kMiss);
static_assert(sizeof(ClassifyKey) == ClassifyCache::kKeyBytes);

}  // namespace

void vm_frames(EdgeState& s, uint16_t port, rte_mbuf* const* pkts, uint16_t n, Nanos now) {
  ClassifyKey keys[TxBuffer::kCap];
  const void* kp[TxBuffer::kCap];
  uint32_t sig[TxBuffer::kCap];  // ClassifyKey::hash of keys[i]
  rte_mbuf* cand[TxBuffer::kCap];
  uint32_t pair[TxBuffer::kCap], lens[TxBuffer::kCap];
  uint32_t k = 0;
  // One FrameView for the burst: parse_frame fills it only for a uFAB frame
  // (dropped here); a fresh one per frame was a 96-byte clear per frame.
  wire::FrameView v;
  // The VM MTU (edge.fabric_mtu less the encapsulation): longer frames take
  // the slow branch, and vm_too_big answers them.
  const uint32_t max_frame = s.cfg.max_vm_frame();
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    uint32_t len = rte_pktmbuf_data_len(m);
    if (unlikely(m->nb_segs != 1)) {
      vm_too_big(s, port, m, now);  // too_big above the VM MTU, else malformed
      continue;
    }
    const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
    VlanTags tags;
    if (unlikely(len > max_frame || !plain_not_ufab(d, len, s.cfg.udp_port))) {
      // Tags, uFAB, IPv4 for all but the frames VMs send most (not_ufab.hpp).
      tags = read_tags(d, len);
      if (tags.n != 0 || unlikely(tags.bare_stag)) {
        // An S-tag must carry a C-tag (bare_stag: unknown).
        const bool known = tags.n == 1 ? s.cfg.vlan_tenant(tags.vlan) >= 0
                                       : tags.n == 2 && s.cfg.qinq_tenant(tags.svlan, tags.vlan) >= 0;
        if (unlikely(!known)) {
          s.stats.drop(port, Drop::unknown_vlan);
          rte_pktmbuf_free(m);
          continue;
        }
      }
      if (unlikely(len - tags.n * kVlanTagBytes > max_frame)) {
        vm_too_big(s, port, m, now);
        continue;
      }
      if (tags.n != 0) {
        strip_vlan(m, tags.n);  // from here on the frame is as an untagged VM sends it
        d = rte_pktmbuf_mtod(m, const uint8_t*);
        len -= tags.n * kVlanTagBytes;
      }
      const wire::WireError e = surely_not_ufab(d, len, s.cfg.udp_port)
                                    ? wire::WireError::not_ufab  // without the full parse
                                    : wire::parse_frame(std::span<const uint8_t>(d, len), v, s.cfg.udp_port);
      if (unlikely(e != wire::WireError::not_ufab)) {
        // A well-formed uFAB frame (probe, response, tunnel data) from a VM is
        // spoofing; anything else parse_frame refuses is a broken frame.
        s.stats.drop(port, e == wire::WireError::ok ? Drop::spoofed : Drop::malformed);
        rte_pktmbuf_free(m);
        continue;
      }
      if (unlikely(len < kEth + 20 || d[12] != 0x08 || d[13] != 0x00)) {
        not_ipv4(s, port, m, tags);
        continue;
      }
    }
    uint32_t src, dst;  // network order, as the tables hold them
    std::memcpy(&src, d + 26, 4);
    std::memcpy(&dst, d + 30, 4);
    sig[k] = ClassifyKey::hash_of(port, tags.vlan, src, dst, tags.svlan);  // from the values, not keys[k]
    keys[k] = ClassifyKey{port, tags.vlan, src, dst, tags.svlan};
    kp[k] = &keys[k];
    s.classify_cache.prefetch(sig[k]);
    cand[k++] = m;
  }
  // The burst's IPv6 data frames, gathered by vm_ipv6 (through not_ipv4):
  // classified and sent or queued together, before the IPv4 ones (they are
  // other flows, so no flow's order changes).
  if (unlikely(s.burst6.n != 0)) vm_ipv6_burst(s, port, now);
  // Nothing between here and the scheduler changes it: decided once.
  const bool bypass = s.bypass_on() && s.sched.bypass_possible();
  const auto unpaired_of = [&s](const void* key) { return unpaired(s, key); };
  if (s.offload.marks(port)) {
    // rte_flow MARK (pipeline/flow_offload.hpp): the NIC named the worker
    // and the pair; frames without a valid mark for this worker are looked
    // up as usual.
    uint32_t nk = 0, slot[TxBuffer::kCap], found[TxBuffer::kCap];
    for (uint32_t i = 0; i < k; ++i) {
      const rte_mbuf* m = cand[i];
      const uint32_t mark = m->hash.fdir.hi;
      if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) != 0 && mark_worker(mark) == s.worker && mark_pair(mark) < s.pairs.size()) {
        pair[i] = mark_pair(mark);
        vm_burst::prefetch_pair(s, pair[i], bypass);
        ++s.stats.marked;
      } else {
        kp[nk] = &keys[i];
        sig[nk] = sig[i];
        slot[nk++] = i;
      }
    }
    vm_burst::classify(s, s.classify_cache, s.classify, kp, sig, nk, found, bypass, unpaired_of);
    for (uint32_t j = 0; j < nk; ++j) pair[slot[j]] = found[j];
  } else {
    vm_burst::classify(s, s.classify_cache, s.classify, kp, sig, k, pair, bypass, unpaired_of);
  }
  // The pair's flow of frame i, for a frame that is queued.
  const auto flow = [&](uint32_t i) {
    const rte_mbuf* m = cand[i];
    return flow_of4(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), keys[i].src_ip, keys[i].dst_ip,
                   s.cfg.flows_per_pair);
  };
  vm_burst::queue_or_send(s, port, cand, pair, lens, k, bypass, now, flow,
                          [&](rte_mbuf* m, uint32_t c) { local_or_drop(s, port, m, c); });
}

}  // namespace ufab::pipeline
