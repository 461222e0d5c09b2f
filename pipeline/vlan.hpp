// 802.1Q VLAN tags on the VM side (edge/README.md, "VLAN tenants"): a tenant
// may be named by a VLAN id (config `tenants[].vlan`). A tagged frame is
// classified by (VLAN -> tenant, source VM, destination VM); the tag is
// stripped before the encapsulation (the fabric carries the VNI instead) and
// the receiving edge inserts its tenant's tag again on delivery to the VM
// port. The tag's priority bits (PCP, DEI) do not cross the fabric: the
// re-inserted tag has PCP 0.
//
// QinQ (config `tenants[].qinq: [S, C]`): an 802.1ad S-tag (TPID 0x88a8,
// VLAN id S) followed by an 802.1Q C-tag (VLAN id C) names the tenant by
// (S, C); both tags are stripped and, on delivery, inserted again.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

namespace ufab::pipeline {

inline constexpr uint32_t kVlanTagBytes = 4;
inline constexpr uint16_t kVlanVidMask = 0x0fff;

// True when the frame (at least 18 bytes) carries an 802.1Q tag after the MACs.
inline bool is_vlan_tagged(const uint8_t* d, uint32_t len) { return len >= 18 && d[12] == 0x81 && d[13] == 0x00; }
// The tag's VLAN id (precondition: is_vlan_tagged).
inline uint16_t vlan_id(const uint8_t* d) { return static_cast<uint16_t>((d[14] << 8 | d[15]) & kVlanVidMask); }

// True when the frame starts with an 802.1ad S-tag (the caller then
// checks the C-tag: is_qinq_tagged).
inline bool is_stag(const uint8_t* d, uint32_t len) { return len >= 18 && d[12] == 0x88 && d[13] == 0xa8; }
// True when an S-tag is followed by an 802.1Q C-tag (at least 22 bytes).
inline bool is_qinq_tagged(const uint8_t* d, uint32_t len) {
  return len >= 22 && is_stag(d, len) && d[16] == 0x81 && d[17] == 0x00;
}
// The C-tag's VLAN id of a QinQ frame (precondition: is_qinq_tagged).
inline uint16_t inner_vlan_id(const uint8_t* d) { return static_cast<uint16_t>((d[18] << 8 | d[19]) & kVlanVidMask); }

// A VM frame's tenant tags, as vm_rx and dispatch read them: none, one
// 802.1Q tag (vlan), or QinQ (svlan, then vlan). An S-tag without a C-tag
// is `bare_stag`, with n = 0.
struct VlanTags {
  uint16_t vlan = 0, svlan = 0;
  uint32_t n = 0;  // tags to strip
  bool bare_stag = false;
};
inline VlanTags read_tags(const uint8_t* d, uint32_t len) {
  VlanTags t;
  if (is_vlan_tagged(d, len)) {
    t.vlan = vlan_id(d);
    t.n = 1;
  } else if (is_qinq_tagged(d, len)) {
    t.svlan = vlan_id(d);
    t.vlan = inner_vlan_id(d);
    t.n = 2;
  } else {
    t.bare_stag = is_stag(d, len);
  }
  return t;
}

// Removes n_tags tags in place: the MACs move 4 bytes per tag towards the payload.
inline void strip_vlan(rte_mbuf* m, uint32_t n_tags = 1) {
  uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
  std::memmove(d + n_tags * kVlanTagBytes, d, 12);
  rte_pktmbuf_adj(m, static_cast<uint16_t>(n_tags * kVlanTagBytes));
}

// Inserts a tag (TPID tpid, VLAN id vid, PCP 0) right after the MACs;
// false when the mbuf has no headroom for it.
inline bool push_tag(rte_mbuf* m, uint16_t tpid, uint16_t vid) {
  auto* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kVlanTagBytes));
  if (d == nullptr) return false;
  std::memmove(d, d + kVlanTagBytes, 12);
  d[12] = static_cast<uint8_t>(tpid >> 8);
  d[13] = static_cast<uint8_t>(tpid);
  d[14] = static_cast<uint8_t>(vid >> 8 & 0x0f);
  d[15] = static_cast<uint8_t>(vid);
  return true;
}

// Inserts an 802.1Q tag with VLAN id vid after the MACs.
inline bool insert_vlan(rte_mbuf* m, uint16_t vid) { return push_tag(m, 0x8100, vid); }

// Inserts an S-tag (VLAN id svid) and then a C-tag (VLAN id cvid) after the
// MACs: the C-tag first, the S-tag in front of it.
inline bool insert_qinq(rte_mbuf* m, uint16_t svid, uint16_t cvid) {
  return push_tag(m, 0x8100, cvid) && push_tag(m, 0x88a8, svid);
}

// Inserts a VM's tenant tags (vms[].vlan, .svlan; 0: none) for delivery to
// its port: none, one 802.1Q tag, or QinQ. False when there is no headroom.
inline bool insert_tenant_tags(rte_mbuf* m, uint16_t svlan, uint16_t vlan) {
  if (vlan == 0) return true;
  return svlan != 0 ? insert_qinq(m, svlan, vlan) : insert_vlan(m, vlan);
}

}  // namespace ufab::pipeline
