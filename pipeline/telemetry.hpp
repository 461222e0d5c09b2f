// DPDK telemetry commands (usable with the stock dpdk-telemetry.py; the
// contract is docs of the edge helpers, edge/README.md lists them):
//   /ufab/stats          counters over all workers, drops per reason and port, conservation
//   /ufab/tenants        per tenant: guarantee, tokens per VM, weight class, pairs, backlog
//   /ufab/paths          per remote host: base RTT, candidate paths, pairs active on each, drained
//   /ufab/pairs[,FIRST]  up to 64 VM-pairs from index FIRST: state, path, window, tokens, counters
//   /ufab/pair,INDEX     one pair and its last 64 samples (history.hpp)
//   /ufab/tenant_set,VNI,GBPS   /ufab/path_drain,HOST,PATH   /ufab/path_undrain,HOST,PATH
//   /ufab/reload         re-read the configuration file (as SIGHUP)
//   /ufab/workers        per worker lcore: pairs, rx, tx, queued, busy fraction
// The telemetry thread never reads the edge's state: a callback posts a
// request in a one-slot mailbox and waits (1 s at most); the control lcore
// answers it between two of its steps (Telemetry::serve), reading each
// worker's state through a command that worker runs between two bursts
// (edge.hpp), so the data path takes no lock.
#pragma once

#include <atomic>

#include "control/clock.hpp"
#include "pipeline/edge.hpp"

struct rte_tel_data;

namespace ufab::pipeline {

class Telemetry {
 public:
  // Registers the commands (once per process) and points them at e.
  explicit Telemetry(Edge& e);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  // Control lcore: answers a pending request, if any.
  void serve(Nanos now);

  struct Request {
    int cmd = 0;
    const char* params = nullptr;
    rte_tel_data* d = nullptr;
    int rc = 0;
    std::atomic<bool> done{false};
  };

 private:
  Edge& e_;
};

}  // namespace ufab::pipeline
