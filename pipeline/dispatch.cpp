// RX lcore polling and software dispatch (dispatch.hpp, layout.hpp).
#include "pipeline/dispatch.hpp"

#include <rte_ethdev.h>
#include <rte_ring.h>

#include <cstring>

#include "pipeline/log.hpp"
#include "pipeline/stages.hpp"
#include "pipeline/vlan.hpp"

namespace ufab::pipeline {

uint32_t sending_vm(const EdgeState& s, uint16_t port, const uint8_t* d, uint32_t len, VlanTags tags) {
  // (port, VLAN, source IP); an 802.1Q tag moves the IP header 4 bytes,
  // QinQ tags 8. IPv6: (port, VLAN, source IPv6 address), the header's
  // bytes 8-23.
  const uint32_t l2 = 14 + tags.n * kVlanTagBytes;
  if (len >= l2 + 20 && d[l2 - 2] == 0x08 && d[l2 - 1] == 0x00) {
    ClassifyKey key{port, tags.vlan, 0, 0, tags.svlan};
    std::memcpy(&key.src_ip, d + l2 + 12, 4);
    return s.vm_src.lookup(&key);
  }
  if (len >= l2 + 40 && d[l2 - 2] == 0x86 && d[l2 - 1] == 0xdd) {
    VmSrc6Key key{};
    key.port = port, key.vlan = tags.vlan, key.svlan = tags.svlan;
    std::memcpy(key.ip.data(), d + l2 + 8, 16);
    return s.ip6.vm_src.lookup(&key);
  }
  return HashTable::kMiss;
}

namespace {

// The worker owning a frame that arrived on `port` (a fabric port when
// `fabric`); s.worker when the frame names no local VM (it is then dropped
// here, under its reason).
uint16_t owner_of(const EdgeState& s, uint16_t port, bool fabric, const rte_mbuf* m) {
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (fabric) {
    wire::FrameView v;
    if (wire::parse_frame(std::span<const uint8_t>(d, len), v, s.cfg.udp_port) != wire::WireError::ok) return s.worker;
    return s.layout.owner_of_wire_pair(v.shim.pair_id, s.worker);
  }
  // rte_flow MARK (pipeline/flow_offload.hpp): the mark names the owner.
  if (s.offload.marks(port) && (m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) != 0 &&
      mark_worker(m->hash.fdir.hi) < s.layout.workers())
    return mark_worker(m->hash.fdir.hi);
  // Anything that names no local VM (ARP, a solicitation from a link-local
  // address) is answered by the worker that has it.
  const uint32_t vm = sending_vm(s, port, d, len, read_tags(d, len));
  return vm == HashTable::kMiss ? s.worker : s.layout.vm_owner[vm];
}

void handle(EdgeState& s, uint16_t port, bool fabric, rte_mbuf* const* pkts, uint16_t n, Nanos now) {
  if (n == 0) return;
  if (fabric)
    fabric_frames(s, port, pkts, n, now);
  else
    vm_frames(s, port, pkts, n, now);
}

}  // namespace

uint32_t poll_port(EdgeState& s, uint16_t port, Nanos now) {
  alignas(64) rte_mbuf* pkts[TxBuffer::kCap];
  // Dispatch ports: queue 0 (this worker is the RX lcore); per-worker
  // queues: this worker's own.
  const bool own_queue = s.layout.rx_queues[port] > 1;
  const uint16_t n = rte_eth_rx_burst(port, own_queue ? s.worker : 0, pkts, s.burst);
  if (n == 0) return 0;
  PortStats& ps = s.stats.ports[port];
  ps.rx += n;
  if (own_queue) s.stats.rxq_polled += n;
  for (uint16_t i = 0; i < n; ++i) ps.rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
  const bool fabric = s.cfg.is_fabric_port(port);  // once per burst
  if (s.layout.workers() == 1) {
    handle(s, port, fabric, pkts, n, now);
    return n;
  }
  // Split by owner, keeping each owner's frames in arrival order.
  rte_mbuf* mine[TxBuffer::kCap];
  uint16_t k = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    const uint16_t w = owner_of(s, port, fabric, m);
    if (w == s.worker) {
      mine[k++] = m;
      continue;
    }
    m->port = port;  // the owner learns where the frame came from
    if (rte_ring_mp_enqueue(s.peer_rings[w], m) == 0) {
      ++s.stats.handed_off;
      s.stats.misqueued += own_queue;
    } else {
      s.stats.drop(port, Drop::ring_full);
      UFAB_LOG(DEBUG, "ring to worker %u full: frame from port %u dropped", w, port);
      rte_pktmbuf_free(m);
    }
  }
  handle(s, port, fabric, mine, k, now);
  return n;
}

uint32_t poll_ring(EdgeState& s, Nanos now) {
  if (s.rx_ring == nullptr) return 0;
  alignas(64) rte_mbuf* pkts[TxBuffer::kCap];
  const unsigned n = rte_ring_sc_dequeue_burst(s.rx_ring, reinterpret_cast<void**>(pkts), s.burst, nullptr);
  s.stats.taken_over += n;
  // Runs of frames from one port, in ring order.
  for (unsigned i = 0; i < n;) {
    unsigned j = i + 1;
    while (j < n && pkts[j]->port == pkts[i]->port) ++j;
    handle(s, pkts[i]->port, s.cfg.is_fabric_port(pkts[i]->port), pkts + i, static_cast<uint16_t>(j - i), now);
    i = j;
  }
  return n;
}

uint32_t drain_tx_rings(EdgeState& s) {
  uint32_t total = 0;
  for (uint16_t p = 0; p < s.tx_rings.size(); ++p) {
    if (s.tx_rings[p] == nullptr) continue;
    rte_mbuf* pkts[TxBuffer::kCap];
    const unsigned n = rte_ring_sc_dequeue_burst(s.tx_rings[p], reinterpret_cast<void**>(pkts), TxBuffer::kCap, nullptr);
    s.stats.taken_over += n;
    for (unsigned i = 0; i < n; ++i) s.tx[p].push(pkts[i]);
    total += n;
  }
  return total;
}

void print_rx_modes(std::FILE* out, const Layout& l) {
  for (uint16_t p = 0; p < l.rx_mode.size(); ++p) {
    if (l.rx_worker[p] < 0 && l.rx_queues[p] <= 1) continue;  // no such port (yet: ports.hpp)
    std::fprintf(out, "ufab-edge rx port=%u mode=%s queues=%u", p, to_string(l.rx_mode[p]), l.rx_queues[p]);
    if (l.rx_mode[p] == RxMode::dispatch && l.rx_worker[p] >= 0) std::fprintf(out, " rx_worker=%d", l.rx_worker[p]);
    if (!l.rx_why[p].empty()) std::fprintf(out, " why=\"%s\"", l.rx_why[p].c_str());
    if (p < l.rx_reta.size() && !l.rx_reta[p].empty()) std::fprintf(out, " reta=\"%s\"", l.rx_reta[p].c_str());
    std::fputc('\n', out);
  }
  std::fflush(out);
}

}  // namespace ufab::pipeline
