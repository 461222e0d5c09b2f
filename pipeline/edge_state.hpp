// Everything one ufab-edge worker lcore owns (design-notes §5: enqueue and
// dequeue of a pair's queues on the same core, as in rte_sched): its shard of
// the VM-pairs (those of the local VMs layout.hpp gives it; control/vm_pair.hpp,
// §3.3-§3.5), its hierarchical scheduler (§4.1), the classification tables,
// the receiver-side pairs of its VMs for TokenAdmission (App. E), what it
// shares with the control lcore for Algorithm 1 (token_share.hpp), the fabric
// headers per remote host, its TX buffers, RX ring and counters. Built from
// the configuration with room for the pairs of remote VMs a reload adds
// (params.spare_pairs; remote_vms.hpp): nothing is reallocated after
// construction.
#pragma once

#include <rte_hash_crc.h>
#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "control/migration.hpp"
#include "control/pair_timers.hpp"
#include "control/token_control.hpp"
#include "control/vm_pair.hpp"
#include "edge/config.hpp"
#include "pipeline/classify_cache.hpp"
#include "pipeline/encap_template.hpp"
#include "pipeline/fabric_pacer.hpp"
#include "pipeline/flow_offload.hpp"
#include "pipeline/hash_table.hpp"
#include "pipeline/history.hpp"
#include "pipeline/ipv6_tables.hpp"
#include "pipeline/layout.hpp"
#include "pipeline/stats.hpp"
#include "pipeline/too_big.hpp"
#include "pipeline/token_share.hpp"
#include "pipeline/tx_buffer.hpp"
#include "probe/wire.hpp"
#include "sched/hier_scheduler.hpp"
#include "sched/huge_pages.hpp"

namespace ufab::pipeline {

// Sender-side VM-pair: local VM -> remote VM of the same tenant. Aligned to
// its 32 bytes so that no PairMeta straddles two cache lines: a frame
// prefetches one line of it (prefetch_pair_lines) and reads host and shim,
// its last 12 bytes. Unaligned (the vector's 16-byte alignment), every other
// pair's host and shim lay on the line after the one prefetched.
struct alignas(32) PairMeta {
  uint32_t global = 0;     // index over the whole edge (config order; /ufab/pairs, reports)
  uint32_t wire_id = 0;    // shim/message pair id: src VM id << 16 | dst VM id
  uint32_t tenant = 0;     // tenant index = scheduler tenant id
  uint32_t local_vm = 0;   // index into cfg.vms
  uint32_t remote_vm = 0;  // index into cfg.remote_vms
  uint32_t host = 0;       // index into cfg.hosts
  uint64_t shim = 0;       // its data frames' tunnel shim (VNI, wire_id), encoded (encap_template.hpp)
};
static_assert(sizeof(PairMeta) == 32);

// Receiver-side pair (a remote VM sending to a local VM), learned from its
// first probe. What its probes request and what this VM admits (Alg. 1) are
// in EdgeState::in_share (shared with the control lcore).
struct Incoming {
  uint32_t src_ip = 0, vni = 0, wire_id = 0;
  uint32_t local_vm = 0;
  uint64_t probes = 0;
  Nanos last_seen = 0;  // its last probe or finish (a finished slot's reuse, fabric_rx.cpp)
};

// Outer headers towards one remote host (wire-format §2-§4).
struct HostRoutes {
  wire::OuterAddrs outer;                   // src/dst MAC and IP, dst port
  std::vector<wire::SourceRoute> routes;    // candidate paths
  std::vector<uint16_t> src_ports;          // outer UDP source port per path
  std::vector<EncapTemplate> data_encap;    // per path: the data frames' headers, encoded (encap_template.hpp)
  wire::SourceRoute reply;                  // for responses and finish-acks
  uint16_t reply_src_port = 0;
  uint16_t reply_port = 0;                  // the fabric port responses and finish-acks leave on
};

// Table keys (IPs in network order, as in the frames).
struct ClassifyKey {
  uint16_t port;
  uint16_t vlan;  // 802.1Q VLAN id of the VM's tenant (with QinQ the C-VLAN id), 0: untagged (pipeline/vlan.hpp)
  uint32_t src_ip, dst_ip;
  uint32_t svlan;  // QinQ S-VLAN id, 0: none. 16 bytes: rte_hash compares 16-byte keys with one vector compare
  // No default member initializers: every key is built from all five
  // fields, and vm_rx's array of a burst's keys is then not cleared per burst.

