// The frame of the in-process ufab-edge tests (a real EdgeState or Edge in
// the test's own process): an EAL on lcore 0 with two net_null ports, or
// more (never started; a test points a TX buffer at an rte_ring to read
// what leaves).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/edge.hpp"
#include "tests/integration/pcap_io.hpp"

namespace ufab::itest {

// argv[1] empty: ufab-edge was not built (prints SKIP, returns 77). Else
// runs body inside the EAL (`ports` net_null ports), removes its runtime
// files, and prints pass_line (returns 0) or the number of failed checks
// (returns 1).
int run_in_process(int argc, char** argv, const char* name, const std::function<void()>& body, const char* pass_line,
                   int ports = 2);

// The usual configuration of these tests: local VM a1 (id 1, tenant 100 with
// a 1 Gb/s guarantee, 192.168.0.1 on port 0; the fabric is port 1) and
// remote VMs b1..bN (ids 11.., 192.168.1.1.., fd00::b:1.., tenant 100; a1 is
// 192.168.0.1 and fd00::a:1) on host hB (one
// path, base RTT 100 us): one pair a1 -> bi each. `params` is the body of
// the params map.
std::string one_vm_config(const std::string& params, int remote_vms);

// A real pipeline::Edge made from a configuration text on the EAL's ports,
// one lcore (the only worker is shard 0), its fabric port's (1) TX buffer into a ring the
// test reads. `tag` keeps the pool's and ring's names unique in the
// process. Inside run_in_process's body only.
class EdgeRig {
 public:
  // file: the name the configuration goes by (a reload reads it).
  EdgeRig(const std::string& config_text, const std::string& tag, const std::string& file = "rig.yaml");
  ~EdgeRig();
  EdgeRig(const EdgeRig&) = delete;
  EdgeRig& operator=(const EdgeRig&) = delete;

  // The pair of local VM id -> remote VM id (kMiss if none).
  uint32_t pair(uint32_t local_id, uint32_t remote_id) const;
  // f in a fresh mbuf received on `port` (nullptr when the pool is empty).
  rte_mbuf* mbuf(const Frame& f, uint16_t port);
  // fs received on `port` at `now`, as the worker's poll would take them:
  // counted in the port's rx, handed to fabric_frames (a fabric port) or
  // vm_frames, and every TX buffer flushed.
  void receive(uint16_t port, const std::vector<Frame>& fs, Nanos now);
  // What the edge sent to the fabric port since the last call (flushes its
  // TX buffer first); the caller frees the mbufs.
  std::vector<rte_mbuf*> fabric_tx();

 private:
  edge::EdgeConfig cfg_;  // outlives the Edge, which refers to it
  rte_mempool* pool_ = nullptr;
  rte_ring* fabric_out_ = nullptr;
  std::unique_ptr<pipeline::Edge> edge_;

 public:
  pipeline::Edge& e;
  pipeline::EdgeState& s;
};

// A VM-side port's TX buffer pointed at a ring the test reads: drain()
// takes what left since the last call into `got` (copies; the mbufs are
// freed) and returns how many; `count` is the total.
struct PortOut {
  rte_ring* ring;
  std::vector<Frame> got;
  uint64_t count = 0;
  PortOut(pipeline::EdgeState& s, uint16_t port, const std::string& name);
  ~PortOut();
  PortOut(const PortOut&) = delete;
  PortOut& operator=(const PortOut&) = delete;
  unsigned drain();
};

}  // namespace ufab::itest
