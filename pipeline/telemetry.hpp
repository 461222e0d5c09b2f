// DPDK telemetry commands (usable with the stock dpdk-telemetry.py):
//   /ufab/stats          counters, drops per reason, the conservation check
//   /ufab/tenants        per tenant: guarantee, tokens per VM, weight class, pairs, backlog
//   /ufab/paths          per remote host: base RTT, candidate paths, pairs active on each
//   /ufab/pairs[,FIRST]  up to 64 VM-pairs from index FIRST: state, path, window, tokens, counters
// The telemetry thread never reads the worker's state: a callback posts a
// request in a one-slot mailbox and waits (1 s at most); the worker answers
// it between two bursts (Telemetry::serve, one relaxed load per loop when
// nothing is asked), so the data path takes no lock.
#pragma once

#include <atomic>

#include "control/clock.hpp"
#include "pipeline/edge_state.hpp"

struct rte_tel_data;

namespace ufab::pipeline {

class Telemetry {
 public:
  // Registers the commands (once per process) and points them at s.
  explicit Telemetry(EdgeState& s);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  // Worker side: answers a pending request, if any.
  void serve(Nanos now);

  struct Request {
    int cmd = 0;
    const char* params = nullptr;
    rte_tel_data* d = nullptr;
    int rc = 0;
    std::atomic<bool> done{false};
  };

 private:
  EdgeState& s_;
};

}  // namespace ufab::pipeline
