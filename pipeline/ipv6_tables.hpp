// The IPv6 side of a worker's tables (edge/README.md, "IPv6"): a VM may
// have an IPv6 address besides its IPv4 one (vms[].ip6, remote_vms[].ip6),
// and its IPv6 frames belong to the same VM-pairs. Keyed by what the
// frames carry (addresses in network order; padding zeroed: the keys are
// value-initialized, then filled):
//  - classify:  (port, tags, source, destination) -> this shard's pair
//               (vm_ipv6.cpp; only pairs whose two VMs have IPv6);
//  - local_vms: (VNI, address) -> local VM (fabric_rx.cpp, decapsulation);
//  - vm_src:    (port, tags, source) -> local VM (dispatch.cpp: its owner);
//  - vm_by_mac: (port, tags, MAC) -> local VM with an ip6: who sent a
//               neighbour solicitation (its source may be a link-local
//               address); a VM without one has no IPv6 pairs, and its
//               solicitations go unanswered (told a MAC, it would send
//               into unknown_pair);
//  - nd_targets: (VNI, address) -> remote VM with a MAC (the neighbour
//               discovery proxy answers for it, nd.hpp).
// Built from the configuration, like every table of EdgeState, with room
// for the pairs, remote and local VMs a reload may add (params.spare_pairs,
// spare_remote_vms, spare_local_vms; remote_vms.hpp, local_vms.hpp).
#pragma once

#include <rte_hash_crc.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "edge/config.hpp"
#include "pipeline/hash_table.hpp"

namespace ufab::pipeline {

struct Classify6Key {
  uint16_t port = 0, vlan = 0, svlan = 0, pad = 0;
  edge::Ip6 src{}, dst{};

  // The classification table's hash (its rte_hash function, table_hash):
  // CRC32-C of the key's five 8-byte words in order, as rte_hash_crc
  // computes it over the 40 bytes, here from the fields and the frame's two
  // addresses (src, dst: 16 bytes each), not from a key just stored, whose
  // first word GCC would load back over four 2-byte stores (the stall
  // ClassifyKey::hash_of avoids, edge_state.hpp).
  static uint32_t hash_of(uint16_t port, uint16_t vlan, uint16_t svlan, const uint8_t* src, const uint8_t* dst) {
    uint64_t w[4];
    std::memcpy(w, src, 16);
    std::memcpy(w + 2, dst, 16);
    uint32_t h = rte_hash_crc_8byte(uint64_t{port} | uint64_t{vlan} << 16 | uint64_t{svlan} << 32, 0);
    for (const uint64_t x : w) h = rte_hash_crc_8byte(x, h);
    return h;
  }
  static uint32_t table_hash(const void* key, uint32_t /*key_len*/, uint32_t /*init*/) {
    Classify6Key k;
    std::memcpy(&k, key, sizeof k);
    return hash_of(k.port, k.vlan, k.svlan, k.src.data(), k.dst.data());
  }
};
static_assert(sizeof(Classify6Key) == 40);
struct Vm6Key {
  uint32_t vni = 0;
  edge::Ip6 ip{};
};
static_assert(sizeof(Vm6Key) == 20);
struct VmSrc6Key {
  uint16_t port = 0, vlan = 0, svlan = 0, pad = 0;
  edge::Ip6 ip{};
};
static_assert(sizeof(VmSrc6Key) == 24);
struct VmMacKey {
  uint16_t port = 0, vlan = 0, svlan = 0;
  edge::Mac mac{};
};
static_assert(sizeof(VmMacKey) == 12);

class Ipv6Tables {
 public:
  // shard_pairs: how many of this worker's pairs may have IPv6 at both ends
  // (the size of `classify`; EdgeState adds them as it makes its pairs);
  // nd_targets has room for c.spare_remote_vms more.
  Ipv6Tables(const edge::EdgeConfig& c, uint32_t shard_pairs);

  HashTable classify, local_vms, vm_src, vm_by_mac, nd_targets;

  // Local VM l (config index v) in local_vms, vm_src and vm_by_mac when it
  // has an IPv6 address; and out again (local_vms.hpp).
  void add_local_vm(const edge::VmCfg& l, uint32_t v);
  void remove_local_vm(const edge::VmCfg& l);
  // Adds the pair of local VM l to remote VM r (both with ip6) as `pair`.
  void add_pair(const edge::VmCfg& l, const edge::VmCfg& r, uint32_t pair);
  void remove_pair(const edge::VmCfg& l, const edge::VmCfg& r);
  // Remote VM r (config index) as a neighbour discovery target, when it has
  // an IPv6 address and a MAC; and out again.
  void add_nd_target(const edge::VmCfg& rv, uint32_t r);
  void remove_nd_target(const edge::VmCfg& rv);
};

}  // namespace ufab::pipeline
