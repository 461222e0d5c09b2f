// ufab-traffic's poll loop on DPDK ports: paced generation of the flows
// (one frame template per flow, sequence + timestamp patched in), a sink on
// every port, and an idle back-off so many processes can share few cores.
#pragma once

#include <csignal>
#include <cstdint>
#include <vector>

#include "deploy/traffic/options.hpp"
#include "deploy/traffic/profile.hpp"
#include "deploy/traffic/tally.hpp"

struct rte_mempool;
struct rte_mbuf;

namespace ufab::traffic {

uint64_t mono_ns();  // CLOCK_MONOTONIC (vDSO, no syscall)

struct PortCounters {
  uint64_t rx = 0, tx = 0, tx_retries = 0, rx_bytes = 0, tx_bytes = 0;
};

struct FlowState {
  FlowSpec spec;
  Pacer pacer;
  std::vector<uint8_t> tmpl;  // the whole frame with seq = ts = 0
  uint64_t seq = 0;
  uint64_t alloc_fail = 0;
};

class Engine {
 public:
  static constexpr uint16_t kMaxBurst = 64;
  Engine(const Options& o, rte_mempool* pool, uint16_t n_ports);
  ~Engine();
  // Runs until duration, signal, or idle exit. t0: CLOCK_MONOTONIC of scenario time 0.
  void run(uint64_t t0, const volatile std::sig_atomic_t* stop);

  const Tally& tally() const { return tally_; }
  const std::vector<FlowState>& flows() const { return flows_; }
  const std::vector<PortCounters>& ports() const { return ports_; }
  uint64_t elapsed_ns() const { return elapsed_; }

 private:
  uint32_t receive(uint16_t port, uint64_t now, uint64_t mono);
  uint32_t generate(uint64_t now, uint64_t mono);
  uint32_t flush(uint16_t port);
  uint64_t next_due(uint64_t now) const;

  const Options& opt_;
  rte_mempool* pool_;
  Tally tally_;
  std::vector<FlowState> flows_;
  std::vector<PortCounters> ports_;
  std::vector<std::vector<rte_mbuf*>> pending_;  // frames the PMD refused, retried first (backpressure)
  uint64_t elapsed_ = 0;
};

}  // namespace ufab::traffic
