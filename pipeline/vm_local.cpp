// Frames between two local VMs of a tenant. VM-pairs join a local VM to
// the remote VMs of its tenant (§3: the vFabric is the network between
// hosts), so a frame from one local VM to another crosses no fabric link,
// needs no pair and is not scheduled: the edge switches it to the other
// VM's port, with that VM's tenant tags, as the receiving edge delivers a
// decapsulated frame (fabric_rx.cpp), and counts it as local_delivered.
// The sender is named by the frame's (port, tenant tags, source address),
// the table vm_rx's dispatch uses (vm_src), and the receiver by (the
// sender's VNI, destination address): a VM reaches only its own tenant's
// VMs and cannot send in another VM's name (such a frame stays
// unknown_pair). A VM's frame to its own address is not delivered either.
// The ARP and neighbour discovery proxies answer for a local VM with its
// `mac` (vm_arp.cpp, vm_ipv6.cpp) through local_peer / local_peer6.
//
// Only keys no pair has come here (the unpaired of vm_rx and vm_ipv6); the
// frames between VM-pairs pay only the tests of what the cache gives (+5
// instructions a frame at 8K pairs, docs/perf-log.md session 27). What a
// key gave (kLocalVm | VM) is cached in the worker's exact-match cache of
// its family like a pair (classify_cache.hpp), so a local flow costs the
// table and these two lookups once, then a cache hit per frame.
#include <rte_mbuf.h>

#include <cstring>

#include "pipeline/stages.hpp"

namespace ufab::pipeline {

uint32_t local_peer(const EdgeState& s, uint32_t from, uint32_t ip) {
  const VmKey k{s.cfg.vms[from].vni, ip};
  const uint32_t to = s.local_vms.lookup(&k);
  return to == from ? HashTable::kMiss : to;
}

uint32_t local_peer6(const EdgeState& s, uint32_t from, const uint8_t* ip6) {
  Vm6Key k{};
  k.vni = s.cfg.vms[from].vni;
  std::memcpy(k.ip.data(), ip6, 16);
  const uint32_t to = s.ip6.local_vms.lookup(&k);
  return to == from ? HashTable::kMiss : to;
}

uint32_t local_peer_of(const EdgeState& s, const ClassifyKey& k) {
  const ClassifyKey src{k.port, k.vlan, k.src_ip, 0, k.svlan};
  const uint32_t from = s.vm_src.lookup(&src);
  return from == HashTable::kMiss ? HashTable::kMiss : local_peer(s, from, k.dst_ip);
}

uint32_t local_peer_of6(const EdgeState& s, const Classify6Key& k) {
  VmSrc6Key src{};
  src.port = k.port, src.vlan = k.vlan, src.svlan = k.svlan, src.ip = k.src;
  const uint32_t from = s.ip6.vm_src.lookup(&src);
  return from == HashTable::kMiss ? HashTable::kMiss : local_peer6(s, from, k.dst.data());
}

void deliver_local(EdgeState& s, uint16_t port, rte_mbuf* m, uint32_t to) {
  if (unlikely(!to_vm_port(s, to, m))) {
    s.stats.drop(port, Drop::no_headroom);
    rte_pktmbuf_free(m);
    return;
  }
  ++s.stats.local_delivered;
}

}  // namespace ufab::pipeline
