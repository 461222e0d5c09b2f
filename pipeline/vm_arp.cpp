// A VM's ARP frame (proxy ARP, arp.hpp), from vm_rx with its tenant's tags
// stripped. A request is answered when
//  - its sender address is the address of the local VM behind this port and
//    tenant tag (the table vm_rx's dispatch uses: the VM names its tenant),
//  - a remote VM of that tenant has the target address and a MAC in the
//    configuration (remote_vms[].mac), or another local VM of the tenant
//    has it (answered with its vms[].mac; vm_local.cpp carries the frames);
// the reply leaves on the port the request came in on, with the tags it
// came with (PCP 0, as vlan.hpp inserts them). Everything else is dropped:
// malformed when it is not IPv4-over-Ethernet ARP or is cut short, else
// arp_unanswered. A DAD probe (sender address 0.0.0.0) names no VM, and a
// gratuitous announcement (target = sender) no remote VM (the configuration
// refuses a remote VM at a local VM's address of its tenant) and no other
// local VM, so neither is answered: an answer would tell the VM its address
// is taken.
#include <rte_mbuf.h>

#include "pipeline/arp.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/vlan.hpp"

namespace ufab::pipeline {

void vm_arp(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags) {
  uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
  arp::Request r;
  const arp::Kind kind = arp::read(d, rte_pktmbuf_data_len(m), r);
  Drop why = Drop::arp_unanswered;
  const edge::Mac* mac = nullptr;  // the answer's
  if (kind == arp::Kind::malformed) {
    why = Drop::malformed;
  } else if (kind == arp::Kind::request) {
    const ClassifyKey sender{port, tags.vlan, r.spa, 0, tags.svlan};
    if (const uint32_t vm = s.vm_src.lookup(&sender); vm != HashTable::kMiss) {
      const VmKey k{s.cfg.vms[vm].vni, r.tpa};
      if (const uint32_t target = s.arp_targets.lookup(&k); target != HashTable::kMiss)
        mac = &s.cfg.remote_vms[target].mac;
      else if (const uint32_t peer = local_peer(s, vm, r.tpa); peer != HashTable::kMiss)
        mac = &s.cfg.vms[peer].mac;
    }
  }
  if (mac == nullptr) {
    s.stats.drop(port, why);
    rte_pktmbuf_free(m);
    return;
  }
  arp::answer(d, r, *mac);
  if (!insert_tenant_tags(m, tags.svlan, tags.vlan)) {
    s.stats.drop(port, Drop::no_headroom);
    rte_pktmbuf_free(m);
    return;
  }
  ++s.stats.arp_replied;
  s.tx[port].push(m);
}

}  // namespace ufab::pipeline
