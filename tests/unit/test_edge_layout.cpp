// Which worker does what (pipeline/layout.hpp; no EAL):
// 1. make_layout: local VMs to the worker with the fewest pairs so far
//    (config order, ties to the lower worker); a VM port polled by its first
//    VM's owner, each fabric port and each VM-side port without a VM by the
//    worker polling the fewest ports; one lcore runs everything (mixed); too
//    few lcores and a bad --lcore-map are refused with the fix named.
// 2. owner_of_wire_pair (a fabric frame's worker, by its wire pair id, source
//    VM id << 16 | destination VM id): the source's owner when it is local,
//    else the destination's, else the worker that owned the source when a
//    reload removed it (retire_local_vm: its pairs' finish-acks), else the
//    worker that received it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edge/config.hpp"
#include "pipeline/layout.hpp"

namespace ufab::pipeline {
namespace {

// Local VMs a1 (id 1, port 0), a2 (id 2, port 0), a3 (id 3, port 2) of
// tenant 100 and c1 (id 4, port 2) of tenant 200; remote VMs b1, b2 of
// tenant 100 and d1 of tenant 200: a1..a3 have two pairs each, c1 one.
// Ports: 0 and 2 VM-side, 1 the fabric, 3 VM-side with no VM.
edge::EdgeConfig config() {
  return edge::parse_config(R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
tenants:
  - {vni: 100, guarantee_gbps: 1}
  - {vni: 200, guarantee_gbps: 1}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 2, tenant: 100, mac: "02:00:00:00:0a:02", ip: 192.168.0.2, port: 0}
  - {name: a3, id: 3, tenant: 100, mac: "02:00:00:00:0a:03", ip: 192.168.0.3, port: 2}
  - {name: c1, id: 4, tenant: 200, mac: "02:00:00:00:0c:01", ip: 192.168.0.4, port: 2}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.1.1, host: hB}
  - {name: b2, id: 12, tenant: 100, ip: 192.168.1.2, host: hB}
  - {name: d1, id: 21, tenant: 200, ip: 192.168.1.3, host: hB}
)",
                            "layout.yaml");
}

constexpr uint32_t wire_id(uint32_t src, uint32_t dst) { return src << 16 | dst; }

TEST(MakeLayout, VmsToTheWorkerWithFewestPairsAndPortsToTheFewestPolls) {
  const edge::EdgeConfig cfg = config();
  const Layout l = make_layout(cfg, 4, {0, 1, 2}, 2);
  EXPECT_FALSE(l.mixed);
  EXPECT_EQ(l.control_lcore, 0u);
  EXPECT_EQ(l.worker_lcores, (std::vector<unsigned>{1, 2}));
  // a1 -> 0 (load 2, 0), a2 -> 1 (2, 2), a3 -> 0 (4, 2), c1 -> 1 (4, 3).
  EXPECT_EQ(l.vm_owner, (std::vector<uint16_t>{0, 1, 0, 1}));
  EXPECT_EQ(l.local_vm_of(1), 0);
  EXPECT_EQ(l.local_vm_of(4), 3);
  EXPECT_EQ(l.local_vm_of(11), -1);  // remote
  // Port 0 by a1's owner, port 2 by a3's (worker 0: polls 2, 0), then the
  // fabric port 1 and port 3 each to the worker polling the fewest.
  EXPECT_EQ(l.rx_worker, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(l.rx_mode, std::vector<RxMode>(4, RxMode::dispatch));
  EXPECT_EQ(l.rx_queues, std::vector<uint16_t>(4, 1));
}

TEST(MakeLayout, OneLcoreRunsControlAndTheOnlyWorker) {
  const Layout l = make_layout(config(), 4, {5}, 0);
  EXPECT_TRUE(l.mixed);
  EXPECT_EQ(l.worker_lcores, (std::vector<unsigned>{5}));
  EXPECT_EQ(l.vm_owner, (std::vector<uint16_t>{0, 0, 0, 0}));
  EXPECT_EQ(l.rx_worker, (std::vector<int>{0, 0, 0, 0}));
}

TEST(MakeLayout, RefusesTooFewLcoresAndABadMapNamingTheFix) {
  const edge::EdgeConfig cfg = config();
  try {
    make_layout(cfg, 4, {0, 1}, 2);
    FAIL() << "two workers on two lcores accepted";
  } catch (const LayoutError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--workers 2 needs 3 lcores (1 control + 2 workers), the EAL has 2 (-l 0,1)", 0),
              0u)
        << e.what();
  }
  try {
    make_layout(cfg, 4, {0, 1, 2}, 0, "0:1,7");
    FAIL() << "lcore 7 accepted";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("lcore 7 is not an EAL lcore: add it to -l"), std::string::npos) << e.what();
  }
  const Layout m = make_layout(cfg, 4, {0, 1, 2}, 0, "0:2,1");
  EXPECT_EQ(m.worker_lcores, (std::vector<unsigned>{2, 1}));
}

TEST(OwnerOfWirePair, SourceThenDestinationThenRetiredOwnerThenSelf) {
  Layout l = make_layout(config(), 4, {0, 1, 2}, 2);
  // A response to a1's pair to b1 (source a1, worker 0), and a probe from b1
  // to a2 (destination a2, worker 1), wherever they arrive.
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(1, 11), 1), 0);
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(11, 2), 0), 1);
  // Both local (a reply between two local VMs' ids): the source's owner.
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(2, 1), 0), 1);
  // Neither local: where it arrived.
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(11, 12), 1), 1);
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(11, 12), 0), 0);

  // A reload removes a1 (worker 0): its id names no VM, but the finish-acks
  // of its pairs (source a1) still go to worker 0.
  l.retire_local_vm(1, l.vm_owner[0]);
  EXPECT_EQ(l.local_vm_of(1), -1);
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(1, 11), 1), 0);
  // Frames towards a1 (data, probes: it is the destination) name no worker:
  // they stay where they arrived and are dropped there (unknown_vm).
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(11, 1), 1), 1);
  // a1 now remote, sending to a2: a2's owner.
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(1, 2), 0), 1);

  // a1 comes back as entry 0 owned by worker 1: its id names it again,
  // and its owner wins over the retired one.
  l.vm_owner[0] = 1;
  l.set_local_vm(1, 0);
  EXPECT_EQ(l.owner_of_wire_pair(wire_id(1, 11), 0), 1);
}

}  // namespace
}  // namespace ufab::pipeline
