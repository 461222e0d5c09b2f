// Everything one ufab-edge worker lcore owns (design-notes §5: enqueue and
// dequeue of a pair's queues on the same core, as in rte_sched): the VM-pairs
// (control/vm_pair.hpp, §3.3-§3.5), the hierarchical scheduler (§4.1), the
// classification tables, the receiver-side pairs for TokenAdmission (App. E),
// the per-VM token state, the fabric headers per remote host, the TX buffers
// and the counters. Built once from the configuration; nothing here grows
// after construction.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "control/migration.hpp"
#include "control/token_control.hpp"
#include "control/vm_pair.hpp"
#include "edge/config.hpp"
#include "pipeline/flow_offload.hpp"
#include "pipeline/hash_table.hpp"
#include "pipeline/stats.hpp"
#include "pipeline/tx_buffer.hpp"
#include "probe/wire.hpp"
#include "sched/hier_scheduler.hpp"

namespace ufab::pipeline {

// Sender-side VM-pair: local VM -> remote VM of the same tenant.
struct PairMeta {
  uint32_t wire_id = 0;    // shim/message pair id: src VM id << 16 | dst VM id
  uint32_t tenant = 0;     // tenant index = scheduler tenant id
  uint32_t local_vm = 0;   // index into cfg.vms
  uint32_t remote_vm = 0;  // index into cfg.remote_vms
  uint32_t host = 0;       // index into cfg.hosts
};

// Receiver-side pair (a remote VM sending to a local VM), learned from its
// first probe: what its probes request and what this VM admits (Alg. 1).
struct Incoming {
  uint32_t src_ip = 0, vni = 0, wire_id = 0;
  uint32_t local_vm = 0;
  double requested = 0;              // phi_S from the last probe (0 after finish)
  double admitted = kTokenUnbound;   // phi_D, UNBOUND until the first round
  uint64_t probes = 0;
};

// Outer headers towards one remote host (wire-format §2-§4).
struct HostRoutes {
  wire::OuterAddrs outer;                   // src/dst MAC and IP, dst port
  std::vector<wire::SourceRoute> routes;    // candidate paths
  std::vector<uint16_t> src_ports;          // outer UDP source port per path
  wire::SourceRoute reply;                  // for responses and finish-acks
  uint16_t reply_src_port = 0;
};

// Table keys (IPs in network order, as in the frames).
struct ClassifyKey {
  uint16_t port;
  uint16_t pad;
  uint32_t src_ip, dst_ip;
};
struct VmKey {
  uint32_t vni, ip;
};
struct IncomingKey {
  uint32_t src_ip, vni, pair_id;  // outer source (host order), VNI, wire pair id
};

class EdgeState {
 public:
  EdgeState(const edge::EdgeConfig& cfg, rte_mempool* pool, uint16_t n_ports);
  ~EdgeState();
  EdgeState(const EdgeState&) = delete;
  EdgeState& operator=(const EdgeState&) = delete;

  const edge::EdgeConfig& cfg;
  rte_mempool* pool;
  uint16_t burst;

  std::vector<VmPair> pairs;
  std::vector<PairMeta> meta;
  HierScheduler<rte_mbuf*> sched;
  std::vector<HostRoutes> hosts;
  std::vector<uint16_t> vm_ports;  // distinct VM-side ports, in config order

  HashTable classify;    // ClassifyKey -> pair
  HashTable local_vms;   // VmKey -> local VM (decapsulation)
  HashTable wire_pairs;  // wire pair id -> pair (responses)
  HashTable host_by_ip;  // outer IP (host order) -> host (reflection)
  HashTable incoming_tbl;  // IncomingKey -> incoming slot
  std::vector<Incoming> incoming;

  // Token state per local VM (App. E): sender over its pairs, receiver over
  // its incoming pairs. Index lists and scratch are reserved to their maxima.
  std::vector<VmTokens> senders, receivers;
  std::vector<std::vector<uint32_t>> vm_pairs;  // sender pairs per local VM
  std::vector<uint32_t> scratch;

  std::vector<TxBuffer> tx;  // per DPDK port
  FlowOffload offload;       // rte_flow rules per port (pipeline/flow_offload.hpp)
  EdgeStats stats;

  // Encapsulation overhead of a pair's frames on path `path` (or path 0).
  uint32_t encap_bytes(uint32_t pair, int path) const;
  uint64_t queued() const { return sched.backlog_packets(); }

 private:
  std::unique_ptr<HostMigrationGate> gate_;  // this host's freeze window (§3.5)
};

}  // namespace ufab::pipeline
