// The μFAB-E Packet Scheduler as a data structure (paper §4.1, Figure 8;
// design-notes §1, §4.7, §5). Generic over the packet handle (rte_mbuf* in the
// DPDK pipeline, the ns-3 model's packet, the FPGA golden model's descriptor).
//
// Three levels, as in §4.1 "μFAB-E workflow":
//  1. WFQ over kWeightClasses (8) weight classes. "Scaling to a large number of
//     VFs": the WFQ engine has only 8 weighted queues; each tenant (VF) is
//     mapped to one class (sched/weight_class.hpp) and tenants in the same
//     class are served round robin. For this to give the same result as
//     per-tenant WFQ, the *effective* weight of a class is
//         class_weight * (number of its tenants that are backlogged-and-eligible)
//     so a tenant in a class of weight w gets a share proportional to w, no
//     matter how many tenants share its class.
//     The WFQ is start-time fair queueing (SFQ) in bytes with integer virtual
//     time: each active class has a tag `pass` (its next start tag); the class
//     with the least tag sends; the virtual time becomes that tag and the tag
//     advances by len * kStrideScale / effective_weight. A class that becomes
//     active again restarts at max(its old finish tag, virtual time), so an
//     idle class neither accumulates credit (no burst on return) nor holds
//     back the others (work conservation).
//  2. Round robin over the tenant's VM-pairs, gated by each pair's sending
//     window (§3.4): a pair is eligible iff it has a packet and
//         window > 0  and  (inflight == 0  or  inflight + head_len <= window),
//     where head_len is the length of the packet it would send next (or,
//     with window_whole_packets, inflight < window: rounded up). A pair
//     with window 0 never sends; a pair whose window is positive but smaller
//     than its next packet may send that one packet when nothing is in flight
//     (otherwise it could never make progress). Ineligible pairs are parked
//     outside the round-robin ring and re-inserted only by set_window() or
//     on_acked(); dequeue never looks at them.
//     Optionally a pair is also paced (sched/pair_pacing.hpp): with a rate
//     set by set_pair_rate() (the edge uses w / T) it may send its next
//     packet only from its eligible time on. A pair that must wait is parked
//     (kPaced) in a min-heap by eligible time, out of the ring like a blocked
//     pair, and the other pairs keep the link busy (work conservation); the
//     timed dequeue calls put the pairs that became due back at the end of
//     their tenant's round (earliest first, ties to the lower pair id), then
//     check their window. Pairs without a rate are never paced. Until some
//     pair has a rate, dequeue runs a copy of its loop without any pacing
//     code (pop<false>; chosen once per dequeue or burst).
//  3. Round robin over the pair's flows, each flow a FIFO (avoids head-of-line
//     blocking between the pair's application flows, §4.1).
//
// Round-robin rings are intrusive, index-linked (uint32) circular lists. An
// element that becomes active joins its ring just before the ring's cursor,
// i.e. at the end of the current round. Round robin is per packet, as in the
// hardware: tenants in one class (pairs of one tenant, flows of one pair)
// receive equal packet counts, hence equal bytes when their packets have the
// same size distribution.
//
// Memory: all of it is allocated by the constructor, in one block (one
// allocation, 64-byte aligned; on Linux, when it is large, mapped 2 MiB
// aligned and advised for transparent huge pages, sched/huge_pages.hpp, so
// that the random per-pair accesses of the data path do not miss the TLB); enqueue and dequeue never
// allocate, lock or make system calls, and cost O(1) (the WFQ's choice is the root of
// a tournament tree over the 8 class keys, updated along one path). Packets sit in one shared pool of descriptors {handle, len, next}
// linked into per-flow FIFOs; the pool's free list is LIFO, so the
// descriptors in use stay few and cache-hot however many flows exist (a ring
// per flow would touch a distinct cache line per backlogged flow). A flow
// holds at most queue_capacity packets; the pool (by default
// max_pairs * flows_per_pair * queue_capacity descriptors) bounds the total.
// Per-pair state is packed into 32 bytes, per-flow state into 16, and a
// pair's flows share one cache line when flows_per_pair <= 4 (their block is
// padded to 1, 2 or 4 records and line aligned), so a packet touches at most
// a pair line, a flow line and a descriptor or two.
//
// Latency hiding (hints only; the schedule does not depend on them): memory
// latency, not instructions, dominates at the edge's scale (8K pairs), so
//  - dequeue prefetches, along each class's round-robin order, the pair and
//    flow lines of the tenant served four turns on and the head descriptor
//    of the one served two turns on (the order is known in advance);
//  - enqueue_burst() prefetches the pair and flow lines of packet i + d, then
//    enqueues packet i, so the misses of a burst overlap. (A second stage that
//    also fetched the tail descriptor of packet i + d/2 made the burst 8%
//    slower, measured paired in one process: the descriptors in use are few
//    and hot, and that stage must load the flow line to find the tail.)
//  - the per-packet outcomes that are random (was the flow empty? is it
//    still backlogged? is the pair's flow round empty?) are resolved with
//    selected stores instead of branches: a mispredicted branch that waits on
//    a cache miss also throws away the independent work queued behind it.
// One instance belongs to one core (design-notes §5).
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "sched/huge_pages.hpp"
#include "sched/pair_pacing.hpp"
#include "sched/weight_class.hpp"

