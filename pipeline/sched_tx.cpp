// Scheduler -> fabric: a burst out of the hierarchical scheduler (WFQ over
// weight classes, RR over the tenant's pairs whose window admits their next
// packet, RR over the pair's flows; §4.1), or the VM frames that bypassed it
// on arrival (vm_rx.cpp), each frame encapsulated with the pair's active path
// (outer headers + shim + source route) and handed to the TX buffer of the
// fabric port that path leaves on (edge.fabric_port may list several). Each
// pair served is asked for its next probe (scalable probing: one per L_w
// bytes, §4.1).
#include <rte_mbuf.h>

#include "pipeline/encap.hpp"
#include "pipeline/stages.hpp"

namespace ufab::pipeline {

namespace {

// send_data's per-frame loop: encapsulate, charge the pair, queue for TX.
// kOneUplink: the edge has one fabric port, whose TX buffer stays in
// registers across the burst (indexing the buffers by each template's port
// cost ~3.5% of the data path alone at 8K pairs, docs/perf-log.md session
// 24); otherwise each frame goes to its path's uplink. Returns the frames
// sent; want[i] as in send_data.
template <bool kOneUplink>
size_t encap_burst(EdgeState& s, rte_mbuf* const* pkts, const uint32_t* lens, const uint32_t* ids, size_t n, Nanos now,
                   bool* want) {
  // The tables in locals: the headers are written through char pointers,
  // which may alias anything, so s.pairs[p] and the like were reloaded from
  // their vectors for every frame.
  VmPair* const pairs = s.pairs.data();
  const PairMeta* const meta = s.meta.data();
  const HostRoutes* const hosts = s.hosts.data();
  TxBuffer* const tx = s.tx.data();
  TxBuffer& uplink = tx[s.cfg.fabric_port()];
  const bool open_window = !s.cfg.window_gating;
  size_t sent = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t p = ids[i];
    VmPair& vp = pairs[p];
    const PairMeta& pm = meta[p];
    const int ap = vp.active_path();
    const size_t path = ap < 0 ? 0 : static_cast<size_t>(ap);
    const EncapTemplate& t = hosts[pm.host].data_encap[path];
    if (unlikely(!encap_data(pkts[i], t, pm.shim))) {
      s.sched.on_acked(p, lens[i]);  // never sent: give the scheduler its bytes back
      s.stats.drop(t.port, Drop::no_headroom);
      rte_pktmbuf_free(pkts[i]);
      s.mark_dirty(p);  // its queue may be empty now
      s.wake(p);
      want[i] = vp.may_send_message();
      continue;
    }
    vp.on_data_sent(lens[i], now);
    // Window gating off: the window must never hold the pair (stages.hpp).
    if (unlikely(open_window) && s.sched.inflight_of_used(p) >= kOpenWindowClear) s.sched.on_acked(p, UINT64_MAX);
    s.on_sent(p);
    s.pacer.spend(lens[i]);
    ++sent;
    if constexpr (kOneUplink)
      uplink.push(pkts[i]);
    else
      tx[t.port].push(pkts[i]);
    want[i] = vp.may_send_message();
    if (want[i]) vp.prefetch_message();
  }
  return sent;
}

}  // namespace

void send_data(EdgeState& s, rte_mbuf* const* pkts, const uint32_t* lens, const uint32_t* ids, size_t n, Nanos now,
               bool prefetched) {
  // Each frame touches its pair's VmPair (several KB, a random one per
  // frame at scale): prefetch the burst's pairs in two passes first, unless
  // the caller did.
  if (!prefetched) {
    for (size_t i = 0; i < n; ++i) s.prefetch_pair_lines(ids[i]);
    for (size_t i = 0; i < n; ++i) s.pairs[ids[i]].prefetch_history();
  }
  // want[i]: frame i's pair may send a message after it (may_send_message,
  // from lines already in), tested here so that the lines its message needs
  // are fetched while the rest of the burst is encapsulated.
  bool want[TxBuffer::kCap];
  s.stats.encapsulated += s.cfg.fabric_ports.size() == 1 ? encap_burst<true>(s, pkts, lens, ids, n, now, want)
                                                          : encap_burst<false>(s, pkts, lens, ids, n, now, want);
  // After each run of one pair's frames: its probe every L_w bytes, or
  // whatever else is due; most pairs have nothing. Only the pair's frames in
  // this burst change what may_send_message says, so its last frame's want
  // is the pair's at the end of the burst (a pair whose earlier run already
  // sent finds nothing due: control_tx then sends nothing).
  for (size_t i = 0; i < n; ++i)
    if (want[i] && (i + 1 == n || ids[i + 1] != ids[i])) control_tx(s, ids[i], now);
}

uint32_t sched_tx(EdgeState& s, Nanos now) {
  alignas(64) rte_mbuf* pkts[TxBuffer::kCap];
  uint32_t lens[TxBuffer::kCap], ids[TxBuffer::kCap];
  // At most what the fabric pacer allows (frames of about 1500 B).
  const uint32_t allowed = s.pacer.allowance(now, 1500, s.burst);
  if (allowed == 0) return 0;
  // Timed: paced pairs whose time has come rejoin their round first.
  const size_t n = s.sched.dequeue_burst(pkts, lens, ids, allowed, now);
  send_data(s, pkts, lens, ids, n, now);
  return static_cast<uint32_t>(n);
}

}  // namespace ufab::pipeline