  // The classification tables' hash: CRC32-C of the key's two 8-byte words,
  // built from the fields by value (see flow_of in vm_rx.cpp on hashing
  // through pointer casts).
  uint32_t hash() const { return hash_of(port, vlan, src_ip, dst_ip, svlan); }
  // The same from values, for a key about to be stored (vm_rx.cpp). Hashing
  // the key just stored made GCC load its first word back: 8 bytes over the
  // 4-byte (port, VLAN) and 8-byte (IPs) stores just made, a load no store
  // can forward, which waited every frame for both stores to reach the
  // cache; hashing the values made the data path alone 12-20% faster at 8K
  // pairs (docs/perf-log.md, session 15).
  static uint32_t hash_of(uint16_t port, uint16_t vlan, uint32_t src_ip, uint32_t dst_ip, uint32_t svlan) {
    const uint64_t a = uint64_t{port} | uint64_t{vlan} << 16 | uint64_t{src_ip} << 32;
    const uint64_t b = uint64_t{dst_ip} | uint64_t{svlan} << 32;
    return rte_hash_crc_8byte(b, rte_hash_crc_8byte(a, 0));
  }
  // hash() as the tables' rte_hash function (inserts and single lookups).
  static uint32_t table_hash(const void* key, uint32_t /*key_len*/, uint32_t /*init*/) {
    ClassifyKey k;
    std::memcpy(&k, key, sizeof k);
    return k.hash();
  }
};
static_assert(sizeof(ClassifyKey) == 16);
struct VmKey {
  uint32_t vni, ip;
};
struct IncomingKey {
  uint32_t src_ip, vni, pair_id;  // outer source (host order), VNI, wire pair id
};

class EdgeState {
 public:
  // The shard of worker `worker`: the pairs of the local VMs layout.vm_owner
  // gives it. TX buffers start on queue 0; the caller assigns queues/rings.
  EdgeState(const edge::EdgeConfig& cfg, rte_mempool* pool, uint16_t n_ports, const Layout& layout, uint16_t worker);
  ~EdgeState();
  EdgeState(const EdgeState&) = delete;
  EdgeState& operator=(const EdgeState&) = delete;

  const edge::EdgeConfig& cfg;
  rte_mempool* pool;
  uint16_t burst;
  const Layout& layout;
  uint16_t worker;

