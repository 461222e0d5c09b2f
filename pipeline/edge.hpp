// The whole ufab-edge across its lcores (layout.hpp): one EdgeState per
// worker, the rings between them, the control lcore's state (control.hpp),
// the run phase the stop sequence moves through, and the one way the control
// lcore touches a worker's state: a command (a function) posted in the
// worker's command ring (rte_ring, single producer / single consumer) that the
// worker runs between two bursts. The data path takes no lock.
#pragma once

#include <rte_ring.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/control.hpp"
#include "pipeline/edge_state.hpp"
#include "pipeline/layout.hpp"
#include "pipeline/port_link.hpp"

namespace ufab::pipeline {

// running: everything; draining: VM ports no longer polled, queues drain;
// finishing: pairs finished, waiting for finish-acks; exit: workers return.
enum class Phase : int { running, draining, finishing, exit };

struct Command {
  std::function<void(EdgeState&)> fn;
  std::atomic<bool> done{false};
};

class Edge {
 public:
  // cfg must outlive the Edge; cfg_text is the configuration file as loaded
  // (reloads compare against it). The Edge reserves room in cfg.remote_vms,
  // cfg.hosts and cfg.vms for params.spare_remote_vms, spare_hosts and
  // spare_local_vms more, which reloads append (remote_vms.hpp, local_vms.hpp).
  // Ports: the n_ports the EAL found at start-up (0..n_ports-1), and room
  // for spare_ports more that /ufab/port_add may attach at runtime (ports.hpp):
  // every per-port array is sized for port_capacity() from the start.
  Edge(edge::EdgeConfig& cfg, std::string cfg_text, rte_mempool* pool, uint16_t n_ports, Layout layout,
       uint16_t spare_ports = 0);
  ~Edge();
  Edge(const Edge&) = delete;
  Edge& operator=(const Edge&) = delete;

  // After the port is set up with n_txq TX queues: workers 0..n_txq-1 send
  // on their own queue, the others through the port's TX ring to worker 0.
  // n_rxq > 1: an RX queue per worker (layout.hpp, RxMode::spread until
  // rte_flow rules steer it); 1: dispatch, `why` says why.
  // Every worker's TX buffer for the port is set in a command it runs
  // (directly while the workers are not running).
  void attach_port(uint16_t port, uint16_t n_txq, uint16_t n_rxq = 1, const std::string& why = "");
  // Ports the edge has now (start-up ones, and those ports.hpp attached and
  // not removed); only the control lcore reads it.
  bool port_present(uint16_t port) const { return port < present_.size() && present_[port] != 0; }
  void set_port_present(uint16_t port, bool on) { present_[port] = on ? 1 : 0; }
  uint16_t port_capacity() const { return static_cast<uint16_t>(present_.size()); }
  const std::vector<uint8_t>& ports_present() const { return present_; }
  rte_mempool* pool() const { return pool_; }
  bool rx_queue_per_worker = true;  // --rx-queues (main): for ports attached at runtime as at start-up

  // Runs fn on worker w's lcore between two of its bursts and waits for it
  // (directly when mixed or when the workers are not running).
  void on_worker(size_t w, const std::function<void(EdgeState&)>& fn);
  void on_workers(const std::function<void(EdgeState&)>& fn) {
    for (size_t w = 0; w < shards.size(); ++w) on_worker(w, fn);
  }
  // Worker side: runs the commands posted to this worker.
  void serve_commands(EdgeState& s);

  const edge::EdgeConfig& cfg;
  std::string cfg_text;
  // The configuration as the control lcore changes it (VMs and hosts
  // appended or marked removed, remote_vms.hpp, local_vms.hpp); everyone
  // else reads cfg.
  edge::EdgeConfig& live_cfg() { return cfg_rw_; }
  uint32_t remote_vm_room = 0;   // entries a reload may still append to cfg.remote_vms
  uint32_t host_room = 0;        // ... and to cfg.hosts
  uint32_t local_vm_room = 0;    // ... and to cfg.vms (local_vms.hpp)
  uint32_t tenant_room = 0;      // ... and to cfg.tenants (tenants.hpp)
  uint32_t next_pair_index = 0;  // PairMeta::global of the next pair a reload makes
  // Per port, the RSS hash types setup_port enabled (main): a reload that
  // changes the local VMs programs the VM ports' redirection tables again
  // with them (rss_reta.hpp).
  std::vector<uint64_t> rss_hf;
  Layout layout;
  // Each port's link (port_link.hpp); main() watches each port once it has
  // started. Before the shards: their TX buffers point into it.
  PortLinks links;
  std::vector<std::unique_ptr<EdgeState>> shards;
  Control control;
  std::atomic<Phase> phase{Phase::running};
  std::atomic<bool> workers_running{false};

  bool mixed() const { return layout.mixed; }

 private:
  edge::EdgeConfig& cfg_rw_;
  rte_mempool* pool_;
  std::vector<uint8_t> present_;
  std::vector<rte_ring*> rx_rings_, cmd_rings_, tx_rings_;
};

// Counters summed over the workers (each copied on its own lcore, between
// two bursts), the control lcore's token rounds, and what is queued: every
// scheduler plus the frames inside the rings. The sum balances:
// rx + generated == tx + queued + dropped + absorbed.
struct EdgeTotals {
  EdgeStats stats;
  uint64_t queued = 0;
  std::vector<EdgeStats> per_worker;
  std::vector<uint64_t> worker_queued, worker_pairs, worker_room;  // room: EdgeState::room()
  std::vector<double> worker_busy;
};
EdgeTotals totals(Edge& e);

}  // namespace ufab::pipeline
