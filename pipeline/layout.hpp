// Which lcore does what in ufab-edge (issue 4 item 1, in the style of DPDK's
// qos_sched): one control lcore (Alg. 1 token rounds every token period,
// configuration pushes, telemetry, the stats line, the stop sequence) and N
// worker lcores. Each worker owns a shard of the VM-pairs: sharding is by
// local VM (every pair of one VM on one worker, so the VM's token state, its
// receiver-side pairs and its queues are touched by one core).
//
// A port's RX queue 0 is polled by one worker (its RX lcore): a VM port by
// the owner of its first VM, each fabric port, then each VM-side port no VM
// names at start-up (kept for VMs a reload adds, local_vms.hpp), by the
// worker with the fewest ports so far. Frames of a VM owned by another worker go to that worker's RX ring
// (software dispatch; RSS on the outer or inner header cannot land a frame at
// its VM's owner, and the rte_flow steering rule is a hook, see dispatch.hpp).
// Fabric frames are dispatched by the shim's wire pair id: its source VM id
// when that VM is local (a response, finish-ack, failure for one of our
// pairs), else its destination VM id (data, probe, finish towards our VM),
// else the worker that owned the source VM when a reload removed it (the
// finish-acks of its pairs, which finish on that worker).
//
// Per-worker RX queues (RxMode): where a port has an RX queue per worker,
// worker w polls queue w itself (no RX lcore): `steered` when rte_flow QUEUE
// rules put each VM-pair's frames on its owner's queue (flow_offload.hpp),
// `spread` when the PMD spreads the frames by itself (RSS, the tun device's
// flow hash, one file per queue for net_pcap). Either way a frame that lands
// on another worker's queue is handed to its owner through the ring
// (counted: misqueued). A flow keeps to one queue (a rule, RSS, tun's flow
// hash), so one worker hands it over in order: no flow is reordered.
//
// With one lcore (`-l 0`) there is no separate control lcore: the main lcore
// runs control and the only worker in one loop, exactly as before (mixed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "edge/config.hpp"

namespace ufab::pipeline {

enum class RxMode : uint8_t {
  dispatch,  // one RX queue, polled by the port's RX lcore, which dispatches (rx_worker)
  spread,    // an RX queue per worker; the PMD chooses the queue; strays handed over
  steered,   // an RX queue per worker; rte_flow QUEUE rules steer each pair to its owner
};
const char* to_string(RxMode m);

struct Layout {
  bool mixed = true;                    // control and worker 0 on the main lcore
  unsigned control_lcore = 0;
  std::vector<unsigned> worker_lcores;  // worker w runs on worker_lcores[w]
  std::vector<uint16_t> vm_owner;       // local VM index -> worker (reserved for params.spare_local_vms more)
  std::vector<int32_t> vm_by_id;        // VM id (0..65535) -> local VM index, -1 when not local
  std::vector<uint16_t> retired_owner;  // VM id -> the worker that owned it when a reload removed it (kNoWorker: none)
  std::vector<int> rx_worker;           // DPDK port -> worker polling its RX queue 0 (-1: nobody); dispatch ports
  std::vector<RxMode> rx_mode;          // DPDK port -> how its RX queues are polled
  std::vector<uint16_t> rx_queues;      // DPDK port -> RX queues configured (1, or one per worker)
  std::vector<std::string> rx_why;      // DPDK port -> why it runs in dispatch mode ("" otherwise)
  std::vector<std::string> rx_reta;     // DPDK port -> its RSS redirection by VM, spread VM ports (rss_reta.hpp; "" otherwise)