  // The per-pair arrays a frame touches at random, on transparent huge
  // pages when large (sched/huge_pages.hpp): 8K VmPairs are ~80 MB.
  template <typename T>
  using PairArray = std::vector<T, huge_pages::Allocator<T>>;
  PairArray<VmPair> pairs;
  std::vector<PairMeta> meta;
  // Pair slots (remote_vms.hpp). pairs and meta hold a slot for every pair
  // made so far, up to pair_capacity (the start-up pairs + params.spare_pairs,
  // reserved: a pair never moves); a slot is live, removed (its remote VM
  // gone: out of the tables, its finish on its way) or free (reused by the
  // next pair added). Everything that walks the pairs skips those not live.
  enum class Slot : uint8_t { live, removed, free };
  std::vector<Slot> slot;
  std::vector<uint32_t> removed_pairs, free_pairs;
  uint32_t pair_capacity = 0;
  bool live(uint32_t p) const { return slot[p] == Slot::live; }
  size_t live_pairs() const { return pairs.size() - removed_pairs.size() - free_pairs.size(); }
  // Slots a pair added now can take (free ones and those never used).
  size_t spare_slots() const { return pair_capacity - pairs.size() + free_pairs.size(); }
  // A removed pair whose slot reclaim() frees: its finish done, nothing
  // in the scheduler (flushed when it was removed; nothing classifies into it).
  bool reclaimable(uint32_t p) const {
    return !pairs[p].finish_pending() && sched.pair_state(p) == PairState::kIdle;
  }
  // spare_slots() once reclaim() ran: what a reload would find (/ufab/workers).
  size_t room() const {
    size_t n = spare_slots();
    for (const uint32_t p : removed_pairs) n += reclaimable(p);
    return n;
  }
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // The pair of local VM v to remote VM r (indices into cfg.vms and
  // cfg.remote_vms), with overall index `global`, in a free slot or a new
  // one, in every table and timer as the start-up pairs: its slot, or
  // kNoSlot when none is left. Throws std::runtime_error when a table
  // refuses its key (the configuration's checks make that a bug).
  uint32_t add_pair(size_t v, size_t r, uint32_t global);
  // Pair p's remote VM is gone (remote_vms.cpp): its keys leave the
  // classification tables (the caller then clears the classification
  // caches, which may still name its slot), its queued frames are
  // freed and counted as dropped (pair_removed) on its VM's port, it is
  // unpublished for Alg. 1 and finishes (§4.2) from the next poll. Returns
  // the frames dropped.
  uint32_t remove_pair(uint32_t p, Nanos now);
  // Removed pairs whose finish is done (acked, or given up) become free.
  void reclaim();
  HierScheduler<rte_mbuf*> sched;
  // Per host (cfg.hosts' order), with room for params.spare_hosts more.
  std::vector<HostRoutes> hosts;
  // Host cfg.hosts[h]'s routes and its address (host_by_ip), appended (or in
  // a free entry, entries.hpp); its address out again (a host removed: its
  // entry stays for the finishes of its VMs' pairs). remote_vms.hpp.
  void add_host(uint32_t h);
  void remove_host(uint32_t h);
  // Host h's responses and finish-acks by its path k's route, source port
  // and uplink (while the reply path's uplink is down: uplinks.cpp), or by
  // its reply path again (k < 0).
  void use_reply(uint32_t h, int k);
  std::vector<uint16_t> vm_ports;  // distinct VM-side ports, in config order (then those attached at runtime)
  // The per-port arrays (TX buffers, counters, TX rings) at `capacity`
  // ports, before the workers run (Edge: ports attached at runtime).
  void reserve_ports(uint16_t capacity);

  // Local VMs: cfg.vms has room for params.spare_local_vms more (local_vms.hpp),
  // and so has every per-VM array and table here.
  size_t vm_capacity = 0;
  // Local VM v (an index into cfg.vms) in the tables every worker has
  // (decapsulation, dispatch, local switching, IPv6), with Alg. 1's tokens
  // phi_alpha for its answers; its pairs are its owner's add_pair.
  void add_local_vm(uint32_t v, double tokens);
  // ... and out of them again (a reload removed it). On its owner, its pairs
  // are removed (remove_pair; *pairs_removed counts them) and its
  // receiver-side slots let go: out of incoming_tbl, requesting nothing, free
  // for reuse. Returns the queued frames dropped. The caller clears the
  // classification caches.
  uint32_t remove_local_vm(uint32_t v, Nanos now, uint32_t* pairs_removed);

  HashTable classify;    // ClassifyKey -> pair (this shard's)
  ClassifyCache classify_cache;  // in front of classify (params.classify_cache)
  HashTable local_vms;   // VmKey -> local VM (decapsulation; every local VM)
  HashTable vm_src;      // ClassifyKey with dst_ip 0 -> local VM (VM-side dispatch; every local VM)
  HashTable wire_pairs;  // wire pair id -> pair (responses)
  HashTable host_by_ip;  // outer IP (host order) -> host (reflection)
  HashTable incoming_tbl;  // IncomingKey -> incoming slot
  // VmKey (VNI, IP) -> remote VM, for every remote VM with a MAC
  // (remote_vms[].mac): the addresses a VM's ARP request is answered for
  // (vm_arp.cpp; every worker answers the requests it receives).
  HashTable arp_targets;
  // Remote VM r (config index) as an ARP and neighbour discovery target when
  // it has a MAC; and out again (remote_vms.cpp).
  void add_targets(uint32_t r);
  void remove_targets(uint32_t r);
  Ipv6Tables ip6;  // the same for IPv6: classification, decapsulation, dispatch, neighbour discovery
  Classify6Cache classify6_cache;  // in front of ip6.classify (params.classify_cache)
  // A VM burst's IPv6 data frames (vm_ipv6.cpp): gathered by vm_ipv6 as
  // vm_frames parses the burst, with their keys and the keys' hashes, and
  // classified together by vm_ipv6_burst before vm_frames goes on; empty
  // between bursts.
  struct Ipv6Burst {
    rte_mbuf* m[TxBuffer::kCap];
    Classify6Key key[TxBuffer::kCap];
    uint32_t sig[TxBuffer::kCap];
    uint32_t n = 0;
  } burst6;
  std::vector<Incoming> incoming;
  uint32_t incoming_hand = 0;  // where the next search for a slot to reuse starts (fabric_rx.cpp)

