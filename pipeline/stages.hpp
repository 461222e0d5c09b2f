// The stages of ufab-edge's data path, one file each, in the style of DPDK's
// qos_sched (one function per role, burst loops):
//   dispatch.cpp    RX burst of a port this worker is the RX lcore of; frames of
//                   another worker's VMs/pairs to its ring; this worker's ring;
//                   the TX rings of ports this worker transmits for
//   vm_rx.cpp       VM-side frames -> classify (cache, rte_hash) -> scheduler enqueue
//   vm_arp.cpp      a VM's ARP request answered in a remote VM's name (proxy ARP)
//   vm_ipv6.cpp     a VM's IPv6 frames: gathered, classified (cache, rte_hash) and queued; neighbour
//                   solicitations answered (vm_burst.hpp: the steps both families share)
//   vm_local.cpp    a VM's frame for another local VM of its tenant, to that VM's port
//   vm_too_big.cpp  a VM's frame above the VM MTU: dropped, answered with an ICMP too-big
//   sched_tx.cpp    scheduler dequeue under each pair's window -> encap -> fabric TX
//   control_tx.cpp  a pair's control messages (probe every L_w bytes, queries,
//                   finish) into fresh mbufs; a pair's window and acks into the scheduler
//   fabric_rx.cpp   fabric frames -> decap to the VM port, reflect probes,
//                   responses to their VmPair
//   control_tick.cpp  the worker's tick: tokens from the control lcore in,
//                   VmPair::poll, token inputs out (Alg. 1 runs in control.cpp)
// Pollers return the frames they handled (0 = idle).
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>

#include "control/clock.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "pipeline/edge_state.hpp"
#include "pipeline/vlan.hpp"