namespace ufab {

struct HierSchedulerConfig {
  uint32_t max_tenants = 1024;   // tenant ids are 0 .. max_tenants-1
  uint32_t max_pairs = 8192;     // pair ids are 0 .. max_pairs-1
  uint32_t flows_per_pair = 4;   // flow ids are 0 .. flows_per_pair-1
  uint32_t queue_capacity = 64;  // packets per flow FIFO (a power of two is customary, not required)
  uint32_t pool_packets = 0;     // packets queued in total; 0: max_pairs * flows_per_pair * queue_capacity
  uint64_t pace_depth_ns = 0;    // paced pairs: burst allowance, ns of the pair's rate (pair_pacing.hpp)
  // The window gate admits a packet while inflight < window (the window
  // rounded up to whole packets; in flight exceeds it by less than one
  // packet) instead of inflight + len <= window. For paced pairs, whose rate
  // is the pace w / T: a window of a few packets otherwise loses up to one
  // packet per RTT to rounding down (pair_pacing.hpp).
  bool window_whole_packets = false;
};

struct HierSchedulerCounters {
  // Packet and byte counts are not adjacent per direction: GCC packs an
  // adjacent (packets, bytes) pair into one vector add with shuffles, 11
  // more instructions per enqueue+dequeue (callgrind, ufab-sched-steady).
  uint64_t enqueued = 0;         // packets accepted by enqueue()
  uint64_t dequeued = 0;
  uint64_t enqueued_bytes = 0;
  uint64_t dequeued_bytes = 0;
  uint64_t dropped_full = 0;     // enqueue() on a full flow FIFO or an exhausted pool
  uint64_t dropped_invalid = 0;  // unknown pair/flow, len 0 or len > kMaxPacketLen
  uint64_t bypassed = 0;         // sent on arrival without queuing (try_bypass; also in enqueued and dequeued)
  uint64_t flushed = 0;          // packets flush_pair() took out (a pair being removed; also in enqueued)
  uint64_t flushed_bytes = 0;
};

enum class PairState : uint8_t {
  kUnused,   // not added
  kIdle,     // no backlog
  kActive,   // backlog and eligible: in its tenant's ring
  kBlocked,  // backlog but its window does not admit its next packet: parked
  kPaced,    // backlog, but its pacing rate makes it wait until its eligible time: parked
};

template <typename Pkt>
  requires std::movable<Pkt> && std::default_initializable<Pkt>
class HierScheduler {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kMaxPacketLen = 65535;
  static constexpr uint32_t kMaxTenants = 1u << 20;
  static constexpr uint32_t kMaxFlowsPerPair = 65535;
  // Per-pair bytes (window, in flight, backlog) are 32-bit: windows are capped
  // here (4 GiB - 64 KiB, far above 3 BDP), so inflight + len cannot wrap.
  static constexpr uint64_t kMaxWindow = UINT32_MAX - kMaxPacketLen;
  // A pair's window in bytes (a VmPair's double, Eqn 3) as set_window takes
  // it, so that the gate admits a packet with nothing in flight exactly when
  // the window is positive, as the VmPair counts it (not window-blocked, so
  // it probes only once data left):
  //  - 0 < w < 1 is 1, not 0: a window of 0 held such a pair back for good,
  //    with no probe to learn a new one (Eqn 3 gives such windows under
  //    deep queues or a large Phi_l);
  //  - +inf (a path whose links all report an unknown capacity sets no
  //    bound, control/window.hpp) and anything from kMaxWindow up are
  //    kMaxWindow: a double of 2^64 or more has no uint64_t value (the
  //    conversion is undefined; x86 gives 0 for +inf);
  //  - w <= 0 and NaN are 0.
  static uint64_t window_bytes(double w) {
    if (w >= static_cast<double>(kMaxWindow)) return kMaxWindow;
    if (w >= 1) return static_cast<uint64_t>(w);
    return w > 0 ? 1 : 0;
  }
  // Virtual time per byte at effective weight 1. With class weight <= 2^12
  // and <= 2^20 active tenants the stride is >= 2^8 (rounding <= 0.4%; 1e-8
  // at 1K tenants of weight 128), and one packet (< 2^16 B) advances a tag by
  // < 2^56, so tags stay below 2^60 with the rebase at kRebaseAt and
  // (tag << 3 | class) fits in 64 bits: the WFQ's selection key, whose
  // minimum is the least tag with ties to the lower class. The stride is a
  // product of two 2^31-scaled reciprocals (no division on the data path).
  static constexpr uint64_t kStrideScale = uint64_t{1} << 40;
  static constexpr uint64_t kRebaseAt = uint64_t{1} << 59;
  // enqueue_burst's prefetch distance (packets).
  static constexpr size_t kEnqueuePrefetch = 4;

  // Throws std::invalid_argument on a bad config. Class weights start at
  // 1, 2, 4, ..., 128 (WeightClassMap's default).
  explicit HierScheduler(const HierSchedulerConfig& cfg) : cfg_(cfg) {
    if (cfg.max_tenants == 0 || cfg.max_tenants > kMaxTenants || cfg.max_pairs == 0 ||
        cfg.max_pairs >= kNone || cfg.flows_per_pair == 0 || cfg.flows_per_pair > kMaxFlowsPerPair) {
      throw std::invalid_argument("HierScheduler: bad tenant/pair/flow limits");
    }
    // Bounds a pair's backlog below 2^32 bytes.
    if (cfg.queue_capacity == 0 || uint64_t{cfg.queue_capacity} * cfg.flows_per_pair > (1u << 16)) {
      throw std::invalid_argument("HierScheduler: need 1 <= queue_capacity * flows_per_pair <= 65536");
    }
    // A pair's flow records: 1, 2 or 4 per cache line, or a multiple of 4.
    flow_stride_ = cfg.flows_per_pair <= 4 ? std::bit_ceil(cfg.flows_per_pair) : (cfg.flows_per_pair + 3) & ~3u;
    const uint64_t flows = uint64_t{cfg.max_pairs} * flow_stride_;
    const uint64_t pool =
        cfg.pool_packets != 0 ? cfg.pool_packets : uint64_t{cfg.max_pairs} * cfg.flows_per_pair * cfg.queue_capacity;
    if (flows >= kNone || pool >= kNone) {
      throw std::invalid_argument("HierScheduler: more than 2^32 - 1 flows or packets");
    }
    pool_ = static_cast<uint32_t>(pool);
    allocate(static_cast<size_t>(flows));
    pace_ = PairPacing(cfg.max_pairs, cfg.pace_depth_ns);
    for (uint32_t i = 0; i < pool_; ++i) descs_[i].link.next = i + 1 == pool_ ? kNone : i + 1;
    free_ = 0;
    for (uint32_t n = 1; n <= cfg.max_tenants; ++n) inv_active_[n] = (1u << 31) / n;
    for (uint32_t c = 0; c < kWeightClasses; ++c) set_class_weight(c, 1u << c);
  }
  HierScheduler(HierScheduler&&) noexcept = default;
  HierScheduler& operator=(HierScheduler&&) noexcept = default;
  HierScheduler(const HierScheduler& o)
    requires std::copyable<Pkt>
      : HierScheduler(o.cfg_) {
    copy_state(o);
  }
  HierScheduler& operator=(const HierScheduler& o)
    requires std::copyable<Pkt>
  {
    if (this != &o) *this = HierScheduler(o);
    return *this;
  }
  ~HierScheduler() = default;

  // ---- tenants and weight classes (control path) ----

