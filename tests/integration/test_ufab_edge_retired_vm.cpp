// The finish of a removed local VM's pairs on an edge with two workers
// (pipeline/layout.hpp, Layout::retire_local_vm), in process on a real Edge
// whose workers the test steps itself. Local VMs a1 (id 1, worker 0) and a2
// (id 2, worker 1) on port 0 (net_null); remote VM b1 (id 11) on host hB;
// the fabric is port 1, a net_ring the test feeds, polled by worker 1 (the
// worker polling the fewest ports: layout.cpp), so fabric frames for a1's
// pairs are handed to worker 0 through its ring.
//  1. a1 sends a frame to b1; a1->b1's poll on worker 0 sends a probe; hB's
//     response arrives on port 1, worker 1 hands it to worker 0 (source VM
//     id 1 is local), and the pair is active on path 0.
//  2. Reload: a1 moves to hB (from `vms:` to `remote_vms:`, a migration).
//     a1->b1 is removed on worker 0 with its finish pending; a2 (worker 1)
//     gains a pair to a1.
//  3. a1->b1's finish leaves worker 0; hB's finish-ack arrives on port 1.
//     Its source VM id names no local VM any more: worker 1 hands it to
//     worker 0, which owned a1 (before this, worker 1 kept it: unknown_pair,
//     and worker 0 retried the finish until it gave up). The finish is done
//     and the slot is free after reclaim().
//  4. Fabric data from a1 (now remote) to a2 reaches port 0 on worker 1;
//     data and a probe from b1 to a1 are unknown_vm on worker 1.
// Every frame is counted: summed over both workers, rx + generated == sent +
// dropped + absorbed, with nothing queued and nothing left in the workers'
// rings.
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"
#include "pipeline/stages.hpp"
#include "probe/reflect.hpp"
#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/in_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kHostB = 0x0a000002, kA1 = 0xc0a80001, kA2 = 0xc0a80002, kB1 = 0xc0a8000b;
constexpr uint32_t kA1B1 = 1u << 16 | 11;  // wire pair id: source VM id << 16 | destination VM id

std::string config(bool a1_here) {
  const std::string a1 = "{name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1";
  return R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {unit_bw_gbps: 1}
tenants:
  - {vni: 100, guarantee_gbps: 1}
vms:
)" + (a1_here ? "  - " + a1 + ", port: 0}\n" : std::string()) +
         R"(  - {name: a2, id: 2, tenant: 100, mac: "02:00:00:00:0a:02", ip: 192.168.0.2, port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
  - {name: b1, id: 11, tenant: 100, ip: 192.168.0.11, host: hB}
)" + (a1_here ? std::string() : "  - " + a1 + ", host: hB}\n");
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "[" + x + "]";
  return s;
}

// hB's answer to message m (a response to a probe, a finish-ack to a
// finish): its one hop stamped as an idle 10G link with no other pair (and
// the finish acked there).
Frame answer(wire::Message m) {
  const uint8_t flags = wire::kHopStamped | (m.type == wire::MsgType::finish ? wire::kHopAck : 0);
  for (size_t h = 0; h < m.n_hop && h < wire::kMaxHops; ++h)
    m.hop[h] = wire::HopRecord{m.hop[h].w, 0, 0, 0, 4, flags, static_cast<uint8_t>(h)};
  m.hop_index = m.n_hop;
  return control(kHostB, route({0}), wire::reflect(m, kWireUnbound), 100);
}

