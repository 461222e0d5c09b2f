#include "pipeline/ipv6_tables.hpp"

#include <stdexcept>

namespace ufab::pipeline {

namespace {

uint32_t with_ip6(const std::vector<edge::VmCfg>& vms, bool need_mac) {
  uint32_t n = 0;
  for (const edge::VmCfg& v : vms) n += v.ip6 != edge::Ip6{} && (!need_mac || v.mac != edge::Mac{});
  return n;
}

}  // namespace

Ipv6Tables::Ipv6Tables(const edge::EdgeConfig& c, uint32_t shard_pairs)
    : classify(HashTable::unique_name("cls6"), shard_pairs, sizeof(Classify6Key), Classify6Key::table_hash),
      local_vms(HashTable::unique_name("vm6"), with_ip6(c.vms, false) + c.spare_local_vms, sizeof(Vm6Key)),
      vm_src(HashTable::unique_name("src6"), with_ip6(c.vms, false) + c.spare_local_vms, sizeof(VmSrc6Key)),
      vm_by_mac(HashTable::unique_name("mac"), with_ip6(c.vms, false) + c.spare_local_vms, sizeof(VmMacKey)),
      nd_targets(HashTable::unique_name("nd"), with_ip6(c.remote_vms, true) + c.spare_remote_vms, sizeof(Vm6Key)) {
  // local_vms, vm_src and vm_by_mac are filled by EdgeState::add_local_vm,
  // nd_targets by EdgeState::add_targets (with the ARP targets).
}

namespace {
VmMacKey mac_key(const edge::VmCfg& l) {
  VmMacKey k{};
  k.port = l.port, k.vlan = l.vlan, k.svlan = l.svlan, k.mac = l.mac;
  return k;
}
Vm6Key vm6_key(const edge::VmCfg& l) {
  Vm6Key k{};
  k.vni = l.vni, k.ip = l.ip6;
  return k;
}
VmSrc6Key src6_key(const edge::VmCfg& l) {
  VmSrc6Key k{};
  k.port = l.port, k.vlan = l.vlan, k.svlan = l.svlan, k.ip = l.ip6;
  return k;
}
}  // namespace

void Ipv6Tables::add_local_vm(const edge::VmCfg& l, uint32_t v) {
  if (l.ip6 == edge::Ip6{}) return;  // no IPv6 pairs: its solicitations go unanswered
  const VmMacKey mk = mac_key(l);
  add_configured(vm_by_mac, &mk, v, "local VM MAC");
  const Vm6Key k = vm6_key(l);
  add_configured(local_vms, &k, v, "local VM IPv6");
  const VmSrc6Key sk = src6_key(l);
  add_configured(vm_src, &sk, v, "local VM IPv6 source");
}

void Ipv6Tables::remove_local_vm(const edge::VmCfg& l) {
  if (l.ip6 == edge::Ip6{}) return;
  const VmMacKey mk = mac_key(l);
  vm_by_mac.remove(&mk);
  const Vm6Key k = vm6_key(l);
  local_vms.remove(&k);
  const VmSrc6Key sk = src6_key(l);
  vm_src.remove(&sk);
}

namespace {
Classify6Key pair_key(const edge::VmCfg& l, const edge::VmCfg& r) {
  Classify6Key k{};
  k.port = l.port, k.vlan = l.vlan, k.svlan = l.svlan, k.src = l.ip6, k.dst = r.ip6;
  return k;
}
Vm6Key nd_key(const edge::VmCfg& rv) {
  Vm6Key k{};
  k.vni = rv.vni, k.ip = rv.ip6;
  return k;
}
bool nd_target(const edge::VmCfg& rv) { return rv.ip6 != edge::Ip6{} && rv.mac != edge::Mac{}; }
}  // namespace

void Ipv6Tables::add_pair(const edge::VmCfg& l, const edge::VmCfg& r, uint32_t pair) {
  const Classify6Key k = pair_key(l, r);
  add_configured(classify, &k, pair, "IPv6 VM-pair");
}

void Ipv6Tables::remove_pair(const edge::VmCfg& l, const edge::VmCfg& r) {
  const Classify6Key k = pair_key(l, r);
  classify.remove(&k);
}

void Ipv6Tables::add_nd_target(const edge::VmCfg& rv, uint32_t r) {
  if (!nd_target(rv)) return;
  const Vm6Key k = nd_key(rv);
  add_configured(nd_targets, &k, r, "neighbour discovery target");
}

void Ipv6Tables::remove_nd_target(const edge::VmCfg& rv) {
  if (!nd_target(rv)) return;
  const Vm6Key k = nd_key(rv);
  nd_targets.remove(&k);
}

}  // namespace ufab::pipeline
