// VM-side RX: a burst from a VM's port is classified into VM-pairs by
// (port, source IP, destination IP) with one bulk rte_hash lookup (the port
// and source IP name the local VM and so its tenant), hashed into one of the
// pair's flows by 5-tuple (§4.1: RR over the pair's flows avoids head-of-line
// blocking), and enqueued into the hierarchical scheduler in one burst.
// uFAB frames from a VM are spoofing and never reach the fabric.
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>

#include <cstring>

#include "pipeline/stages.hpp"

namespace ufab::pipeline {

namespace {

constexpr size_t kEth = 14;

uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The 5-tuple is hashed value by value (rte_hash_crc_4byte takes its input
// by value). Hashing a struct with rte_hash_crc read it through uint64_t
// loads, which the compiler may order before the stores to the struct's
// fields (strict aliasing): the hash then covered stale stack bytes, one
// flow landed in different flow FIFOs from one burst to the next, and the
// round robin over them reordered the flow (the per-flow inversions of
// ufab_edge_round_trip).
uint32_t flow_of(const uint8_t* d, uint32_t len, uint32_t flows) {
  const uint32_t proto = d[23];
  uint32_t ports = 0;
  const size_t l4 = kEth + 4 * static_cast<size_t>(d[14] & 0xf);
  const bool first_fragment = (d[20] & 0x1f) == 0 && d[21] == 0;
  if ((proto == 6 || proto == 17) && first_fragment && len >= l4 + 4) ports = load32(d + l4);
  uint32_t h = rte_hash_crc_4byte(load32(d + 26), 0);
  h = rte_hash_crc_4byte(load32(d + 30), h);
  h = rte_hash_crc_4byte(ports, h);
  return rte_hash_crc_4byte(proto, h) % flows;
}

}  // namespace

uint32_t vm_rx(EdgeState& s, uint16_t port, Nanos /*now*/) {
  alignas(64) rte_mbuf* pkts[TxBuffer::kCap];
  const uint16_t n = rte_eth_rx_burst(port, 0, pkts, s.burst);
  if (n == 0) return 0;
  PortStats& ps = s.stats.ports[port];
  ClassifyKey keys[TxBuffer::kCap];
  const void* kp[TxBuffer::kCap];
  rte_mbuf* cand[TxBuffer::kCap];
  uint32_t flows[TxBuffer::kCap], pair[TxBuffer::kCap], lens[TxBuffer::kCap];
  uint32_t k = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    const uint32_t len = rte_pktmbuf_data_len(m);
    ++ps.rx;
    ps.rx_bytes += rte_pktmbuf_pkt_len(m);
    if (unlikely(m->nb_segs != 1)) {
      s.stats.drop(port, Drop::malformed);
      rte_pktmbuf_free(m);
      continue;
    }
    const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
    wire::FrameView v;
    const wire::WireError e = wire::parse_frame(std::span<const uint8_t>(d, len), v, s.cfg.udp_port);
    if (unlikely(e != wire::WireError::not_ufab)) {
      // A well-formed uFAB frame (probe, response, tunnel data) from a VM is
      // spoofing; anything else parse_frame refuses is a broken frame.
      s.stats.drop(port, e == wire::WireError::ok ? Drop::spoofed : Drop::malformed);
      rte_pktmbuf_free(m);
      continue;
    }
    if (unlikely(len < kEth + 20 || d[12] != 0x08 || d[13] != 0x00)) {
      s.stats.drop(port, Drop::not_ipv4);
      rte_pktmbuf_free(m);
      continue;
    }
    keys[k] = ClassifyKey{port, 0, 0, 0};
    std::memcpy(&keys[k].src_ip, d + 26, 4);
    std::memcpy(&keys[k].dst_ip, d + 30, 4);
    kp[k] = &keys[k];
    flows[k] = flow_of(d, len, s.cfg.flows_per_pair);
    cand[k++] = m;
  }
  if (s.offload.marks(port)) {
    // rte_flow MARK (pipeline/flow_offload.hpp): the NIC named the pair;
    // frames without a valid mark are looked up as usual.
    uint32_t nk = 0, slot[TxBuffer::kCap], found[TxBuffer::kCap];
    for (uint32_t i = 0; i < k; ++i) {
      const rte_mbuf* m = cand[i];
      if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) != 0 && m->hash.fdir.hi < s.pairs.size()) {
        pair[i] = m->hash.fdir.hi;
        ++s.stats.marked;
      } else {
        kp[nk] = &keys[i];
        slot[nk++] = i;
      }
    }
    s.classify.lookup_bulk(kp, nk, found);
    for (uint32_t j = 0; j < nk; ++j) pair[slot[j]] = found[j];
  } else {
    s.classify.lookup_bulk(kp, k, pair);
  }
  uint32_t q = 0;
  for (uint32_t i = 0; i < k; ++i) {
    if (unlikely(pair[i] == HashTable::kMiss)) {
      s.stats.drop(port, Drop::unknown_pair);
      rte_pktmbuf_free(cand[i]);
      continue;
    }
    // The scheduler counts the bytes the frame will have on the fabric, so
    // its in-flight count and the VmPair's stay the same (on_data_sent).
    lens[q] = rte_pktmbuf_pkt_len(cand[i]) + s.encap_bytes(pair[i], s.pairs[pair[i]].active_path());
    pair[q] = pair[i];
    flows[q] = flows[i];
    cand[q++] = cand[i];
  }
  bool accepted[TxBuffer::kCap];
  s.sched.enqueue_burst(pair, flows, cand, lens, q, accepted);
  for (uint32_t i = 0; i < q; ++i)
    if (unlikely(!accepted[i])) {
      s.stats.drop(port, Drop::queue_full);
      rte_pktmbuf_free(cand[i]);
    }
  return n;
}

}  // namespace ufab::pipeline
