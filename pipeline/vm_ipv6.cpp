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
//  - any other IPv6 frame is data: classified into its VM-pair by (port,
//    tags, source, destination) and queued into one of the pair's flows by
//    its 5-tuple (flow_hash.hpp), or sent at once when the scheduler lets
//    it bypass the queues, as vm_rx does with IPv4 frames. No pair: to
//    another local VM of the tenant (vm_local.cpp), else local_scope for a multicast or link-local frame (local_scope.hpp),
//    else unknown_pair.
// A frame shorter than its IPv6 header says, or an invalid solicitation,
// is malformed.
#include <rte_mbuf.h>

#include "pipeline/flow_hash.hpp"
#include "pipeline/local_scope.hpp"
#include "pipeline/nd.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/vlan.hpp"

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

}  // namespace

void vm_ipv6(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags, Nanos now) {
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  nd::Solicitation ns;
  switch (nd::read(d, len, ns)) {
    case nd::Kind::malformed: return drop(s, port, m, Drop::malformed);
    case nd::Kind::solicitation: return solicitation(s, port, m, tags, ns);
    case nd::Kind::other: break;
  }
  const uint32_t p = s.ip6.pair_of(port, tags.vlan, tags.svlan, d + kEth + 8, d + kEth + 24);
  if (p == HashTable::kMiss) {
    if (const uint32_t to = local_peer_of6(s, port, tags, d + kEth + 8, d + kEth + 24); to != HashTable::kMiss)
      return deliver_local(s, port, m, to);
    return drop(s, port, m, ipv6_local_scope(d) ? Drop::local_scope : Drop::unknown_pair);
  }
  uint32_t fabric_len = rte_pktmbuf_pkt_len(m) + s.encap_bytes(p, s.pairs[p].active_path());
  if (s.bypass_on() && s.sched.try_bypass(p, fabric_len)) {
    // Leaves at once, as vm_rx lets an IPv4 frame go (nothing eligible, the
    // pair's queue empty, its window open): before the IPv4 frames of its
    // burst, which are other flows.
    s.on_enqueued(p, now);
    ++s.stats.bypassed;
    return send_data(s, &m, &fabric_len, &p, 1, now);
  }
  if (!s.sched.enqueue(p, flow_of6(d, len, s.cfg.flows_per_pair), m, fabric_len)) return drop(s, port, m, Drop::queue_full);
  s.on_enqueued(p, now);
}

}  // namespace ufab::pipeline
