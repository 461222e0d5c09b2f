// A VM's IPv6 frame, from vm_rx with its tenant's tags stripped:
//  - a neighbour solicitation (nd.hpp) from a local VM behind this port and
//    tenant tag (named by its frame's source MAC: a solicitation's source
//    address may be the vNIC's link-local one) for the address of a remote
//    VM of its tenant with a MAC (remote_vms[].ip6 and .mac) is answered
//    with an advertisement in that VM's name, on this port, tagged as it
//    came (nd_replied), if that VM has an ip6 itself (vm_by_mac holds only
//    those, ipv6_tables.hpp); so is one for another local VM of its tenant
//    with an ip6, with that VM's `mac` (vm_local.cpp); other solicitations
//    are nd_unanswered, among them duplicate address detection (source
//    ::), which must get no answer;
//  - any other IPv6 frame is data: gathered into s.burst6 with its key
//    (port, tags, source, destination) and the key's hash, its key's cache
//    set prefetched; once vm_rx has parsed the burst, vm_ipv6_burst
//    classifies the gathered frames into their VM-pairs together, through
//    the worker's IPv6 exact-match cache and one bulk lookup for what it
//    does not hold (vm_burst.hpp, classify_cache.hpp), and each frame is
//    queued into one of its pair's flows by its 5-tuple (flow_hash.hpp) or
//    sent at once when the scheduler lets it bypass the queues, as vm_rx
//    does with IPv4 frames. No pair: to another local VM of the tenant
//    (vm_local.cpp; cached like a pair), else local_scope for a multicast
//    or link-local frame (local_scope.hpp), else unknown_pair.
// A frame shorter than its IPv6 header says, or an invalid solicitation,
// is malformed.
#include <rte_mbuf.h>

#include <cstring>

#include "pipeline/flow_hash.hpp"
#include "pipeline/local_scope.hpp"
#include "pipeline/nd.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/vlan.hpp"
#include "pipeline/vm_burst.hpp"

namespace ufab::pipeline {

namespace {

constexpr uint32_t kEth = 14;

void drop(EdgeState& s, uint16_t port, rte_mbuf* m, Drop why) {
  s.stats.drop(port, why);
  rte_pktmbuf_free(m);
}

// Answers solicitation `ns` (read from m) for a remote VM or another local
// VM of the asker's tenant, or drops it.
void solicitation(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags, const nd::Solicitation& ns) {
  const edge::Mac* mac = nullptr;  // the answer's
  VmMacKey from{};
  from.port = port, from.vlan = tags.vlan, from.svlan = tags.svlan, from.mac = ns.from;
  const uint32_t vm = ns.src == nd::Ip6{} ? HashTable::kMiss : s.ip6.vm_by_mac.lookup(&from);
  if (vm != HashTable::kMiss) {
    Vm6Key k{};
    k.vni = s.cfg.vms[vm].vni, k.ip = ns.target;
    const uint32_t target = s.ip6.nd_targets.lookup(&k);
    if (target != HashTable::kMiss) {
      mac = &s.cfg.remote_vms[target].mac;
    } else if (const uint32_t peer = local_peer6(s, vm, ns.target.data()); peer != HashTable::kMiss) {
      mac = &s.cfg.vms[peer].mac;
    }
  }
  if (mac == nullptr) return drop(s, port, m, Drop::nd_unanswered);
  // The advertisement is kNaBytes long whatever the solicitation's length.
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (len < nd::kNaBytes ? rte_pktmbuf_append(m, static_cast<uint16_t>(nd::kNaBytes - len)) == nullptr
                         : rte_pktmbuf_trim(m, static_cast<uint16_t>(len - nd::kNaBytes)) != 0)
    return drop(s, port, m, Drop::no_headroom);
  nd::answer(rte_pktmbuf_mtod(m, uint8_t*), ns, *mac);
  if (!insert_tenant_tags(m, tags.svlan, tags.vlan))
    return drop(s, port, m, Drop::no_headroom);
  ++s.stats.nd_replied;
  s.tx[port].push(m);
}

// What classification gives an IPv6 key no pair has: kLocalVm | the local
// VM it is for, cached like a pair, or kMiss.
[[gnu::noinline, gnu::cold]] uint32_t unpaired(const EdgeState& s, const void* key) {
  const uint32_t to = local_peer_of6(s, *static_cast<const Classify6Key*>(key));
  return to == HashTable::kMiss ? HashTable::kMiss : kLocalVm | to;
}

// An IPv6 data frame no pair takes (c >= kLocalVm): to the local VM c
// names, else dropped as local_scope or unknown_pair.
[[gnu::noinline, gnu::cold]] void local_or_drop(EdgeState& s, uint16_t port, rte_mbuf* m, uint32_t c) {
  if (c != HashTable::kMiss) return deliver_local(s, port, m, c & ~kLocalVm);
  drop(s, port, m, ipv6_local_scope(rte_pktmbuf_mtod(m, const uint8_t*)) ? Drop::local_scope : Drop::unknown_pair);
}

static_assert(sizeof(Classify6Key) == Classify6Cache::kKeyBytes);

}  // namespace

void vm_ipv6(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags) {
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  nd::Solicitation ns;
  switch (nd::read(d, len, ns)) {
    case nd::Kind::malformed: return drop(s, port, m, Drop::malformed);
    case nd::Kind::solicitation: return solicitation(s, port, m, tags, ns);
    case nd::Kind::other: break;
  }
  EdgeState::Ipv6Burst& b = s.burst6;  // at most a burst: vm_frames' n <= kCap
  Classify6Key& k = b.key[b.n];
  k.port = port, k.vlan = tags.vlan, k.svlan = tags.svlan, k.pad = 0;
  std::memcpy(k.src.data(), d + kEth + 8, 16);
  std::memcpy(k.dst.data(), d + kEth + 24, 16);
  b.sig[b.n] = Classify6Key::hash_of(port, tags.vlan, tags.svlan, d + kEth + 8, d + kEth + 24);
  s.classify6_cache.prefetch(b.sig[b.n]);
  b.m[b.n++] = m;
}

// Out of line: LTO inlined it into vm_frames, whose IPv4 frames then cost
// ~2 instructions a frame more at 8K pairs (callgrind).
[[gnu::noinline]] void vm_ipv6_burst(EdgeState& s, uint16_t port, Nanos now) {
  EdgeState::Ipv6Burst& b = s.burst6;
  const uint32_t n = b.n;
  b.n = 0;
  const void* kp[TxBuffer::kCap];
  uint32_t pair[TxBuffer::kCap], lens[TxBuffer::kCap];
  for (uint32_t i = 0; i < n; ++i) kp[i] = &b.key[i];
  const bool bypass = s.bypass_on() && s.sched.bypass_possible();
  vm_burst::classify(s, s.classify6_cache, s.ip6.classify, kp, b.sig, n, pair, bypass,
                     [&s](const void* key) { return unpaired(s, key); });
  // The frames stay in b.m (queue_or_send compacts them there): b.n is 0,
  // so nothing is gathered again until the next burst.
  const auto flow = [&](uint32_t i) {
    const rte_mbuf* m = b.m[i];
    return flow_of6(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m), s.cfg.flows_per_pair);
  };
  vm_burst::queue_or_send(s, port, b.m, pair, lens, n, bypass, now, flow,
                          [&](rte_mbuf* m, uint32_t c) { local_or_drop(s, port, m, c); });
}

}  // namespace ufab::pipeline