// A ring a worker's TX buffer for a port pushes into, and what left.
struct Out {
  rte_ring* ring;
  std::vector<rte_mbuf*> got;
  explicit Out(const std::string& name) : ring(rte_ring_create(name.c_str(), 1024, SOCKET_ID_ANY, RING_F_SC_DEQ)) {}
  ~Out() {
    take();
    for (rte_mbuf* m : got) rte_pktmbuf_free(m);
    rte_ring_free(ring);
  }
  void take() {
    void* m = nullptr;
    while (rte_ring_dequeue(ring, &m) == 0) got.push_back(static_cast<rte_mbuf*>(m));
  }
  // The control messages of pair `pair` among what left, in order.
  std::vector<wire::Message> messages(uint32_t pair) {
    take();
    std::vector<wire::Message> out;
    for (rte_mbuf* m : got) {
      const std::span<const uint8_t> fr(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
      wire::FrameView v;
      wire::Message msg;
      if (wire::parse_frame(fr, v) == wire::WireError::ok && v.shim.next == wire::kNextControl &&
          wire::decode_message(fr.subspan(v.payload_offset, v.payload_len), msg) == wire::WireError::ok &&
          msg.pair_id == pair)
        out.push_back(msg);
    }
    return out;
  }
};

void run(const std::string& dir) {
  const std::string file = dir + "/edge.yaml", text = config(true);
  write_text(file, text);
  rte_ring* fabric_in = rte_ring_create("rvm_fabric", 1024, SOCKET_ID_ANY, 0);
  const int fabric = rte_eth_from_ring(fabric_in);
  ITEST_CHECK(fabric == 1, "net_ring port %d, want 1", fabric);
  if (fabric != 1) return;
  dpdk::PoolConfig pc;
  pc.n_mbufs = 2047;
  pc.name = "rvm_pool";
  rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
  dpdk::setup_port(1, pool, dpdk::PortConfig{});
  {
    edge::EdgeConfig cfg = edge::parse_config(text, file);
    pipeline::Edge e(cfg, text, pool, 2, pipeline::make_layout(cfg, 2, {0, 1, 2}, 2));
    pipeline::EdgeState &w0 = *e.shards[0], &w1 = *e.shards[1];
    Out fab0("rvm_fab0"), fab1("rvm_fab1"), vm0("rvm_vm0"), vm1("rvm_vm1");
    w0.tx[1].use_ring(fab0.ring), w1.tx[1].use_ring(fab1.ring);
    w0.tx[0].use_ring(vm0.ring), w1.tx[0].use_ring(vm1.ring);
    ITEST_CHECK(!e.mixed() && e.layout.vm_owner == std::vector<uint16_t>({0, 1}) && e.layout.rx_worker[0] == 0 &&
                    e.layout.rx_worker[1] == 1,
                "layout: a1 on worker %u, a2 on worker %u, port 0 polled by %d, port 1 by %d", e.layout.vm_owner[0],
                e.layout.vm_owner[1], e.layout.rx_worker[0], e.layout.rx_worker[1]);
    Nanos now = 1'000'000;
    const auto mbuf = [&](const Frame& f) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
      return m;
    };
    // Frames arrive on the fabric port: worker 1 polls it (poll_port:
    // dispatch), then worker 0 takes what was handed to it.
    const auto from_fabric = [&](const std::vector<Frame>& fs) {
      std::vector<rte_mbuf*> ms;
      for (const Frame& f : fs) ms.push_back(mbuf(f));
      ITEST_CHECK(rte_eth_tx_burst(1, 0, ms.data(), static_cast<uint16_t>(ms.size())) == ms.size(), "net_ring took %zu",
                  ms.size());
      ITEST_CHECK(pipeline::poll_port(w1, 1, now) == ms.size(), "worker 1 polled port 1");
      pipeline::poll_ring(w0, now);
      pipeline::poll_ring(w1, now);
      for (auto* s : {&w0, &w1})
        for (pipeline::TxBuffer& t : s->tx) t.flush();
      now += 10'000;
    };
    const auto step = [&](pipeline::EdgeState& s) {  // the worker's own steps (worker.cpp)
      pipeline::sched_tx(s, now);
      pipeline::poll_pairs(s, now);
      for (pipeline::TxBuffer& t : s.tx) t.flush();
    };
    const uint32_t p = w0.wire_pairs.lookup(&kA1B1);
    ITEST_CHECK(p == 0 && w1.wire_pairs.lookup(&kA1B1) == pipeline::HashTable::kMiss, "a1->b1 in worker 0's slot %u", p);
    if (p != 0) return;

    // 1. a1 -> b1: a probe, hB's response through worker 1, the pair active.
    rte_mbuf* f = mbuf(vm_frame(kA1, kB1, 1000, 200, 1));
    w0.stats.ports[0].rx += 1;  // as poll_port counts it (port 0 is net_null: the test hands the frame in)
    pipeline::vm_frames(w0, 0, &f, 1, now);
    step(w0);
    const std::vector<wire::Message> probes = fab0.messages(kA1B1);
    ITEST_CHECK(probes.size() == 1 && probes[0].type == wire::MsgType::probe, "1: %zu messages of a1->b1, want a probe",
                probes.size());
    if (probes.empty()) return;
    from_fabric({answer(probes[0])});
    ITEST_CHECK(w1.stats.handed_off == 1 && w0.stats.taken_over == 1 && w0.stats.absorbed == 1 &&
                    w0.pairs[p].state() == VmPair::State::active && w0.pairs[p].active_path() == 0,
                "1: response handed off %llu, taken over %llu, absorbed %llu; a1->b1 state %d",
                (unsigned long long)w1.stats.handed_off, (unsigned long long)w0.stats.taken_over,
                (unsigned long long)w0.stats.absorbed, static_cast<int>(w0.pairs[p].state()));
    step(w0);  // the frame leaves in the window the response opened
    ITEST_CHECK(w0.queued() == 0, "1: a1's frame left (queued %llu)", (unsigned long long)w0.queued());

    // 2. a1 migrates to hB.
    write_text(file, config(false));
    const pipeline::Control::ReloadResult rr = e.control.reload(now);
    ITEST_CHECK(rr.ok && joined(rr.changes) ==
                             "[local VM a1 removed: 1 pair(s), 0 queued frame(s) dropped]"
                             "[remote VM a1 added (host hB): 1 pair(s)]",
                "2: reload: ok %d %s %s", rr.ok, rr.error.c_str(), joined(rr.changes).c_str());
    const uint32_t wire_a2a1 = 2u << 16 | 1;
    ITEST_CHECK(!w0.live(p) && w0.pairs[p].finish_pending() && e.layout.local_vm_of(1) == -1 &&
                    e.layout.retired_owner[1] == 0 && w1.wire_pairs.lookup(&wire_a2a1) != pipeline::HashTable::kMiss,
                "2: a1->b1 removed with its finish pending, a1's id retired from worker 0, a2->a1 on worker 1");

    // 3. The finish, and hB's finish-ack through worker 1 to worker 0.
    step(w0);
    const std::vector<wire::Message> sent = fab0.messages(kA1B1);
    std::string types;
    for (const wire::Message& m : sent) types += " " + std::to_string(static_cast<int>(m.type));
    ITEST_CHECK(sent.size() >= 2 && sent.back().type == wire::MsgType::finish,
                "3: a1->b1's messages (types%s), want a finish last", types.c_str());
    if (sent.size() < 2 || sent.back().type != wire::MsgType::finish) return;
    const uint64_t absorbed = w0.stats.absorbed;
    from_fabric({answer(sent.back())});
    ITEST_CHECK(w1.stats.handed_off == 2 && w0.stats.taken_over == 2 && w0.stats.absorbed == absorbed + 1 &&
                    w1.stats.dropped(pipeline::Drop::unknown_pair) == 0,
                "3: finish-ack handed off %llu (want 2), absorbed on worker 0 %llu (want %llu), unknown_pair on "
                "worker 1 %llu",
                (unsigned long long)w1.stats.handed_off, (unsigned long long)w0.stats.absorbed,
                (unsigned long long)(absorbed + 1), (unsigned long long)w1.stats.dropped(pipeline::Drop::unknown_pair));
    ITEST_CHECK(!w0.pairs[p].finish_pending(), "3: a1->b1's finish is done");
    w0.reclaim();
    ITEST_CHECK(w0.slot[p] == pipeline::EdgeState::Slot::free && w0.removed_pairs.empty(), "3: slot %u free", p);

    // 4. Data from a1 (now remote) to a2; data and a probe from b1 to a1.
    const Frame inner = vm_frame(kA1, kA2, 2000, 100, 2), to_a1 = vm_frame(kB1, kA1, 2000, 100, 3);
    const uint64_t taken = w0.stats.taken_over;
    from_fabric({ufab_frame(kHostB, 100, 1u << 16 | 2, route({0}), wire::kNextData,
                            std::vector<uint8_t>(inner.begin(), inner.end())),
                 ufab_frame(kHostB, 100, 11u << 16 | 1, route({0}), wire::kNextData,
                            std::vector<uint8_t>(to_a1.begin(), to_a1.end())),
                 control(kHostB, route({0}), message(wire::MsgType::probe, 11u << 16 | 1, 64, {1}, 1), 100)});
    vm1.take();
    ITEST_CHECK(w0.stats.taken_over == taken && vm1.got.size() == 1 &&
                    rte_pktmbuf_data_len(vm1.got[0]) == inner.size() &&
                    std::memcmp(rte_pktmbuf_mtod(vm1.got[0], const uint8_t*) + 12, inner.data() + 12, inner.size() - 12) == 0 &&
                    w1.stats.dropped(pipeline::Drop::unknown_vm) == 2,
                "4: a1's data to a2 on worker 1's port 0 (%zu frames), unknown_vm %llu (want 2)", vm1.got.size(),
                (unsigned long long)w1.stats.dropped(pipeline::Drop::unknown_vm));

    // Every frame counted, over both workers.
    fab0.take(), fab1.take(), vm0.take();
    const pipeline::EdgeTotals t = pipeline::totals(e);
    const uint64_t out = fab0.got.size() + fab1.got.size() + vm0.got.size() + vm1.got.size();
    // The frames sent went into the test's rings (counted as handed off,
    // so as queued in rings): nothing else is queued or in a ring.
    ITEST_CHECK(t.stats.in_rings() == out && t.queued == out &&
                    t.stats.rx() + t.stats.generated == out + t.stats.dropped() + t.stats.absorbed,
                "in rings %llu, queued %llu; rx %llu + generated %llu = sent %llu + dropped %llu + absorbed %llu",
                (unsigned long long)t.stats.in_rings(), (unsigned long long)t.queued,
                (unsigned long long)t.stats.rx(), (unsigned long long)t.stats.generated, (unsigned long long)out,
                (unsigned long long)t.stats.dropped(), (unsigned long long)t.stats.absorbed);
  }
  rte_eth_dev_stop(1);
  rte_eth_dev_close(1);
  rte_ring_free(fabric_in);
  rte_mempool_free(pool);
}

}  // namespace

int main(int argc, char** argv) {
  char tmpl[] = "/tmp/ufab_edge_rvm.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const int rc = run_in_process(argc, argv, "ufab_edge_retired_vm", [&] { run(dir); },
                                "PASS: a removed local VM's finish-ack reaches the worker that owned it; every frame "
                                "counted",
                                1);
  std::remove((dir + "/edge.yaml").c_str());
  rmdir(dir.c_str());
  return rc;
}
