// The stages of ufab-edge's data path, one file each, in the style of DPDK's
// qos_sched (one function per role, burst loops):
//   vm_rx.cpp       VM-side RX burst -> classify (rte_hash) -> scheduler enqueue
//   sched_tx.cpp    scheduler dequeue under each pair's window -> encap -> fabric TX
//   control_tx.cpp  a pair's control messages (probe every L_w bytes, queries,
//                   finish) into fresh mbufs; a pair's window and acks into the scheduler
//   fabric_rx.cpp   fabric RX burst -> decap to the VM port, reflect probes,
//                   responses to their VmPair
//   control_tick.cpp  token assignment (Alg. 1) and VmPair::poll every token period
// Each returns the frames it handled (0 = idle).
#pragma once

#include <cstdint>

#include "control/clock.hpp"
#include "pipeline/edge_state.hpp"

namespace ufab::pipeline {

uint32_t vm_rx(EdgeState& s, uint16_t port, Nanos now);
uint32_t sched_tx(EdgeState& s, Nanos now);
uint32_t fabric_rx(EdgeState& s, Nanos now);

// Sends whatever control messages the pair has due (at most one per path plus one).
void control_tx(EdgeState& s, uint32_t pair, Nanos now);
// Pushes the pair's newly acknowledged bytes and its current window into the scheduler.
void refresh_window(EdgeState& s, uint32_t pair, Nanos now);

// Token assignment (sender and receiver side, App. E) and the pairs' timers.
void control_tick(EdgeState& s, Nanos now);

}  // namespace ufab::pipeline
