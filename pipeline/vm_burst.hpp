// What vm_rx.cpp (IPv4) and vm_ipv6.cpp (IPv6) do with a VM burst's data
// frames once each has its classification key and the key's hash:
//  - classify: keys -> pairs through the worker's exact-match cache and,
//    for what it does not hold, one bulk lookup in the classification
//    table (classify_cache.hpp), each pair prefetched as soon as it is known;
//  - queue_or_send: each frame sent at once when the scheduler lets it
//    bypass the queues, else enqueued into one of its pair's flows (§4.1),
//    and a frame no pair takes delivered to a local VM or dropped.
// One code for both families, templates over the cache and the callables
// that differ (a local VM for an unpaired key, a frame's flow, what to do
// with an unpaired frame), so vm_rx's loop is what GCC inlines as before.
#pragma once

#include <rte_mbuf.h>

#include "pipeline/stages.hpp"

namespace ufab::pipeline::vm_burst {

// What the frames of pair p will read next: its VmPair's hot lines and
// PairMeta (EdgeState::prefetch_pair_lines) and, for a burst that may
// bypass the queues, the scheduler's record of it (take_bypass).
inline void prefetch_pair(const EdgeState& s, uint32_t p, bool bypass) {
  s.prefetch_pair_lines(p);
  if (bypass) s.sched.prefetch_pair(p);
}

// keys kp[0..n) (hashes sig[], the table's hash) -> out[]: pairs, or
// kLocalVm | a local VM, or kMiss (unpaired), through `cache`, then `table`
// for what the cache does not hold; what the table finds is cached, and so
// is what unpaired(key) gives for a key the table does not hold (kLocalVm |
// VM, or kMiss, which the cache never stores). Each pair found is
// prefetched as soon as it is known, the cache's hits before the misses are
// looked up: at 8K pairs each of those lines is a miss per frame when not
// fetched ahead. Each table lookup counts in classify_lookups.
// Out of line, as it was in vm_rx before IPv6 shared it: inlined into
// vm_frames (twice: with and without rte_flow marks) it cost ~6
// instructions a frame more at 8K pairs (callgrind).
template <class Cache, class Unpaired>
[[gnu::noinline]] void classify(EdgeState& s, Cache& cache, const HashTable& table, const void* const* kp, const uint32_t* sig,
                              uint32_t n, uint32_t* out, bool bypass, const Unpaired& unpaired) {
  static_assert(Cache::kMiss == HashTable::kMiss);
  const void* miss_key[TxBuffer::kCap];
  uint32_t miss_sig[TxBuffer::kCap], slot[TxBuffer::kCap], found[TxBuffer::kCap];
  uint32_t nm = 0;
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = cache.lookup(kp[i], sig[i]);
    if (likely(out[i] < kLocalVm)) {
      prefetch_pair(s, out[i], bypass);
    } else if (out[i] == Cache::kMiss) {
      miss_key[nm] = kp[i];
      miss_sig[nm] = sig[i];
      slot[nm++] = i;
    }
  }
  if (nm == 0) return;
  s.stats.classify_lookups += nm;
  table.lookup_bulk_hashed(miss_key, miss_sig, nm, found);
  for (uint32_t j = 0; j < nm; ++j) {
    const uint32_t c = likely(found[j] != HashTable::kMiss) ? found[j] : unpaired(miss_key[j]);
    out[slot[j]] = c;
    cache.insert(miss_key[j], miss_sig[j], c);
    if (likely(c < kLocalVm)) prefetch_pair(s, c, bypass);
  }
}

// Frames cand[0..k) from `port`, classified into pair[] (>= kLocalVm: no
// pair; unpaired(m, c) then delivers or drops the frame), in arrival order.
// bypass: s.bypass_on() && s.sched.bypass_possible(), decided once by the
// caller (nothing between its classification and here changes it).
// flow(i): the pair's flow of frame i, asked only for a frame that is
// queued (one that leaves at once needs none). cand, pair and lens
// (scratch) are rewritten.
template <class Flow, class Unpaired>
inline void queue_or_send(EdgeState& s, uint16_t port, rte_mbuf** cand, uint32_t* pair, uint32_t* lens, uint32_t k,
                          bool bypass, Nanos now, const Flow& flow, const Unpaired& unpaired) {
  // The scheduler counts the bytes the frame will have on the fabric, so its
  // in-flight count and the VmPair's stay the same (on_data_sent).
  const auto fabric_len = [&](uint32_t p, const rte_mbuf* m) {
    return rte_pktmbuf_pkt_len(m) + s.encap_bytes(p, s.pairs[p].active_path());
  };
  if (bypass) {
    // In arrival order, each frame either leaves at once
    // (HierScheduler::take_bypass: nothing eligible, the pair's queue empty
    // and its window open) or is enqueued; a frame enqueued as eligible ends
    // the bypasses of the burst (take_bypass is false from then on). The
    // frames that leave are gathered in place (nb <= i) and sent after the
    // loop; any pair whose window admits the frame: one not sending has
    // window 0 under window gating, and learns of its demand from
    // on_enqueued (VmPair::on_data_arrived) whether the frame waits or not.
    uint32_t nb = 0;
    uint64_t nb_bytes = 0;
    bool open = true;  // bypass_possible(), true at the start; only an enqueue may end it
    for (uint32_t i = 0; i < k; ++i) {
      const uint32_t p = pair[i];
      rte_mbuf* const m = cand[i];
      if (unlikely(p >= kLocalVm)) {
        unpaired(m, p);
        continue;
      }
      const uint32_t len = fabric_len(p, m);
      if (likely(open) && s.sched.take_bypass_open(p, len)) {  // p < max_pairs: classified
        s.on_enqueued(p, now);  // the pair's timer and Alg. 1 activity (edge_state.hpp)
        s.pairs[p].prefetch_history();  // its hot lines are in: on_enqueued read them
        nb_bytes += len;
        cand[nb] = m;
        lens[nb] = len;
        pair[nb++] = p;
      } else {
        if (s.sched.enqueue(p, flow(i), m, len)) {
          s.on_enqueued(p, now);
        } else {
          s.stats.drop(port, Drop::queue_full);
          rte_pktmbuf_free(m);
        }
        open = s.sched.bypass_possible();
      }
    }
    if (nb != 0) {
      s.sched.count_bypassed(nb, nb_bytes);  // once per burst
      s.stats.bypassed += nb;
      send_data(s, cand, lens, pair, nb, now, /*prefetched=*/true);
    }
    return;
  }
  uint32_t flows[TxBuffer::kCap], q = 0;
  for (uint32_t i = 0; i < k; ++i) {
    if (unlikely(pair[i] >= kLocalVm)) {
      unpaired(cand[i], pair[i]);
      continue;
    }
    lens[q] = fabric_len(pair[i], cand[i]);
    flows[q] = flow(i);
    pair[q] = pair[i];
    cand[q++] = cand[i];
  }
  bool accepted[TxBuffer::kCap];
  s.sched.enqueue_burst(pair, flows, cand, lens, q, accepted);
  for (uint32_t i = 0; i < q; ++i)
    if (likely(accepted[i])) {
      s.on_enqueued(pair[i], now);
    } else {
      s.stats.drop(port, Drop::queue_full);
      rte_pktmbuf_free(cand[i]);
    }
}

}  // namespace ufab::pipeline::vm_burst