  bool add_tenant(uint32_t tenant, uint32_t cls) {
    if (tenant >= cfg_.max_tenants || cls >= kWeightClasses || tenants_[tenant].exists) return false;
    tenants_[tenant] = Tenant{};
    tenants_[tenant].exists = true;
    tenants_[tenant].cls = cls;
    return true;
  }
  // Only a tenant without pairs can be removed.
  bool remove_tenant(uint32_t tenant) {
    if (!has_tenant(tenant) || tenants_[tenant].pairs != 0) return false;
    tenants_[tenant].exists = false;
    return true;
  }
  // Moves a tenant to another class; if it is active it joins the end of the
  // new class's round.
  bool set_tenant_class(uint32_t tenant, uint32_t cls) {
    if (!has_tenant(tenant) || cls >= kWeightClasses) return false;
    Tenant& t = tenants_[tenant];
    if (t.cls == cls) return true;
    const bool active = t.cursor != kNone;
    if (active) deactivate_tenant(tenant);
    t.cls = cls;
    if (active) activate_tenant(tenant);
    return true;
  }
  bool set_class_weight(uint32_t cls, uint32_t weight) {
    if (cls >= kWeightClasses || weight == 0 || weight > kMaxClassWeight) return false;
    classes_[cls].weight = weight;
    classes_[cls].inv_weight = (1u << 31) / weight;
    restride(classes_[cls]);
    return true;
  }
  // Applies WeightClassMap::class_weights() to the 8 classes.
  void set_class_weights(const WeightClassMap& map) {
    for (uint32_t c = 0; c < kWeightClasses; ++c) set_class_weight(c, map.class_weights()[c]);
  }
  bool has_tenant(uint32_t tenant) const {
    return tenant < cfg_.max_tenants && tenants_[tenant].exists;
  }
  uint32_t class_weight(uint32_t cls) const { return cls < kWeightClasses ? classes_[cls].weight : 0; }
  uint32_t tenant_class(uint32_t tenant) const { return has_tenant(tenant) ? tenants_[tenant].cls : kNone; }
  // Tenants of the class that are backlogged-and-eligible (the multiplier of
  // the class weight).
  uint32_t active_tenants(uint32_t cls) const { return cls < kWeightClasses ? classes_[cls].active : 0; }

  // ---- VM-pairs (control path) ----

  // window is clamped to kMaxWindow.
  bool add_pair(uint32_t pair, uint32_t tenant, uint64_t window = 0) {
    if (pair >= cfg_.max_pairs || pairs_[pair].state != PairState::kUnused || !has_tenant(tenant)) {
      return false;
    }
    Pair& pr = pairs_[pair];
    pr = Pair{};
    pr.tenant = tenant;
    pr.window = clamp_window(window);
    pr.state = PairState::kIdle;
    ++tenants_[tenant].pairs;
    return true;
  }
  // Only an empty pair can be removed (its in-flight count is forgotten).
  bool remove_pair(uint32_t pair) {
    if (pair >= cfg_.max_pairs || pairs_[pair].state != PairState::kIdle) return false;
    --tenants_[pairs_[pair].tenant].pairs;
    pairs_[pair] = Pair{};
    pace_.reset(pair);
    return true;
  }
  // Takes every packet the pair holds out of its flows, oldest first per
  // flow and the flows in their round's order, handing each to
  // drop(Pkt&&, uint32_t len), and leaves the pair idle with nothing in
  // flight: the first step of removing a pair that still has backlog (a
  // remote VM gone at runtime; remove_pair() then succeeds). Out of its
  // tenant's round, the pace heap and the window's parking lot, whichever
  // held it; the counts balance with the packets counted as flushed.
  // Control path. Returns the packets flushed.
  template <typename F>
  uint32_t flush_pair(uint32_t pair, F&& drop) {
    if (!has_pair(pair)) return 0;
    Pair& pr = pairs_[pair];
    if (pr.state == PairState::kActive) deactivate_pair(pair, PairState::kIdle);
    pace_.unpark(pair);  // kPaced
    uint32_t n = 0;
    Flow* const fl = pair_flows(pair);
    for (uint16_t f = pr.flow_head; f != kNone16;) {
      Flow& flow = fl[f];
      Link at = flow.link;
      for (uint16_t k = 0; k < flow.count; ++k) {
        Desc& d = descs_[at.next];
        const uint32_t di = at.next, len = at.len;
        at = d.link;
        drop(std::move(d.pkt), len);
        d.pkt = Pkt{};
        d.link.next = free_;
        free_ = di;
        ++ctr_.flushed;
        ctr_.flushed_bytes += len;
        ++n;
      }
      const uint16_t next = flow.next;
      flow = Flow{};
      f = next;
    }
    pr.flow_head = kNone16;
    pr.backlog_bytes = 0;
    pr.inflight = 0;
    pr.state = PairState::kIdle;
    return n;
  }
  // bytes is clamped to kMaxWindow.
  bool set_window(uint32_t pair, uint64_t bytes) {
    if (!has_pair(pair)) return false;
    pairs_[pair].window = clamp_window(bytes);
    recheck(pair);
    return true;
  }
  // inflight -= bytes, saturating at 0.
  bool on_acked(uint32_t pair, uint64_t bytes) {
    if (!has_pair(pair)) return false;
    Pair& pr = pairs_[pair];
    pr.inflight = bytes >= pr.inflight ? 0 : pr.inflight - static_cast<uint32_t>(bytes);
    recheck(pair);
    return true;
  }
  // Paces the pair at bytes_per_s from its next packet on (<= 0: not paced).
  // A pair already waiting keeps the eligible time its last packet gave it.
  // Control path: one division here, none per packet.
  bool set_pair_rate(uint32_t pair, double bytes_per_s) {
    if (!has_pair(pair)) return false;
    pace_.set_rate(pair, bytes_per_s);
    pacing_on_ = pacing_on_ || pace_.paced(pair);
    return true;
  }
  // When the pair may send its next packet (ns; meaningful while paced).
  uint64_t pair_eligible_at(uint32_t pair) const { return has_pair(pair) ? pace_.eligible_at(pair) : 0; }
  // The earliest time a paced pair becomes eligible; UINT64_MAX when no pair waits.
  uint64_t next_pace_release() const { return pace_.next_release(); }
  // Moves the scheduler's clock to now (it never goes back) and returns the
  // pairs whose eligible time has come to their rings (or, if their window is
  // full, to kBlocked). The timed dequeue calls do this first.
  void advance(uint64_t now) {
    if (now > now_) now_ = now;
    for (uint32_t p; pace_.release(now_, p);) {
      Pair& pr = pairs_[p];
      if (head_fits(pair_flows(p), pr)) {
        activate_pair(p);
      } else {
        pr.state = PairState::kBlocked;
      }
    }
  }
  uint64_t now() const { return now_; }
  bool has_pair(uint32_t pair) const {
    return pair < cfg_.max_pairs && pairs_[pair].state != PairState::kUnused;
  }
  PairState pair_state(uint32_t pair) const {
    return pair < cfg_.max_pairs ? pairs_[pair].state : PairState::kUnused;
  }
  uint32_t pair_tenant(uint32_t pair) const { return has_pair(pair) ? pairs_[pair].tenant : kNone; }
  uint64_t inflight(uint32_t pair) const { return has_pair(pair) ? pairs_[pair].inflight : 0; }
  // inflight() of a pair the caller knows to be in use (one it just dequeued or bypassed).
  uint64_t inflight_of_used(uint32_t pair) const { return pairs_[pair].inflight; }
  uint64_t window(uint32_t pair) const { return has_pair(pair) ? pairs_[pair].window : 0; }
  uint64_t backlog_bytes(uint32_t pair) const { return has_pair(pair) ? pairs_[pair].backlog_bytes : 0; }
  uint32_t backlog_packets(uint32_t pair) const {
    if (!has_pair(pair)) return 0;
    uint32_t n = 0;
    for (uint32_t f = 0; f < cfg_.flows_per_pair; ++f) n += flows_[flow_index(pair, f)].count;
    return n;
  }

