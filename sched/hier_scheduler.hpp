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
//     where head_len is the length of the packet it would send next. A pair
//     with window 0 never sends; a pair whose window is positive but smaller
//     than its next packet may send that one packet when nothing is in flight
//     (otherwise it could never make progress). Ineligible pairs are parked
//     outside the round-robin ring and re-inserted only by set_window() or
//     on_acked(); dequeue never looks at them.
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
// Memory: all of it is allocated by the constructor; enqueue and dequeue never
// allocate, lock or make system calls, and cost O(1) (plus a scan of the 8
// classes). Packets sit in one shared pool of descriptors {handle, len, next}
// linked into per-flow FIFOs; the pool's free list is LIFO, so the
// descriptors in use stay few and cache-hot however many flows exist (a ring
// per flow would touch a distinct cache line per backlogged flow). A flow
// holds at most queue_capacity packets; the pool (by default
// max_pairs * flows_per_pair * queue_capacity descriptors) bounds the total.
// Per-pair state is packed into 32 bytes, per-flow state into 16. One
// instance belongs to one core (design-notes §5).
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sched/weight_class.hpp"

namespace ufab {

struct HierSchedulerConfig {
  uint32_t max_tenants = 1024;   // tenant ids are 0 .. max_tenants-1
  uint32_t max_pairs = 8192;     // pair ids are 0 .. max_pairs-1
  uint32_t flows_per_pair = 4;   // flow ids are 0 .. flows_per_pair-1
  uint32_t queue_capacity = 64;  // packets per flow FIFO (a power of two is customary, not required)
  uint32_t pool_packets = 0;     // packets queued in total; 0: max_pairs * flows_per_pair * queue_capacity
};

struct HierSchedulerCounters {
  uint64_t enqueued = 0;         // packets accepted by enqueue()
  uint64_t enqueued_bytes = 0;
  uint64_t dequeued = 0;
  uint64_t dequeued_bytes = 0;
  uint64_t dropped_full = 0;     // enqueue() on a full flow FIFO or an exhausted pool
  uint64_t dropped_invalid = 0;  // unknown pair/flow, len 0 or len > kMaxPacketLen
};

enum class PairState : uint8_t {
  kUnused,   // not added
  kIdle,     // no backlog
  kActive,   // backlog and eligible: in its tenant's ring
  kBlocked,  // backlog but its window does not admit its next packet: parked
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
  // Virtual time per byte at effective weight 1. With class weight <= 2^12
  // and <= 2^20 active tenants the stride is >= 2^8 (rounding <= 0.4%; 1e-8
  // at 1K tenants of weight 128), and one packet (< 2^16 B) advances a tag by
  // < 2^56, so tags stay below 2^63 with the rebase at kRebaseAt. The stride
  // is a product of two 2^31-scaled reciprocals (no division on the data path).
  static constexpr uint64_t kStrideScale = uint64_t{1} << 40;
  static constexpr uint64_t kRebaseAt = uint64_t{1} << 62;

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
    const uint64_t flows = uint64_t{cfg.max_pairs} * cfg.flows_per_pair;
    const uint64_t pool = cfg.pool_packets != 0 ? cfg.pool_packets : flows * cfg.queue_capacity;
    if (flows >= kNone || pool >= kNone) {
      throw std::invalid_argument("HierScheduler: more than 2^32 - 1 flows or packets");
    }
    tenants_.resize(cfg.max_tenants);
    pairs_.resize(cfg.max_pairs);
    flows_.resize(flows);
    descs_.resize(pool);
    for (uint32_t i = 0; i < pool; ++i) descs_[i].next = i + 1 == pool ? kNone : i + 1;
    free_ = 0;
    inv_active_.resize(size_t{cfg.max_tenants} + 1);
    for (uint32_t n = 1; n <= cfg.max_tenants; ++n) inv_active_[n] = (1u << 31) / n;
    for (uint32_t c = 0; c < kWeightClasses; ++c) set_class_weight(c, 1u << c);
  }

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
    return true;
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
  bool has_pair(uint32_t pair) const {
    return pair < cfg_.max_pairs && pairs_[pair].state != PairState::kUnused;
  }
  PairState pair_state(uint32_t pair) const {
    return pair < cfg_.max_pairs ? pairs_[pair].state : PairState::kUnused;
  }
  uint32_t pair_tenant(uint32_t pair) const { return has_pair(pair) ? pairs_[pair].tenant : kNone; }
  uint64_t inflight(uint32_t pair) const { return has_pair(pair) ? pairs_[pair].inflight : 0; }
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
    if (pair >= cfg_.max_pairs || flow >= cfg_.flows_per_pair || len == 0 || len > kMaxPacketLen ||
        pairs_[pair].state == PairState::kUnused) {
      ++ctr_.dropped_invalid;
      return false;
    }
    Pair& pr = pairs_[pair];
    const uint32_t fi = flow_index(pair, flow);
    Flow& f = flows_[fi];
    if (f.count == cfg_.queue_capacity || free_ == kNone) {
      ++ctr_.dropped_full;
      return false;
    }
    const uint32_t d = free_;
    Desc& desc = descs_[d];
    free_ = desc.next;
    desc.pkt = std::move(pkt);
    desc.next = kNone;
    if (f.count++ == 0) {  // the flow was empty: it joins the end of the pair's flow round
      f.head = d;
      f.head_len = len;
      f.next = kNone16;
      if (pr.flow_head == kNone16) {
        pr.flow_head = static_cast<uint16_t>(flow);
      } else {
        flows_[flow_index(pair, pr.flow_tail)].next = static_cast<uint16_t>(flow);
      }
      pr.flow_tail = static_cast<uint16_t>(flow);
    } else {
      descs_[f.tail].next = d;
      descs_[f.tail].next_len = len;
    }
    f.tail = d;
    pr.backlog_bytes += len;
    ++ctr_.enqueued;
    ctr_.enqueued_bytes += len;
    ++backlog_pkts_;
    backlog_bytes_ += len;
    if (pr.state == PairState::kIdle) {  // its new packet is its next one
      if (head_fits(pair, pr)) {
        activate_pair(pair);
      } else {
        pr.state = PairState::kBlocked;
      }
    }
    return true;
  }

  // Sends one packet: WFQ picks a class, RR a tenant of the class, RR an
  // eligible pair of the tenant, RR a flow of the pair. Charges the pair's
  // in-flight bytes with len. False if no pair is eligible.
  bool dequeue(Pkt& pkt, uint32_t& len, uint32_t& pair) {
    if (active_mask_ == 0) return false;
    // Level 1: least start tag among active classes; ties go to the lower class.
    uint32_t mask = active_mask_;
    uint32_t ci = static_cast<uint32_t>(std::countr_zero(mask));
    uint64_t best = classes_[ci].pass;
    mask &= mask - 1;
    while (mask != 0) {  // branch-free select: the winner is data-dependent
      const uint32_t j = static_cast<uint32_t>(std::countr_zero(mask));
      mask &= mask - 1;
      const bool less = classes_[j].pass < best;
      best = less ? classes_[j].pass : best;
      ci = less ? j : ci;
    }
    Class& c = classes_[ci];
    vtime_ = c.pass;
    if (vtime_ >= kRebaseAt) rebase();

    const uint32_t ti = c.cursor;
    Tenant& t = tenants_[ti];
    const uint32_t p = t.cursor;
    Pair& pr = pairs_[p];
    const uint16_t lf = pr.flow_head;
    Flow& f = flows_[flow_index(p, lf)];
    const uint32_t d = f.head;
    Desc& desc = descs_[d];
    len = f.head_len;
    pkt = std::move(desc.pkt);
    pair = p;

    // Level 3: pop the flow's head; a flow still backlogged goes to the end
    // of the pair's flow round.
    f.head = desc.next;
    desc.next = free_;
    free_ = d;
    pr.flow_head = f.next;
    f.next = kNone16;
    if (--f.count != 0) {
      f.head_len = desc.next_len;
      if (pr.flow_head == kNone16) {
        pr.flow_head = lf;
      } else {
        flows_[flow_index(p, pr.flow_tail)].next = lf;
      }
      pr.flow_tail = lf;
    } else if (pr.flow_head == kNone16) {
      pr.flow_tail = kNone16;
    }

    pr.inflight += len;
    pr.backlog_bytes -= len;
    --backlog_pkts_;
    backlog_bytes_ -= len;
    ++ctr_.dequeued;
    ctr_.dequeued_bytes += len;
    c.pass += uint64_t{len} * c.stride;  // charged at the effective weight in force

    // Level 2: park the pair if it is empty or its window is full, else move
    // the tenant's cursor on. Parking may deactivate the tenant and the class.
    if (pr.flow_head == kNone16) {
      deactivate_pair(p, PairState::kIdle);
    } else if (!head_fits(p, pr)) {
      deactivate_pair(p, PairState::kBlocked);
    } else {
      t.cursor = pr.next;
    }
    if (t.cursor != kNone) c.cursor = t.next;  // tenant still active: next tenant's turn
    if (c.cursor != kNone) prefetch_ahead(c.cursor);
    return true;
  }

  size_t dequeue_burst(Pkt* pkts, uint32_t* lens, uint32_t* pair_ids, size_t max) {
    size_t n = 0;
    while (n < max && dequeue(pkts[n], lens[n], pair_ids[n])) ++n;
    return n;
  }

  uint64_t backlog_packets() const { return backlog_pkts_; }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const HierSchedulerCounters& counters() const { return ctr_; }
  const HierSchedulerConfig& config() const { return cfg_; }

 private:
  static constexpr uint16_t kNone16 = UINT16_MAX;

  // 32 bytes: two pairs per cache line.
  struct alignas(32) Pair {
    uint32_t window = 0;
    uint32_t inflight = 0;
    uint32_t backlog_bytes = 0;
    uint32_t tenant = kNone;
    uint32_t next = kNone;  // ring of the tenant's active pairs
    uint32_t prev = kNone;
    uint16_t flow_head = kNone16;  // FIFO of the pair's backlogged flows (local ids)
    uint16_t flow_tail = kNone16;
    PairState state = PairState::kUnused;
  };
  struct Flow {
    uint32_t head = kNone;  // descriptor FIFO
    uint32_t tail = kNone;
    uint32_t head_len = 0;  // length of the head packet: the window gate needs no descriptor access
    uint16_t count = 0;
    uint16_t next = kNone16;  // next backlogged flow of the same pair (local id)
  };
  // A packet's length is kept where the scheduler reads it before the
  // packet itself: in its predecessor (next_len) or, at the head, in the flow.
  struct Desc {
    Pkt pkt{};
    uint32_t next = kNone;  // next in its flow's FIFO, or in the free list
    uint32_t next_len = 0;  // length of the packet `next`
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

  static uint32_t clamp_window(uint64_t w) {
    return static_cast<uint32_t>(w < kMaxWindow ? w : kMaxWindow);
  }
  uint32_t flow_index(uint32_t pair, uint32_t local) const {
    return pair * cfg_.flows_per_pair + local;
  }
  // The window gate of level 2 (see the header comment). pr has backlog.
  bool head_fits(uint32_t p, const Pair& pr) const {
    const uint32_t len = flows_[flow_index(p, pr.flow_head)].head_len;
    return pr.window != 0 && (pr.inflight == 0 || pr.inflight + len <= pr.window);
  }

  // Software pipeline over a class's tenant ring (hints only; no effect on
  // the schedule). t1 is served at this class's next turn: its head
  // descriptor is fetched now (its pair and flows were fetched one turn
  // earlier), and the pair and flows of the tenant after it are fetched.
  void prefetch_ahead(uint32_t t1) const {
    const uint32_t p1 = tenants_[t1].cursor;
    const Pair& pr1 = pairs_[p1];
    if (pr1.flow_head != kNone16) {
      __builtin_prefetch(&descs_[flows_[flow_index(p1, pr1.flow_head)].head]);
    }
    const uint32_t p2 = tenants_[tenants_[t1].next].cursor;
    __builtin_prefetch(&pairs_[p2]);
    __builtin_prefetch(&flows_[flow_index(p2, 0)]);
  }

  // Circular doubly linked rings over index-linked nodes. Insert goes just
  // before the cursor (end of the round); removing the cursor moves it on.
  template <typename Node>
  static void ring_insert(std::vector<Node>& nodes, uint32_t& cursor, uint32_t i) {
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
  static void ring_remove(std::vector<Node>& nodes, uint32_t& cursor, uint32_t i) {
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
    if (c.active == 0) active_mask_ &= ~(1u << tenants_[ti].cls);
  }
  // After a window or in-flight change: park or un-park the pair.
  void recheck(uint32_t p) {
    Pair& pr = pairs_[p];
    if (pr.state == PairState::kBlocked && head_fits(p, pr)) {
      activate_pair(p);
    } else if (pr.state == PairState::kActive && !head_fits(p, pr)) {
      deactivate_pair(p, PairState::kBlocked);
    }
  }
  // Shifts all tags down by the virtual time; tags of idle classes below it
  // become 0, which is what max(tag, vtime) would make of them anyway.
  void rebase() {
    for (Class& c : classes_) c.pass = c.pass > vtime_ ? c.pass - vtime_ : 0;
    vtime_ = 0;
  }

  HierSchedulerConfig cfg_;
  uint32_t active_mask_ = 0;  // bit c: class c has an active tenant
  uint32_t free_ = kNone;     // head of the descriptor free list (LIFO)
  uint64_t vtime_ = 0;        // SFQ virtual time: start tag of the last packet sent
  Class classes_[kWeightClasses];
  std::vector<Tenant> tenants_;
  std::vector<Pair> pairs_;
  std::vector<Flow> flows_;
  std::vector<Desc> descs_;
  std::vector<uint32_t> inv_active_;  // 2^31 / n
  uint64_t backlog_pkts_ = 0;
  uint64_t backlog_bytes_ = 0;
  HierSchedulerCounters ctr_;
};

}  // namespace ufab
