// Software dispatch between workers (layout.hpp): the RX lcore of a port
// hands every frame whose VM-pair another worker owns to that worker's RX
// ring (rte_ring, multi-producer / single-consumer, counted ring_full drops
// when it is full). Frames of one flow come from one port, so one RX lcore
// enqueues them in order into one ring: dispatch never reorders a flow.
//
// Hook for hardware steering (rte_flow, another helper's work): when a rule
// puts the fabric frames of worker w's pairs on RX queue w of the fabric
// port, fabric_steered() returns true and every worker polls its own queue
// (no software dispatch for the fabric port). Not installed in this version.
#pragma once

#include <cstdint>

namespace ufab::pipeline {

inline constexpr unsigned kRingSize = 4096;  // frames per worker RX ring / port TX ring

// True when an rte_flow rule steers the fabric port's frames to their owner's
// RX queue. Always false here (the rule path lives elsewhere).
inline bool fabric_steered(uint16_t /*port*/) { return false; }

}  // namespace ufab::pipeline