  // Algorithm 1 exchange with the control lcore (token_share.hpp).
  std::unique_ptr<PairShare[]> share;         // per pair
  std::unique_ptr<IncomingShare[]> in_share;  // per incoming slot (max_incoming)
  std::atomic<uint32_t> incoming_published{0};  // slots the control lcore may read
  // Per local VM, for answers before the VM's first admission round
  // (provisional_admission): its tokens phi_alpha (written by the control
  // lcore on a guarantee change) and the incoming pairs now requesting
  // tokens from it (this worker's own count).
  std::unique_ptr<std::atomic<double>[]> vm_tokens;
  std::vector<uint32_t> in_requesting;
  std::vector<std::vector<uint32_t>> vm_pairs;  // sender pairs per local VM (empty when not ours)
  PairArray<PairHistory> history;               // per pair (/ufab/pair)
  std::vector<Nanos> sample_at;                 // per pair: its next history sample (0: at once)
  std::unique_ptr<AssignedQueue> assigned_q;    // pairs whose phi_S changed (control lcore -> this worker)
  // Per local VM: its pairs published active (Alg. 1 skips VMs with none).
  std::unique_ptr<std::atomic<uint32_t>[]> vm_active;
  // What changed since the control lcore last looked (Alg. 1 recomputes
  // only there; its result is a function of these inputs, so a VM or a
  // shard whose inputs stand still keeps its last phi_S / phi_D):
  //  - per local VM: bumped (release) by publish_tokens() after it changed
  //    any of the VM's pair shares (activity, rate, phi_D);
  //  - per shard: bumped (release) when a probe or finish changes what an
  //    incoming slot requests (fabric_rx.cpp; a new slot counts once it
  //    requests something, as admission looks only at requesting slots).
  std::unique_ptr<std::atomic<uint32_t>[]> vm_inputs_gen;
  std::atomic<uint32_t> incoming_gen{0};
  void bump(std::atomic<uint32_t>& gen) { gen.store(gen.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  // Per-period control work in proportion to what changed (control_tick.cpp):
  //  - timers: each pair armed at VmPair::next_deadline (or its history
  //    sample); the tick polls only the pairs collected as due, at most
  //    poll_budget() of them per worker iteration (due[due_next..] wait for
  //    the next iterations, so RX is polled in between; a new collection
  //    once they are done);
  //  - dirty: pairs whose Alg. 1 inputs (activity, rate, phi_D) may have
  //    changed since the last publish_tokens();
  //  - in_flight: pairs that sent data since their bytes were last all acked
  //    (ack_sweep's work list; kept only when edge.ack_sweep_ns is set).
  PairTimers timers;
  std::vector<uint32_t> due;
  size_t due_next = 0;
  bool due_pending() const { return due_next < due.size(); }
  // At least 2 bursts, and a quarter of what is left: a backlog of due
  // pairs drains geometrically (never starved by a fixed budget), in pieces.
  size_t poll_budget() const { return std::max<size_t>(2 * static_cast<size_t>(burst), (due.size() - due_next) / 4); }
  std::vector<uint32_t> dirty;
  std::vector<uint8_t> dirty_flag, published_active;
  std::vector<uint32_t> in_flight;
  std::vector<uint8_t> in_flight_flag;

  void mark_dirty(uint32_t p) {
    if (dirty_flag[p]) return;
    dirty_flag[p] = 1;
    dirty.push_back(p);
  }
  // Poll the pair at the next tick (an event may have made something due).
  void wake(uint32_t p) { timers.wake(p); }
  void wake_all() {
    for (uint32_t p = 0; p < pairs.size(); ++p) wake(p);
  }
  // A frame for pair p was accepted (vm_rx: enqueued, or sent at once past
  // the empty queues): its queue may have gone from empty to backlogged,
  // which wakes a pair that is not sending (VmPair::wakes_on_backlog; one
  // that is not sending also keeps the demand, VmPair::on_data_arrived, as
  // the frame may be gone by its poll) and makes an inactive pair active
  // for Alg. 1. While stopping no pair joins for new data. Per frame, and
  // called from vm_burst::queue_or_send for both families (vm_rx, vm_ipv6):
  // with a second caller LTO left it out of line, +27 instructions a frame
  // at 8K pairs (callgrind), hence always_inline.
  [[gnu::always_inline]] void on_enqueued(uint32_t p, Nanos now) {
    if (!published_active[p]) mark_dirty(p);
    if (pairs[p].wakes_on_backlog(now)) {
      if (!stopping) pairs[p].on_data_arrived();
      wake(p);
    }
  }
  void on_sent(uint32_t p) {
    if (cfg.ack_sweep_ns == 0 || in_flight_flag[p]) return;
    in_flight_flag[p] = 1;
    in_flight.push_back(p);
  }

  FlowOffload offload;       // rte_flow rules per port (pipeline/flow_offload.hpp): rules and counters in worker 0, every worker has the modes
  EdgeStats stats;
  too_big::Limiter ptb_limiter;  // this worker's ICMP too-big answers (vm_too_big.cpp)
  std::vector<TxBuffer> tx;  // per DPDK port
  rte_ring* rx_ring = nullptr;             // frames dispatched to this worker
  std::vector<rte_ring*> peer_rings;       // every worker's rx_ring, by worker
  std::vector<rte_ring*> tx_rings;         // per port: frames for it from workers without a TX queue (TX lcore only)
  bool stopping = false;                   // stop sequence: finished pairs do not rejoin
  FabricPacer pacer;  // data frames to the fabric at edge.fabric_rate_mbps / workers
  uint64_t busy_ns = 0, loop_ns = 0;       // iterations with work / all (busy fraction)
  wire::Message ctl_msg;                   // control_tx's scratch (VmPair::next_message fills it)
  std::atomic<uint64_t> rx_seen{0};        // stats.rx(), published for the idle exit

  // What a data frame of pair p reads first, ahead of vm_rx and send_data:
  // the VmPair's hot lines (VmPair::prefetch_state) and its PairMeta (the
  // host and shim: encap_bytes, the encapsulation). At 8K pairs each is a
  // miss per frame when not fetched ahead.
  void prefetch_pair_lines(uint32_t p) const {
    pairs[p].prefetch_state();
    __builtin_prefetch(&meta[p]);
  }
  // Encapsulation overhead of a pair's frames on path `path` (or path 0).
  uint32_t encap_bytes(uint32_t pair, int path) const {
    return hosts[meta[pair].host].data_encap[path < 0 ? 0 : static_cast<size_t>(path)].len;
  }
  uint64_t queued() const { return sched.backlog_packets(); }
  // VM frames may bypass the queues (vm_rx.cpp): params.sched_bypass, and
  // no fabric pacer (its allowance is taken per dequeued burst).
  bool bypass_on() const { return cfg.sched_bypass && !pacer.paced(); }

 private:
  // The constructor's work, with the shard's pair count (counted once: it
  // sizes the scheduler, the tables, the cache, the timers and the pairs).
  EdgeState(const edge::EdgeConfig& cfg, rte_mempool* pool, uint16_t n_ports, const Layout& layout, uint16_t worker,
            size_t n_pairs);
  // This host's freeze window (§3.5), one per worker: pairs of a host on
  // different workers migrate under independent windows.
  std::unique_ptr<HostMigrationGate> gate_;
};

}  // namespace ufab::pipeline
