// Between the RX queues and the workers (layout.hpp, RxMode):
//  - dispatch: a port's one RX queue is polled by its RX lcore, which hands
//    every frame whose VM-pair another worker owns to that worker's RX ring;
//  - spread / steered: each worker polls its own RX queue of the port; the
//    frames that still land on another worker's queue (RSS, the tun flow
//    hash, no rule for them) are handed over the same way (counted as
//    misqueued).
// The rings are rte_rings, multi-producer / single-consumer, with counted
// ring_full drops when full. A flow comes in on one queue, so one lcore
// enqueues it in order into one ring: dispatch never reorders a flow.
#pragma once

#include <cstdint>
#include <cstdio>

#include "pipeline/layout.hpp"

namespace ufab::pipeline {

inline constexpr unsigned kRingSize = 4096;  // frames per worker RX ring / port TX ring

// "ufab-edge rx port=P mode=M queues=Q [why=...]", one line per port.
void print_rx_modes(std::FILE* out, const Layout& l);

}  // namespace ufab::pipeline