  // ---- data path ----

  // Appends pkt to flow `flow` of `pair`. False (and a counted drop) if the
  // flow's FIFO is full, the pool is exhausted or the arguments are invalid;
  // pkt then stays the caller's to free.
  bool enqueue(uint32_t pair, uint32_t flow, Pkt pkt, uint32_t len) {
    if (pair >= cfg_.max_pairs || flow >= cfg_.flows_per_pair || len - 1 >= kMaxPacketLen ||  // len 1 .. 65535
        pairs_[pair].state == PairState::kUnused) {
      ++ctr_.dropped_invalid;
      return false;
    }
    Pair& pr = pairs_[pair];
    Flow* const fl = pair_flows(pair);
    Flow& f = fl[flow];
    if (f.count == cfg_.queue_capacity || free_ == kNone) {
      ++ctr_.dropped_full;
      return false;
    }
    const uint32_t d = free_;
    Desc& desc = descs_[d];
    free_ = desc.link.next;
    desc.pkt = std::move(pkt);
    desc.link.next = kNone;
    // The new packet is linked after the flow's tail or, if the flow was
    // empty, becomes its head, and the flow joins the end of the pair's flow
    // round. Written without branches (selected stores; f.tail and
    // pr.flow_tail always name valid records): which case applies is random
    // per packet, and a mispredicted branch waiting on this cache miss would
    // also discard the independent work behind it.
    const bool was_empty = f.count == 0;
    const uint16_t fid = static_cast<uint16_t>(flow);
    Link& at = *pick(was_empty, &f.link, &descs_[f.tail].link);
    at.next = d;
    at.len = len;
    f.tail = d;
    ++f.count;
    uint16_t* const round_end = pick(pr.flow_head == kNone16, &pr.flow_head, &fl[pr.flow_tail].next);
    *pick(was_empty, round_end, &scratch16_) = fid;
    f.next = pick16(was_empty, kNone16, f.next);
    pr.flow_tail = pick16(was_empty, fid, pr.flow_tail);
    pr.backlog_bytes += len;
    ++ctr_.enqueued;
    ctr_.enqueued_bytes += len;
    if (pr.state == PairState::kIdle) wake(pair);  // its new packet is its next one
    return true;
  }

  // The same as enqueue(pairs[i], flows[i], std::move(pkts[i]), lens[i]) for
  // i = 0 .. n-1 in order (same schedule, counters and drops), pipelined so
  // that the cache misses of the burst overlap (see the header comment).
  // accepted[i] (if accepted is not null) receives enqueue's result; pkts[i]
  // is moved from only if it was accepted. Returns the number accepted.
  size_t enqueue_burst(const uint32_t* pairs, const uint32_t* flows, Pkt* pkts, const uint32_t* lens,
                       size_t n, bool* accepted = nullptr) {
    return burst<false>(pairs, flows, pkts, lens, n, nullptr, accepted, nullptr);
  }

  // Bypass (as Linux's qdiscs bypass an empty queue, TCQ_F_CAN_BYPASS): a
  // packet for `pair` may leave at once, without being queued, when no pair
  // is eligible (every round is empty, so this packet would be the next
  // dequeue() whatever the weights), pacing is off, the pair has nothing
  // queued and its window admits the packet. It is then charged as dequeue()
  // would charge it (in-flight bytes; enqueued, dequeued and bypassed
  // counts) and true is returned: the packet stays the caller's to send. The
  // WFQ start tags and virtual time do not advance for it (as for a packet
  // that never met contention). False: enqueue() it as usual.
  bool try_bypass(uint32_t pair, uint32_t len) {
    if (!take_bypass(pair, len)) return false;
    count_bypassed(1, len);
    return true;
  }
  // try_bypass() in two parts, for a caller that decides a burst packet by
  // packet and counts once (as enqueue_or_bypass_burst does; the edge's
  // vm_rx): take_bypass() charges the pair's in-flight bytes and is true if
  // the packet may leave; count_bypassed() then adds the packets and bytes
  // so taken to the enqueued, dequeued and bypassed counts.
  bool take_bypass(uint32_t pair, uint32_t len) {
    return bypass_possible() && pair < cfg_.max_pairs && take_bypass_open(pair, len);
  }
  // take_bypass() for a caller that has just seen bypass_possible() true
  // (nothing enqueued since) and names a pair < max_pairs: the two tests it
  // would repeat for every packet of a burst (the edge's vm_rx).
  [[gnu::always_inline]] bool take_bypass_open(uint32_t pair, uint32_t len) {
    if (len - 1 >= kMaxPacketLen) return false;
    Pair& pr = pairs_[pair];
    if (pr.state != PairState::kIdle || !fits(pr, len)) return false;
    pr.inflight += len;
    return true;
  }
  void count_bypassed(uint64_t packets, uint64_t bytes) {
    ctr_.enqueued += packets;
    ctr_.dequeued += packets;
    ctr_.bypassed += packets;
    ctr_.enqueued_bytes += bytes;
    ctr_.dequeued_bytes += bytes;
  }
  // Whether any packet may bypass now (no pair eligible, pacing off):
  // enqueue() alone cannot make it true, so a burst that starts without it
  // bypasses nothing.
  bool bypass_possible() const { return active_mask_ == 0 && !pacing_on_; }
  // enqueue_burst() with try_bypass() first for each packet the caller
  // allows to bypass (may_bypass[i]; every packet when may_bypass is null),
  // in order: bypassed[i] says packet i
  // left at once (pkts[i] stays the caller's, and accepted[i] is true); else
  // it was enqueued (accepted[i] as enqueue()'s result). A packet enqueued
  // as eligible ends the bypasses of the burst (the rounds are no longer
  // empty). Returns the number accepted.
  size_t enqueue_or_bypass_burst(const uint32_t* pairs, const uint32_t* flows, Pkt* pkts, const uint32_t* lens,
                                 size_t n, const bool* may_bypass, bool* accepted, bool* bypassed) {
    return burst<true>(pairs, flows, pkts, lens, n, may_bypass, accepted, bypassed);
  }

