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
// IPv6 frame to vm_ipv6 (queued into its pair; neighbour discovery proxy).
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

namespace ufab::pipeline {

namespace {

constexpr size_t kEth = 14;

// A VM frame that is not IPv4 (its tags stripped): IPv6 (queued into its
// pair, or a neighbour solicitation answered) or ARP (answered), else
// dropped as not_ipv4. Out of line and cold: vm_frames stays the size
// that lets GCC inline what its per-frame loop calls (with these branches
// inside it, EdgeState::on_enqueued went out of line: +27 instructions a
// frame at 8K pairs, callgrind).
// What classify gives a key no pair has: kLocal | the local VM it is for
// (another local VM of the sender's tenant, vm_local.cpp), cached like a
// pair, or kMiss. Pair indices stay below kLocal.
constexpr uint32_t kLocal = 1u << 31;
static_assert(HashTable::kMiss >= kLocal);
[[gnu::noinline, gnu::cold]] uint32_t unpaired(const EdgeState& s, const void* key) {
  const uint32_t to = local_peer_of(s, *static_cast<const ClassifyKey*>(key));
  return to == HashTable::kMiss ? HashTable::kMiss : kLocal | to;
}

// An IPv4 frame no pair takes (c: what classify gave, >= kLocal): to the
// local VM c names, else dropped as local_scope for one meant for the VM's
// own link (local_scope.hpp) or unknown_pair.
[[gnu::noinline, gnu::cold]] void local_or_drop(EdgeState& s, uint16_t port, rte_mbuf* m, uint32_t c) {
  if (c != HashTable::kMiss) return deliver_local(s, port, m, c & ~kLocal);
  s.stats.drop(port, ipv4_local_scope(rte_pktmbuf_mtod(m, const uint8_t*)) ? Drop::local_scope : Drop::unknown_pair);
  rte_pktmbuf_free(m);
}

[[gnu::noinline, gnu::cold]] void not_ipv4(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags, Nanos now) {
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len >= kEth && nd::is_ipv6(d)) return vm_ipv6(s, port, m, tags, now);
  if (len >= kEth && arp::is_arp(d)) return vm_arp(s, port, m, tags);
  s.stats.drop(port, Drop::not_ipv4);
  rte_pktmbuf_free(m);
}

static_assert(ClassifyCache::kMiss == HashTable::kMiss);
static_assert(sizeof(ClassifyKey) == ClassifyCache::kKeyBytes);

// What the frames of pair p will read next (vm_frames): its VmPair's hot
// lines and PairMeta (EdgeState::prefetch_pair_lines) and, for a burst that
// may bypass the queues, the scheduler's record of it (take_bypass).
inline void prefetch_pair(const EdgeState& s, uint32_t p, bool bypass) {
  s.prefetch_pair_lines(p);
  if (bypass) s.sched.prefetch_pair(p);
}

// keys -> pairs (or kLocal | a local VM, or kMiss: unpaired) through the
// worker's exact-match cache, then the classification table for what the
// cache does not hold; what the table finds is cached (classify_cache.hpp),
// and so is a key for a local VM (found by unpaired). Each pair found is
// prefetched as soon as it is known (prefetch_pair), the cache's hits
// before the misses are looked up.
void classify(EdgeState& s, const void* const* kp, const uint32_t* sig, uint32_t n, uint32_t* out, bool bypass) {
  const void* miss_key[TxBuffer::kCap];
  uint32_t miss_sig[TxBuffer::kCap], slot[TxBuffer::kCap], found[TxBuffer::kCap];
  uint32_t nm = 0;
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = s.classify_cache.lookup(kp[i], sig[i]);
    if (likely(out[i] < kLocal)) {
      prefetch_pair(s, out[i], bypass);
    } else if (out[i] == ClassifyCache::kMiss) {
      miss_key[nm] = kp[i];
      miss_sig[nm] = sig[i];
      slot[nm++] = i;
    }
  }
  if (nm == 0) return;
  s.stats.classify_lookups += nm;
  s.classify.lookup_bulk_hashed(miss_key, miss_sig, nm, found);
  for (uint32_t j = 0; j < nm; ++j) {
    const uint32_t c = likely(found[j] != HashTable::kMiss) ? found[j] : unpaired(s, miss_key[j]);
    out[slot[j]] = c;
    s.classify_cache.insert(miss_key[j], miss_sig[j], c);
    if (likely(c < kLocal)) prefetch_pair(s, c, bypass);
  }
}

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
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    uint32_t len = rte_pktmbuf_data_len(m);
    if (unlikely(m->nb_segs != 1)) {
      s.stats.drop(port, Drop::malformed);
      rte_pktmbuf_free(m);
      continue;
    }
    const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
    VlanTags tags;
    if (unlikely(!plain_not_ufab(d, len, s.cfg.udp_port))) {
      // Tags, uFAB, IPv4 for all but the frames VMs send most (not_ufab.hpp).
      tags = read_tags(d, len);
      if (tags.n != 0 || unlikely(tags.bare_stag)) {
        // An S-tag must carry a C-tag (bare_stag: unknown).
        const bool known = tags.n == 1 ? s.cfg.tenant_of_vlan[tags.vlan] >= 0
                                       : tags.n == 2 && s.cfg.qinq_tenant(tags.svlan, tags.vlan) >= 0;
        if (unlikely(!known)) {
          s.stats.drop(port, Drop::unknown_vlan);
          rte_pktmbuf_free(m);
          continue;
        }
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
        not_ipv4(s, port, m, tags, now);
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
  // Nothing between here and the scheduler changes it: decided once.
  const bool bypass = s.bypass_on() && s.sched.bypass_possible();
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
        prefetch_pair(s, pair[i], bypass);
        ++s.stats.marked;
      } else {
        kp[nk] = &keys[i];
        sig[nk] = sig[i];
        slot[nk++] = i;
      }
    }
    classify(s, kp, sig, nk, found, bypass);
    for (uint32_t j = 0; j < nk; ++j) pair[slot[j]] = found[j];
  } else {
    classify(s, kp, sig, k, pair, bypass);
  }
  // Every pair found was prefetched as it was found (prefetch_pair): at 8K
  // pairs each of those lines is a miss per frame when not fetched ahead.
  // The pair's flow of frame i, for a frame that is queued: one that leaves
  // at once needs none.
  const auto flow = [&](uint32_t i) {
    const rte_mbuf* m = cand[i];
    return flow_of4(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), keys[i].src_ip, keys[i].dst_ip,
                   s.cfg.flows_per_pair);
  };
  // The scheduler counts the bytes the frame will have on the fabric, so its
  // in-flight count and the VmPair's stay the same (on_data_sent).
  const auto fabric_len = [&](uint32_t p, const rte_mbuf* m) {
    return rte_pktmbuf_pkt_len(m) + s.encap_bytes(p, s.pairs[p].active_path());
  };
  if (bypass) {
    // In arrival order, each frame either leaves at once
    // (HierScheduler::take_bypass: nothing eligible, the pair's queue empty
    // and its window open) or is enqueued; a frame enqueued as eligible ends
    // the bypasses of the burst (take_bypass is false from then on). The
    // frames that leave are gathered in place (nb <= i) and sent after the
    // loop; any pair whose window admits the frame: one not sending has
    // window 0 under window gating, and learns of its demand from
    // on_enqueued (VmPair::on_data_arrived) whether the frame waits or not.
    uint32_t nb = 0;
    uint64_t nb_bytes = 0;
    bool open = true;  // bypass_possible(), true at the start; only an enqueue may end it
    for (uint32_t i = 0; i < k; ++i) {
      const uint32_t p = pair[i];
      rte_mbuf* const m = cand[i];
      if (unlikely(p >= kLocal)) {
        local_or_drop(s, port, m, p);
        continue;
      }
      const uint32_t len = fabric_len(p, m);
      if (likely(open) && s.sched.take_bypass_open(p, len)) {  // p < max_pairs: classified
        s.on_enqueued(p, now);  // the pair's timer and Alg. 1 activity (edge_state.hpp)
        s.pairs[p].prefetch_history();  // its hot lines are in: on_enqueued read them
        nb_bytes += len;
        cand[nb] = m;
        lens[nb] = len;
        pair[nb++] = p;
      } else {
        if (s.sched.enqueue(p, flow(i), m, len)) {
          s.on_enqueued(p, now);
        } else {
          s.stats.drop(port, Drop::queue_full);
          rte_pktmbuf_free(m);
        }
        open = s.sched.bypass_possible();
      }
    }
    if (nb != 0) {
      s.sched.count_bypassed(nb, nb_bytes);  // once per burst
      s.stats.bypassed += nb;
      send_data(s, cand, lens, pair, nb, now, /*prefetched=*/true);
    }
    return;
  }
  uint32_t flows[TxBuffer::kCap], q = 0;
  for (uint32_t i = 0; i < k; ++i) {
    if (unlikely(pair[i] >= kLocal)) {
      local_or_drop(s, port, cand[i], pair[i]);
      continue;
    }
    lens[q] = fabric_len(pair[i], cand[i]);
    flows[q] = flow(i);
    pair[q] = pair[i];
    cand[q++] = cand[i];
  }
  bool accepted[TxBuffer::kCap];
  s.sched.enqueue_burst(pair, flows, cand, lens, q, accepted);
  for (uint32_t i = 0; i < q; ++i)
    if (likely(accepted[i])) {
      s.on_enqueued(pair[i], now);
    } else {
      s.stats.drop(port, Drop::queue_full);
      rte_pktmbuf_free(cand[i]);
    }
}

}  // namespace ufab::pipeline