namespace ufab::pipeline {

uint32_t poll_port(EdgeState& s, uint16_t port, Nanos now);
uint32_t poll_ring(EdgeState& s, Nanos now);
uint32_t drain_tx_rings(EdgeState& s);

void vm_frames(EdgeState& s, uint16_t port, rte_mbuf* const* pkts, uint16_t n, Nanos now);
// A VM's ARP frame, its tenant's tags (`tags`) stripped: answered in a
// remote VM's name on `port`, or dropped (vm_arp.cpp, proxy ARP).
void vm_arp(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags);
// The local VM behind `port` and tags that sent frame d (len bytes, tags
// still on) by its IPv4 or IPv6 source address; HashTable::kMiss for none
// (dispatch.cpp).
uint32_t sending_vm(const EdgeState& s, uint16_t port, const uint8_t* d, uint32_t len, VlanTags tags);
// A VM's frame, tags still on, that may be above the VM MTU
// (EdgeConfig::max_vm_frame, untagged), or one in several segments:
// dropped as too_big and, where too_big.hpp says so, its source is the
// local VM behind the port (sending_vm) and this worker's limiter allows,
// answered on `port` with an ICMP too-big in a fresh mbuf
// (ptb_sent, generated); a multi-segment frame within the MTU is malformed.
void vm_too_big(EdgeState& s, uint16_t port, rte_mbuf* m, Nanos now);
// A VM's IPv6 frame, tags stripped likewise: a neighbour solicitation
// answered or dropped, a malformed frame dropped, any other frame gathered
// into s.burst6 with its key (vm_ipv6.cpp); vm_ipv6_burst then classifies
// the gathered frames together and queues them or sends them at once.
// vm_frames calls both, and s.burst6 is empty again when it returns.
void vm_ipv6(EdgeState& s, uint16_t port, rte_mbuf* m, VlanTags tags);
void vm_ipv6_burst(EdgeState& s, uint16_t port, Nanos now);
// Between two local VMs of a tenant (vm_local.cpp; no VM-pair joins them):
// the other local VM of local VM `from`'s tenant at IPv4 address ip
// (network order) or IPv6 address ip6, kMiss when none. local_peer_of
// names the sender by its frame's (port, tags, source address) as vm_src
// does, so a frame with another VM's source address has no peer.
uint32_t local_peer(const EdgeState& s, uint32_t from, uint32_t ip);
uint32_t local_peer6(const EdgeState& s, uint32_t from, const uint8_t* ip6);
uint32_t local_peer_of(const EdgeState& s, const ClassifyKey& k);
uint32_t local_peer_of6(const EdgeState& s, const Classify6Key& k);
// What a VM frame's classification gives for a key no pair has but a
// local VM does (local_peer_of, local_peer_of6): kLocalVm | that VM, cached
// like a pair (vm_rx.cpp, vm_ipv6.cpp). Pair indices stay below it.
inline constexpr uint32_t kLocalVm = 1u << 31;
static_assert(HashTable::kMiss >= kLocalVm);
// A VM's frame (tags stripped) that no pair takes, when local_peer_of named
// local VM `to`: to its port, counted as local_delivered (or no_headroom).
void deliver_local(EdgeState& s, uint16_t port, rte_mbuf* m, uint32_t to);
// A tenant's frame to local VM vm's port with its tenant's tags (fabric_rx's
// decapsulation, deliver_local); false when there is no headroom for them
// (m is still the caller's).
inline bool to_vm_port(EdgeState& s, uint32_t vm, rte_mbuf* m) {
  const edge::VmCfg& to = s.cfg.vms[vm];
  if (unlikely(!insert_tenant_tags(m, to.svlan, to.vlan))) return false;
  s.tx[to.port].push(m);
  return true;
}
void fabric_frames(EdgeState& s, uint16_t port, rte_mbuf* const* pkts, uint16_t n, Nanos now);
uint32_t sched_tx(EdgeState& s, Nanos now);
// Data frames the scheduler let go (dequeued, or bypassed on arrival) to the
// fabric: encapsulated with the pair's active path, charged to the pair,
// into the TX buffer of the path's fabric port; then each pair's due probe.
// prefetched: the caller already fetched each pair's hot lines, PairMeta
// and sent history slot (VmPair::prefetch_state, prefetch_history; vm_rx
// does for the frames it bypasses).
void send_data(EdgeState& s, rte_mbuf* const* pkts, const uint32_t* lens, const uint32_t* ids, size_t n, Nanos now,
               bool prefetched = false);
// With window gating off (benchmarks only, edge/config.hpp) send_data clears
// a pair's in-flight count in the scheduler once it reaches this many bytes,
// so the open window (kMaxWindow, ~4 GB) is never reached: only the pair's
// polls (refresh_window) cleared it before, and at `bench edge`'s 1 s period
// one pair of 1500 B frames filled it within the second (2.5 Mpps where 12
// were possible). Clearing it per frame instead cost ~5% of the data path.
inline constexpr uint32_t kOpenWindowClear = 1u << 24;

// Sends whatever control messages the pair has due (at most one per path plus one).
void control_tx(EdgeState& s, uint32_t pair, Nanos now);
// Pushes the pair's newly acknowledged bytes and its current window into the scheduler.
void refresh_window(EdgeState& s, uint32_t pair, Nanos now);

// Algorithm 1 exchange (token_share.hpp): the control lcore's phi_S into the
// pairs; the pairs' activity, rate and phi_D out.
void apply_tokens(EdgeState& s);
void publish_tokens(EdgeState& s);
// A time bound on one poll_pairs call (params.pair_poll_max_share, worker.cpp):
// the call stops once `clock` reads `until` or later, checked after every
// kPollGroup pairs, so it polls at least one group. No clock: no time bound.
struct PollLimit {
  static constexpr size_t kPollGroup = 8;
  const dpdk::TscClock* clock = nullptr;
  Nanos until = 0;
};
// params.pair_poll_max_share as a budget of time (worker.cpp run_polls): the
// credit grows by `share` ns per ns that passes, up to `depth` (share of one
// token period), and a call spends what it took. A call starts only with
// credit left and may take all of it (PollLimit), overshooting by at most
// one group of pairs; the overshoot is owed, and the calls wait until the
// credit is positive again. So over any stretch the timers take at most
// `share` of it, plus the depth and one group. (A limit per call of share /
// (1 - share) of the time since the last one, without the debt, let the
// first group of every call through: 8 polls of a few cold lines each
// overran the bound in every iteration.)
struct PollCredit {
  double share = 1.0;
  double depth = 0;   // ns
  double credit = 0;  // ns of timer work allowed now; negative: owed
  Nanos at = 0;       // when credit last grew
  PollCredit() = default;
  PollCredit(double s, Nanos period) : share(s), depth(s * static_cast<double>(period)), credit(depth) {}
  bool bounded() const { return share < 1.0; }
  void grow(Nanos now) {
    if (now <= at) return;
    credit = std::min(depth, credit + static_cast<double>(now - at) * share);
    at = now;
  }
  // The call starting at `now` (after grow(now)); none when nothing is left.
  bool may_poll() const { return credit > 0; }
  PollLimit limit(const dpdk::TscClock* clock, Nanos now) const { return {clock, now + static_cast<Nanos>(credit)}; }
  void spend(Nanos took) { credit -= static_cast<double>(took); }
};
// The pairs' timers (VmPair::poll), windows, due control messages, history:
// the pairs collected as due, at most s.poll_budget() per call and within
// `limit` (the rest at the next calls, s.due_pending(); a new collection
// once all are done).
void poll_pairs(EdgeState& s, Nanos now, const PollLimit& limit = {});
void ack_sweep(EdgeState& s, Nanos now);
// Arms the pair's timer at its next deadline (after an event changed it).
void rearm(EdgeState& s, uint32_t pair, Nanos now);

}  // namespace ufab::pipeline