  size_t workers() const { return worker_lcores.size(); }
  // The per-port vectors at `capacity` ports (Edge: room for ports attached
  // at runtime, ports.hpp); a port not there yet is polled by nobody.
  void reserve_ports(uint16_t capacity) {
    if (rx_worker.size() >= capacity) return;
    rx_worker.resize(capacity, -1);
    rx_mode.resize(capacity, RxMode::dispatch);
    rx_queues.resize(capacity, 1);
    rx_why.resize(capacity);
  }
  // The worker that is the RX lcore of the fewest ports so far (ties: the
  // lower): a fabric port, a VM-side port without a VM at start-up, a port
  // attached at runtime (ports.hpp) goes to it.
  uint16_t worker_polling_fewest() const {
    std::vector<size_t> polls(workers(), 0);
    for (const int w : rx_worker)
      if (w >= 0) ++polls[static_cast<size_t>(w)];
    return static_cast<uint16_t>(std::min_element(polls.begin(), polls.end()) - polls.begin());
  }
  // Whether worker w polls an RX queue of port: its own queue, or queue 0 as the RX lcore.
  bool polls(uint16_t port, uint16_t w) const {
    return rx_queues[port] > 1 ? w < rx_queues[port] : rx_worker[port] == static_cast<int>(w);
  }
  // vm_by_id's entry for VM id `id`: the control lcore writes it (release)
  // when a reload adds or removes a local VM (local_vms.hpp), after the
  // VM's cfg.vms entry and vm_owner; any lcore reads it (acquire).
  int32_t local_vm_of(uint32_t id) const { return __atomic_load_n(&vm_by_id[id], __ATOMIC_ACQUIRE); }
  void set_local_vm(uint32_t id, int32_t v) { __atomic_store_n(&vm_by_id[id], v, __ATOMIC_RELEASE); }
  // A reload removes local VM id, owned by worker w: its id stops naming it
  // (set_local_vm(id, -1), after the owner is noted), but its pairs, which
  // stay on w until their finish is done (remote_vms.hpp), still hear
  // from the fabric: finish-acks and late responses name it as the source.
  static constexpr uint16_t kNoWorker = UINT16_MAX;
  void retire_local_vm(uint32_t id, uint16_t w) {
    __atomic_store_n(&retired_owner[id], w, __ATOMIC_RELAXED);
    set_local_vm(id, -1);  // release: a reader seeing -1 sees w
  }
  // Owner of a fabric frame with this wire pair id (source VM id << 16 |
  // destination VM id): the source's owner when it is local (a response,
  // finish-ack or failure for one of our pairs), else the destination's
  // (data, probe, finish towards our VM), else the worker that owned the
  // source when a reload removed it (an answer to a removed pair's finish);
  // `self` when none of these names a worker (the frame is then dropped
  // there, under its reason).
  uint16_t owner_of_wire_pair(uint32_t wire_id, uint16_t self) const {
    const int32_t hi = local_vm_of(wire_id >> 16), lo = local_vm_of(wire_id & 0xffff);
    if (hi >= 0) return vm_owner[static_cast<size_t>(hi)];
    if (lo >= 0) return vm_owner[static_cast<size_t>(lo)];
    const uint16_t r = __atomic_load_n(&retired_owner[wire_id >> 16], __ATOMIC_RELAXED);
    return r != kNoWorker ? r : self;
  }
};

// RX queues for a port with max_rxq queues on driver `driver`: one per
// worker when there are several workers, per_worker is asked for, the PMD
// has enough queues and is not memif (both ends of a memif must ask for the
// same number of rings, and its peer, e.g. ufab-core, has one); else 1 and
// *why says which of these held.
uint16_t rx_queues_for(size_t workers, uint16_t max_rxq, const std::string& driver, bool per_worker, std::string* why);

struct LayoutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// lcores: the EAL's lcores, main lcore first. workers: --workers (0 = one per
// lcore besides the control lcore); lcore_map: --lcore-map "C:W1,W2,..." (or
// ""). Throws LayoutError naming what is missing and how to fix it.
Layout make_layout(const edge::EdgeConfig& cfg, uint16_t n_ports, const std::vector<unsigned>& lcores,
                   unsigned workers, const std::string& lcore_map = "");

}  // namespace ufab::pipeline