  // Sends one packet: WFQ picks a class, RR a tenant of the class, RR an
  // eligible pair of the tenant, RR a flow of the pair. Charges the pair's
  // in-flight bytes with len (and a paced pair's eligible time, at the
  // scheduler's clock: the last advance()). False if no pair is eligible.
  bool dequeue(Pkt& pkt, uint32_t& len, uint32_t& pair, uint64_t now) {
    advance(now);
    return dequeue(pkt, len, pair);
  }
  bool dequeue(Pkt& pkt, uint32_t& len, uint32_t& pair) {
    if (active_mask_ == 0) return false;
    Pkt out{};
    uint32_t l = 0;
    const uint32_t p = pacing_on_ ? pop<true>(out, l) : pop<false>(out, l);
    pkt = std::move(out);
    len = l;
    pair = p;
    return true;
  }

  // The same as calling dequeue() up to max times (same schedule and
  // counters), with the per-call overhead taken out of the loop.
  // The timed form: advance(now) first.
  size_t dequeue_burst(Pkt* pkts, uint32_t* lens, uint32_t* pair_ids, size_t max, uint64_t now) {
    advance(now);
    return dequeue_burst(pkts, lens, pair_ids, max);
  }
  size_t dequeue_burst(Pkt* pkts, uint32_t* lens, uint32_t* pair_ids, size_t max) {
    // Pacing is decided once per burst (only set_pair_rate() turns it on).
    return pacing_on_ ? pop_burst<true>(pkts, lens, pair_ids, max) : pop_burst<false>(pkts, lens, pair_ids, max);
  }

  // A hint for a caller about to read or change many pairs in turn (the
  // edge's timer sweep): fetches the pair's record. No effect on the
  // schedule. Always inlined, as the prefetch helpers below.
  [[gnu::always_inline]] void prefetch_pair(uint32_t pair) const {
    if (pair < cfg_.max_pairs) __builtin_prefetch(&pairs_[pair]);
  }

  uint64_t backlog_packets() const { return ctr_.enqueued - ctr_.dequeued - ctr_.flushed; }
  uint64_t backlog_bytes() const { return ctr_.enqueued_bytes - ctr_.dequeued_bytes - ctr_.flushed_bytes; }
  const HierSchedulerCounters& counters() const { return ctr_; }
  const HierSchedulerConfig& config() const { return cfg_; }

 private:
  static constexpr uint16_t kNone16 = UINT16_MAX;

