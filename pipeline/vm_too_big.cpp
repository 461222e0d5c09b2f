// A VM frame above the VM MTU (too_big.hpp): counted, answered where path
// MTU discovery asks for it, freed. Off the fast path: vm_rx sends here
// only frames longer than EdgeConfig::max_vm_frame or in several segments.
#include <rte_mbuf.h>

#include <cstring>

#include "pipeline/stages.hpp"
#include "pipeline/too_big.hpp"
#include "pipeline/vlan.hpp"

namespace ufab::pipeline {

// edge/config.hpp's 82 bytes: outer IPv4, UDP, shim, the longest route, the VM frame's Ethernet header.
static_assert(edge::EdgeConfig::kVmMtuOverhead == 20 + 8 + wire::kShimBytes + 2 + 2 * wire::kMaxLabels + 14);
static_assert(wire::kOuterBytes == 14 + 20 + 8);

void vm_too_big(EdgeState& s, uint16_t port, rte_mbuf* m, Nanos now) {
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t have = rte_pktmbuf_data_len(m);  // the first segment
  const VlanTags tags = read_tags(d, have);
  const uint32_t l2 = 14 + tags.n * kVlanTagBytes;
  if (rte_pktmbuf_pkt_len(m) - tags.n * kVlanTagBytes <= s.cfg.max_vm_frame()) {
    s.stats.drop(port, Drop::malformed);  // chained, yet within the MTU: not a frame the edge takes
    rte_pktmbuf_free(m);
    return;
  }
  s.stats.drop(port, Drop::too_big);
  uint8_t buf[too_big::kMaxBytes];
  // Only to a VM of this port and tags: a frame from any other source
  // address is not the sender's to learn from (and the answer would go to
  // an address nobody there has).
  const uint32_t n = sending_vm(s, port, d, have, tags) != HashTable::kMiss
                         ? too_big::answer(d, have, l2, s.cfg.vm_mtu(), buf)
                         : 0;
  if (n != 0 && s.ptb_limiter.allow(now)) {
    rte_mbuf* a = rte_pktmbuf_alloc(s.pool);
    if (a != nullptr && n <= rte_pktmbuf_tailroom(a)) {
      std::memcpy(rte_pktmbuf_append(a, static_cast<uint16_t>(n)), buf, n);
      ++s.stats.ptb_sent;
      ++s.stats.generated;
      s.tx[port].push(a);
    } else if (a != nullptr) {
      rte_pktmbuf_free(a);
    }
  }
  rte_pktmbuf_free(m);
}

}  // namespace ufab::pipeline
