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
      local_vms(HashTable::unique_name("vm6"), with_ip6(c.vms, false), sizeof(Vm6Key)),
      vm_src(HashTable::unique_name("src6"), with_ip6(c.vms, false), sizeof(VmSrc6Key)),
      vm_by_mac(HashTable::unique_name("mac"), with_ip6(c.vms, false), sizeof(VmMacKey)),
      nd_targets(HashTable::unique_name("nd"), with_ip6(c.remote_vms, true), sizeof(Vm6Key)) {
  for (size_t v = 0; v < c.vms.size(); ++v) {
    const edge::VmCfg& l = c.vms[v];
    if (l.ip6 == edge::Ip6{}) continue;  // no IPv6 pairs: its solicitations go unanswered
    VmMacKey mk{};
    mk.port = l.port, mk.vlan = l.vlan, mk.svlan = l.svlan, mk.mac = l.mac;
    add_configured(vm_by_mac, &mk, static_cast<uint32_t>(v), "local VM MAC");
    Vm6Key k{};
    k.vni = l.vni, k.ip = l.ip6;
    add_configured(local_vms, &k, static_cast<uint32_t>(v), "local VM IPv6");
    VmSrc6Key sk{};
    sk.port = l.port, sk.vlan = l.vlan, sk.svlan = l.svlan, sk.ip = l.ip6;
    add_configured(vm_src, &sk, static_cast<uint32_t>(v), "local VM IPv6 source");
  }
  for (size_t r = 0; r < c.remote_vms.size(); ++r) {
    const edge::VmCfg& rv = c.remote_vms[r];
    if (rv.ip6 == edge::Ip6{} || rv.mac == edge::Mac{}) continue;
    Vm6Key k{};
    k.vni = rv.vni, k.ip = rv.ip6;
    add_configured(nd_targets, &k, static_cast<uint32_t>(r), "neighbour discovery target");
  }
}

void Ipv6Tables::add_pair(const edge::VmCfg& l, const edge::VmCfg& r, uint32_t pair) {
  Classify6Key k{};
  k.port = l.port, k.vlan = l.vlan, k.svlan = l.svlan, k.src = l.ip6, k.dst = r.ip6;
  add_configured(classify, &k, pair, "IPv6 VM-pair");
}

}  // namespace ufab::pipeline