  // The two burst enqueues' loop: prefetch packet i + d's lines, then
  // (kBypass: try_bypass where allowed, else) enqueue packet i.
  template <bool kBypass>
  size_t burst(const uint32_t* pairs, const uint32_t* flows, Pkt* pkts, const uint32_t* lens, size_t n,
               const bool* may_bypass, bool* accepted, bool* bypassed) {
    constexpr size_t d = kEnqueuePrefetch;
    for (size_t i = 0; i < n && i < d; ++i) prefetch_target(pairs[i], flows[i]);
    size_t ok = 0, nb = 0;
    uint64_t nb_bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i + d < n) prefetch_target(pairs[i + d], flows[i + d]);
      bool b = false;
      if constexpr (kBypass) {
        b = (may_bypass == nullptr || may_bypass[i]) && take_bypass(pairs[i], lens[i]);
        nb += b;
        nb_bytes += b ? lens[i] : 0;
      }
      const bool r = b || enqueue(pairs[i], flows[i], std::move(pkts[i]), lens[i]);
      if constexpr (kBypass) bypassed[i] = b;
      if (accepted != nullptr) accepted[i] = r;
      ok += r;
    }
    if constexpr (kBypass) count_bypassed(nb, nb_bytes);  // once per burst
    return ok;
  }
  static constexpr size_t kLine = 64;
  static_assert(kWeightClasses == 8, "the WFQ key packs the class into 3 bits");
  static constexpr uint64_t kClassMask = kWeightClasses - 1;
  static constexpr uint64_t kIdleKey = UINT64_MAX;
  static constexpr uint64_t key(uint64_t pass, uint32_t cls) { return pass << 3 | cls; }
  static constexpr uint64_t min2(uint64_t a, uint64_t b) { return a < b ? a : b; }
  // c ? a : b by masking, so that the compiler emits no branch (it turns
  // plain conditionals on the data path's random outcomes back into jumps).
  template <typename T>
  static T* pick(bool c, T* a, T* b) {
    const uintptr_t m = uintptr_t{0} - static_cast<uintptr_t>(c);
    return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(a) & m) | (reinterpret_cast<uintptr_t>(b) & ~m));
  }
  static uint16_t pick16(bool c, uint16_t a, uint16_t b) {
    const uint16_t m = static_cast<uint16_t>(0u - static_cast<unsigned>(c));
    return static_cast<uint16_t>((a & m) | (b & ~m));
  }

  // 32 bytes: two pairs per cache line.
  struct alignas(32) Pair {
    uint32_t window = 0;
    uint32_t inflight = 0;
    uint32_t backlog_bytes = 0;
    uint32_t tenant = kNone;
    uint32_t next = kNone;  // ring of the tenant's active pairs
    uint32_t prev = kNone;
    uint16_t flow_head = kNone16;  // FIFO of the pair's backlogged flows (local ids)
    uint16_t flow_tail = 0;        // its last flow; unspecified (but a valid id) when empty
    PairState state = PairState::kUnused;
  };
  // A link to a packet: its descriptor and its length. A packet's length is
  // kept where the scheduler reads it before the packet itself: in its
  // predecessor's link or, at the head, in the flow's (the window gate needs
  // no descriptor access).
  struct Link {
    uint32_t next = kNone;  // descriptor
    uint32_t len = 0;
  };
  // 16 bytes: a pair's flows (up to 4) fill one cache line.
  struct alignas(16) Flow {
    Link link;  // head of the descriptor FIFO
    uint32_t tail = 0;  // last descriptor; unspecified (but a valid index) when empty
    uint16_t count = 0;
    uint16_t next = kNone16;  // next backlogged flow of the same pair (local id)
  };
  struct Desc {
    Pkt pkt{};
    Link link;  // next in its flow's FIFO (or in the free list) and its length
  };
  struct Tenant {
    uint32_t next = kNone;  // ring of the class's active tenants
    uint32_t prev = kNone;
    uint32_t cursor = kNone;  // next pair to serve; kNone: no eligible pair
    uint32_t pairs = 0;
    uint32_t cls = 0;
    bool exists = false;
  };
  struct Class {
    uint64_t pass = 0;    // start tag of the class's next packet (SFQ)
    uint64_t stride = 0;  // ~ kStrideScale / (weight * active)
    uint32_t weight = 1;
    uint32_t inv_weight = 1u << 31;  // 2^31 / weight
    uint32_t active = 0;  // backlogged-and-eligible tenants
    uint32_t cursor = kNone;
  };
  static_assert(sizeof(Pair) == 32 && sizeof(Flow) == 16);
  static_assert(std::is_trivially_destructible_v<Pair> && std::is_trivially_destructible_v<Flow> &&
                std::is_trivially_destructible_v<Tenant>);

  // The constructor's single allocation; destroys the descriptors (and with
  // them any packet handles still queued) and frees the block.
  class Storage {
   public:
    Storage() = default;
    Storage(size_t bytes, size_t align)
        : mem_(static_cast<std::byte*>(huge_pages::allocate(bytes, align))), bytes_(bytes), align_(align) {}
    Storage(Storage&& o) noexcept { swap(o); }
    Storage& operator=(Storage&& o) noexcept {
      Storage gone(std::move(o));
      swap(gone);
      return *this;
    }
    ~Storage() {
      if (mem_ == nullptr) return;
      std::destroy_n(descs_, ndescs_);
      huge_pages::release(mem_, bytes_, align_);
    }
    std::byte* mem() const { return mem_; }
    void own_descs(Desc* d, size_t n) {
      descs_ = d;
      ndescs_ = n;
    }

   private:
    void swap(Storage& o) noexcept {
      std::swap(mem_, o.mem_);
      std::swap(bytes_, o.bytes_);
      std::swap(align_, o.align_);
      std::swap(descs_, o.descs_);
      std::swap(ndescs_, o.ndescs_);
    }
    std::byte* mem_ = nullptr;
    size_t bytes_ = 0;
    size_t align_ = kLine;
    Desc* descs_ = nullptr;
    size_t ndescs_ = 0;
  };

  // Lays out tenants, 1/n table, pairs, flows and descriptors in one block,
  // each array line aligned, and value-initialises them.
  void allocate(size_t nflows) {
    size_t off = 0;
    auto place = [&off](size_t bytes, size_t align) {
      align = align > kLine ? align : kLine;
      off = (off + align - 1) & ~(align - 1);
      const size_t at = off;
      off += bytes;
      return at;
    };
    const size_t nt = cfg_.max_tenants;
    const size_t o_tenants = place(nt * sizeof(Tenant), alignof(Tenant));
    const size_t o_inv = place((nt + 1) * sizeof(uint32_t), alignof(uint32_t));
    const size_t o_pairs = place(size_t{cfg_.max_pairs} * sizeof(Pair), alignof(Pair));
    const size_t o_flows = place(nflows * sizeof(Flow), alignof(Flow));
    const size_t o_descs = place(size_t{pool_} * sizeof(Desc), alignof(Desc));
    const size_t align = alignof(Desc) > kLine ? alignof(Desc) : kLine;
    // Transparent huge pages (sched/huge_pages.hpp): the data path's random
    // accesses to pairs, flows and descriptors then hit the TLB.
    storage_ = Storage((off + align - 1) & ~(align - 1), align);
    std::byte* const m = storage_.mem();
    tenants_ = make_array<Tenant>(m + o_tenants, nt);
    inv_active_ = make_array<uint32_t>(m + o_inv, nt + 1);
    pairs_ = make_array<Pair>(m + o_pairs, cfg_.max_pairs);
    flows_ = make_array<Flow>(m + o_flows, nflows);
    descs_ = make_array<Desc>(m + o_descs, pool_);
    storage_.own_descs(descs_, pool_);
  }
  template <typename T>
  static T* make_array(std::byte* at, size_t n) {
    T* const first = reinterpret_cast<T*>(at);
    std::uninitialized_value_construct_n(first, n);
    return std::launder(first);
  }
  // The copy constructor's body: this has o's configuration and fresh arrays.
  void copy_state(const HierScheduler& o) {
    std::copy_n(o.tenants_, cfg_.max_tenants, tenants_);
    std::copy_n(o.pairs_, cfg_.max_pairs, pairs_);
    std::copy_n(o.flows_, size_t{cfg_.max_pairs} * flow_stride_, flows_);
    std::copy_n(o.descs_, pool_, descs_);
    active_mask_ = o.active_mask_;
    free_ = o.free_;
    vtime_ = o.vtime_;
    std::copy_n(o.classes_, kWeightClasses, classes_);
    std::copy_n(o.tree_, 2 * kWeightClasses, tree_);
    ctr_ = o.ctr_;
    pace_ = o.pace_;
    pacing_on_ = o.pacing_on_;
    now_ = o.now_;
  }

  static uint32_t clamp_window(uint64_t w) {
    return static_cast<uint32_t>(w < kMaxWindow ? w : kMaxWindow);
  }
  Flow* pair_flows(uint32_t pair) const { return flows_ + size_t{pair} * flow_stride_; }
  uint32_t flow_index(uint32_t pair, uint32_t local) const { return pair * flow_stride_ + local; }
  // The window gate of level 2 (see the header comment). The pair (whose
  // flow records are fl) has backlog.
  // With cfg_.window_whole_packets the window is rounded up to whole
  // packets: the head may leave while inflight < window.
  bool head_fits(const Flow* fl, const Pair& pr) const { return fits(pr, fl[pr.flow_head].link.len); }
  // Whether the pair's window admits a packet of len bytes now.
  bool fits(const Pair& pr, uint32_t len) const {
    const uint32_t need = cfg_.window_whole_packets ? 1 : len;
    return pr.window != 0 && (pr.inflight == 0 || pr.inflight + need <= pr.window);
  }

  // dequeue()'s work (some class is active). The results go to the
  // caller's locals and are stored last: an output reference written early
  // could alias the scheduler's own fields and force reloads.
  // kPacing: some pair has had a rate (pacing_on_); without it the pacing
  // code is compiled out of the loop, so unpaced schedulers pay nothing.
  template <bool kPacing>
  size_t pop_burst(Pkt* pkts, uint32_t* lens, uint32_t* pair_ids, size_t max) {
    size_t n = 0;
    for (; n < max && active_mask_ != 0; ++n) {
      Pkt out{};
      uint32_t l = 0;
      const uint32_t p = pop<kPacing>(out, l);
      pkts[n] = std::move(out);
      lens[n] = l;
      pair_ids[n] = p;
    }
    return n;
  }
  template <bool kPacing>
  uint32_t pop(Pkt& out, uint32_t& out_len) {
    // Level 1: least start tag among active classes, ties to the lower class:
    // the least key, kept at the root of the tournament tree (idle classes
    // hold kIdleKey), so the class is known without a search.
    const uint32_t ci = static_cast<uint32_t>(tree_[1] & kClassMask);
    Class& c = classes_[ci];
    vtime_ = c.pass;
    if (vtime_ >= kRebaseAt) rebase();

    const uint32_t ti = c.cursor;
    Tenant& t = tenants_[ti];
    const uint32_t p = t.cursor;
    Pair& pr = pairs_[p];
    Flow* const fl = pair_flows(p);
    const uint16_t lf = pr.flow_head;
    Flow& f = fl[lf];
    const uint32_t d = f.link.next;
    const uint32_t len = f.link.len;
    Desc& desc = descs_[d];
    out = std::move(desc.pkt);

    // Level 3: pop the flow's head; a flow still backlogged goes to the end
    // of the pair's flow round.
    // Branch-free like enqueue's append.
    f.link = desc.link;  // the next packet (if any) and its length
    desc.link.next = free_;
    free_ = d;
    const uint16_t next_flow = f.next;
    pr.flow_head = next_flow;
    f.next = kNone16;
    const bool more = --f.count != 0;
    uint16_t* const round_end = pick(next_flow == kNone16, &pr.flow_head, &fl[pr.flow_tail].next);
    *pick(more, round_end, &scratch16_) = lf;
    pr.flow_tail = pick16(more, lf, pr.flow_tail);

    pr.inflight += len;
    pr.backlog_bytes -= len;
    ++ctr_.dequeued;
    ctr_.dequeued_bytes += len;
    const uint64_t pass = c.pass + uint64_t{len} * c.stride;  // charged at the effective weight in force
    c.pass = pass;
    set_key(ci, key(pass, ci));

    // Level 2: park the pair if it is empty, its window is full or its pace
    // makes it wait, else move the tenant's cursor on. Parking may
    // deactivate the tenant and the class.
    const bool wait = kPacing && pace_.charge(p, len, now_);
    if (pr.flow_head == kNone16) {
      deactivate_pair(p, PairState::kIdle);
    } else if (!head_fits(fl, pr)) {
      deactivate_pair(p, PairState::kBlocked);
    } else if (wait) {
      deactivate_pair(p, PairState::kPaced);
      pace_.park(p);
    } else {
      t.cursor = pr.next;
    }
    if (t.cursor != kNone) c.cursor = t.next;  // tenant still active: next tenant's turn
    if (c.cursor != kNone) prefetch_ahead<kPacing>(c.cursor);
    out_len = len;
    return p;
  }

  // Software pipeline over a class's tenant ring (hints only; no effect on
  // the schedule). t1 is served at this class's next turn. Each turn
  // fetches the pair and flow lines of the tenant three turns after t1 (tn4)
  // and the head descriptor of the one after t1 (tn2), whose pair and flow
  // lines were fetched two turns ago; a line then has about two of the
  // class's turns to arrive before it is used.
  // The prefetch helpers are always inlined: a separate function whose only
  // effect is __builtin_prefetch counts as pure to GCC (12), which then drops
  // the call (and every prefetch with it) as dead code.
  template <bool kPacing>
  [[gnu::always_inline]] void prefetch_ahead(uint32_t t1) const {
    const Tenant& tn2 = tenants_[tenants_[t1].next];
    const uint32_t p2 = tn2.cursor;
    const Pair& pr2 = pairs_[p2];
    if (pr2.flow_head != kNone16) __builtin_prefetch(&descs_[pair_flows(p2)[pr2.flow_head].link.next]);
    const Tenant& tn4 = tenants_[tenants_[tn2.next].next];
    __builtin_prefetch(&pairs_[tn4.cursor]);
    __builtin_prefetch(pair_flows(tn4.cursor));
    if constexpr (kPacing) pace_.prefetch(tn4.cursor);
  }
  // enqueue_burst's prefetch (a hint). Arguments may be invalid: those
  // packets are dropped by enqueue(), so nothing is fetched for them.
  [[gnu::always_inline]] void prefetch_target(uint32_t pair, uint32_t flow) const {
    if (pair >= cfg_.max_pairs || flow >= cfg_.flows_per_pair) return;
    __builtin_prefetch(&pairs_[pair]);
    __builtin_prefetch(&pair_flows(pair)[flow]);
  }

  // Circular doubly linked rings over index-linked nodes. Insert goes just
  // before the cursor (end of the round); removing the cursor moves it on.
  template <typename Node>
  static void ring_insert(Node* nodes, uint32_t& cursor, uint32_t i) {
    if (cursor == kNone) {
      nodes[i].next = nodes[i].prev = i;
      cursor = i;
      return;
    }
    const uint32_t prev = nodes[cursor].prev;
    nodes[i].next = cursor;
    nodes[i].prev = prev;
    nodes[prev].next = i;
    nodes[cursor].prev = i;
  }
  template <typename Node>
  static void ring_remove(Node* nodes, uint32_t& cursor, uint32_t i) {
    const uint32_t next = nodes[i].next;
    if (next == i) {
      cursor = kNone;
    } else {
      const uint32_t prev = nodes[i].prev;
      nodes[prev].next = next;
      nodes[next].prev = prev;
      if (cursor == i) cursor = next;
    }
    nodes[i].next = nodes[i].prev = kNone;
  }

  // stride = 2^31/weight * 2^31/active / 2^22 ~= kStrideScale / (weight * active).
  void restride(Class& c) const {
    c.stride = c.active == 0 ? 0 : (uint64_t{c.inv_weight} * inv_active_[c.active]) >> 22;
  }

  void activate_pair(uint32_t p) {
    Pair& pr = pairs_[p];
    pr.state = PairState::kActive;
    Tenant& t = tenants_[pr.tenant];
    const bool tenant_was_idle = t.cursor == kNone;
    ring_insert(pairs_, t.cursor, p);
    if (tenant_was_idle) activate_tenant(pr.tenant);
  }
  void deactivate_pair(uint32_t p, PairState to) {
    Pair& pr = pairs_[p];
    pr.state = to;
    Tenant& t = tenants_[pr.tenant];
    ring_remove(pairs_, t.cursor, p);
    if (t.cursor == kNone) deactivate_tenant(pr.tenant);
  }
  void activate_tenant(uint32_t ti) {
    Class& c = classes_[tenants_[ti].cls];
    if (c.active == 0) {
      // SFQ: a class (re)joining starts at max(its last finish tag, virtual
      // time): credit does not build up while idle.
      if (c.pass < vtime_) c.pass = vtime_;
      active_mask_ |= 1u << tenants_[ti].cls;
      set_key(tenants_[ti].cls, key(c.pass, tenants_[ti].cls));
    }
    ring_insert(tenants_, c.cursor, ti);
    ++c.active;
    restride(c);
  }
  void deactivate_tenant(uint32_t ti) {
    Class& c = classes_[tenants_[ti].cls];
    ring_remove(tenants_, c.cursor, ti);
    --c.active;
    restride(c);
    if (c.active == 0) {
      active_mask_ &= ~(1u << tenants_[ti].cls);
      set_key(tenants_[ti].cls, kIdleKey);
    }
  }
  // An idle pair got a packet: into its ring, parked by its pace, or
  // blocked by its window. Out of line (a pair wakes once per busy period,
  // not per packet), which keeps enqueue() small enough to be inlined into
  // the caller's loop.
  [[gnu::noinline]] void wake(uint32_t p) {
    Pair& pr = pairs_[p];
    if (head_fits(pair_flows(p), pr)) {
      admit(p);
    } else {
      pr.state = PairState::kBlocked;
    }
  }
  // A pair with backlog whose window admits its head: into its ring, or
  // parked until its eligible time (judged at the scheduler's clock, which
  // may lag: then the next timed dequeue releases it).
  void admit(uint32_t p) {
    if (pacing_on_ && pace_.waiting(p, now_)) {
      pairs_[p].state = PairState::kPaced;
      pace_.park(p);
    } else {
      activate_pair(p);
    }
  }
  // After a window or in-flight change: park or un-park the pair (a paced
  // pair's window is checked when its time comes).
  void recheck(uint32_t p) {
    Pair& pr = pairs_[p];
    if (pr.state == PairState::kBlocked && head_fits(pair_flows(p), pr)) {
      admit(p);
    } else if (pr.state == PairState::kActive && !head_fits(pair_flows(p), pr)) {
      deactivate_pair(p, PairState::kBlocked);
    }
  }
  // Sets class c's leaf and replays its path to the root: at each level the
  // subtree's least key meets its sibling subtree's (three branch-free
  // minimums instead of a search over 8 keys per packet).
  void set_key(uint32_t c, uint64_t k) {
    uint32_t i = kWeightClasses + c;
    tree_[i] = k;
    uint64_t m = min2(k, tree_[i ^ 1]);
    i >>= 1;
    tree_[i] = m;
    m = min2(m, tree_[i ^ 1]);
    i >>= 1;
    tree_[i] = m;
    tree_[1] = min2(m, tree_[i ^ 1]);
  }
  // Shifts all tags down by the virtual time; tags of idle classes below it
  // become 0, which is what max(tag, vtime) would make of them anyway.
  void rebase() {
    for (uint32_t i = 0; i < kWeightClasses; ++i) {
      Class& c = classes_[i];
      c.pass = c.pass > vtime_ ? c.pass - vtime_ : 0;
      if (c.active != 0) set_key(i, key(c.pass, i));
    }
    vtime_ = 0;
  }

  HierSchedulerConfig cfg_;
  uint32_t flow_stride_ = 1;  // flow records per pair (flows_per_pair rounded up)
  uint32_t pool_ = 0;         // descriptors
  uint32_t active_mask_ = 0;  // bit c: class c has an active tenant
  uint32_t free_ = kNone;     // head of the descriptor free list (LIFO)
  uint16_t scratch16_ = 0;    // sink of the data path's selected stores
  uint64_t vtime_ = 0;        // SFQ virtual time: start tag of the last packet sent
  // The WFQ's tournament tree (a heap: node i has children 2i, 2i + 1): leaf
  // 8 + c holds key(classes_[c].pass, c) if class c is active, else
  // kIdleKey; every inner node the least key below it; the root (node 1) the
  // least of all, i.e. the class that sends next. Node 0 is unused.
  alignas(64) uint64_t tree_[2 * kWeightClasses] = {kIdleKey, kIdleKey, kIdleKey, kIdleKey, kIdleKey, kIdleKey,
                                                    kIdleKey, kIdleKey, kIdleKey, kIdleKey, kIdleKey, kIdleKey,
                                                    kIdleKey, kIdleKey, kIdleKey, kIdleKey};
  Class classes_[kWeightClasses];
  Storage storage_;
  Tenant* tenants_ = nullptr;
  Pair* pairs_ = nullptr;
  Flow* flows_ = nullptr;
  Desc* descs_ = nullptr;
  uint32_t* inv_active_ = nullptr;  // 2^31 / n
  HierSchedulerCounters ctr_;
  PairPacing pace_;         // per-pair pacing and the heap of waiting pairs
  bool pacing_on_ = false;  // some pair has had a rate: pop() charges eligible times
  uint64_t now_ = 0;        // the scheduler's clock: the latest advance()
};

}  // namespace ufab
