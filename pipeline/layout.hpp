// Which lcore does what in ufab-edge (issue 4 item 1, in the style of DPDK's
// qos_sched): one control lcore (Alg. 1 token rounds every token period,
// configuration pushes, telemetry, the stats line, the stop sequence) and N
// worker lcores. Each worker owns a shard of the VM-pairs: sharding is by
// local VM (every pair of one VM on one worker, so the VM's token state, its
// receiver-side pairs and its queues are touched by one core).
//
// A port's RX queue 0 is polled by one worker (its RX lcore): a VM port by
// the owner of its first VM, the fabric port by the worker with the fewest
// ports. Frames of a VM owned by another worker go to that worker's RX ring
// (software dispatch; RSS on the outer or inner header cannot land a frame at
// its VM's owner, and the rte_flow steering rule is a hook, see dispatch.hpp).
// Fabric frames are dispatched by the shim's wire pair id: its source VM id
// when that VM is local (a response, finish-ack, failure for one of our
// pairs), else its destination VM id (data, probe, finish towards our VM).
//
// With one lcore (`-l 0`) there is no separate control lcore: the main lcore
// runs control and the only worker in one loop, exactly as before (mixed).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "edge/config.hpp"

namespace ufab::pipeline {

struct Layout {
  bool mixed = true;                    // control and worker 0 on the main lcore
  unsigned control_lcore = 0;
  std::vector<unsigned> worker_lcores;  // worker w runs on worker_lcores[w]
  std::vector<uint16_t> vm_owner;       // local VM index -> worker
  std::vector<int32_t> vm_by_id;        // VM id (0..65535) -> local VM index, -1 when not local
  std::vector<int> rx_worker;           // DPDK port -> worker polling its RX queue 0 (-1: nobody)

  size_t workers() const { return worker_lcores.size(); }
  // Owner of a fabric frame with this wire pair id; `self` when no local VM is named.
  uint16_t owner_of_wire_pair(uint32_t wire_id, uint16_t self) const {
    const int32_t hi = vm_by_id[wire_id >> 16], lo = vm_by_id[wire_id & 0xffff];
    if (hi >= 0) return vm_owner[static_cast<size_t>(hi)];
    if (lo >= 0) return vm_owner[static_cast<size_t>(lo)];
    return self;
  }
};

struct LayoutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// lcores: the EAL's lcores, main lcore first. workers: --workers (0 = one per
// lcore besides the control lcore); lcore_map: --lcore-map "C:W1,W2,..." (or
// ""). Throws LayoutError naming what is missing and how to fix it.
Layout make_layout(const edge::EdgeConfig& cfg, uint16_t n_ports, const std::vector<unsigned>& lcores,
                   unsigned workers, const std::string& lcore_map = "");

}  // namespace ufab::pipeline
