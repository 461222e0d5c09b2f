#include "tests/integration/in_process.hpp"

#include <rte_ethdev.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/mempool.hpp"
#include "pipeline/layout.hpp"
#include "pipeline/stages.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"

namespace ufab::itest {

std::string one_vm_config(const std::string& params, int remote_vms) {
  std::string c = R"(edge: {fabric_port: 1, ip: 10.0.0.1, mac: "02:00:00:00:00:01"}
params: {)" + params + R"(}
tenants:
  - {vni: 100, guarantee_gbps: 1}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, ip6: "fd00::a:1", port: 0}
hosts:
  - {name: hB, ip: 10.0.0.2, mac: "02:00:00:00:00:02", base_rtt_us: 100, paths: [[1]]}
remote_vms:
)";
  for (int i = 1; i <= remote_vms; ++i)
    c += "  - {name: b" + std::to_string(i) + ", id: " + std::to_string(10 + i) + ", tenant: 100, ip: 192.168.1." +
         std::to_string(i) + ", ip6: \"fd00::b:" + std::to_string(i) + "\", host: hB}\n";
  return c;
}

int run_in_process(int argc, char** argv, const char* name, const std::function<void()>& body, const char* pass_line,
                   int ports) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string prefix = std::string(name) + std::to_string(getpid());
  std::vector<std::string> args = edge_eal(prefix, "0");
  args.insert(args.begin(), name);
  for (int p = 0; p < ports; ++p) args.insert(args.end(), {"--vdev", "net_null" + std::to_string(p)});
  std::vector<char*> eal_argv = c_argv(args);
  {
    dpdk::Eal eal(static_cast<int>(args.size()), eal_argv.data());
    body();
  }
  remove_dpdk_runtime(prefix);
  if (g_failures != 0) {
    std::printf("%d checks failed\n", g_failures);
    return 1;
  }
  std::printf("%s\n", pass_line);
  return 0;
}

namespace {

rte_mempool* make_pool(const std::string& tag) {
  dpdk::PoolConfig pc;
  pc.n_mbufs = 2047;
  pc.name = "rig_pool_" + tag;
  return dpdk::create_pktmbuf_pool(pc);  // throws on failure
}

rte_ring* make_ring(const std::string& tag) {
  rte_ring* r = rte_ring_create(("rig_out_" + tag).c_str(), 1024, SOCKET_ID_ANY, RING_F_SC_DEQ);
  if (r == nullptr) throw std::runtime_error("cannot create ring rig_out_" + tag);
  return r;
}

std::unique_ptr<pipeline::Edge> make_edge(edge::EdgeConfig& cfg, const std::string& text, rte_mempool* pool) {
  const uint16_t n = rte_eth_dev_count_avail();
  return std::make_unique<pipeline::Edge>(cfg, text, pool, n, pipeline::make_layout(cfg, n, {0}, 0));
}

}  // namespace

EdgeRig::EdgeRig(const std::string& config_text, const std::string& tag, const std::string& file)
    : cfg_(edge::parse_config(config_text, file)),
      pool_(make_pool(tag)),
      fabric_out_(make_ring(tag)),
      edge_(make_edge(cfg_, config_text, pool_)),
      e(*edge_),
      s(*edge_->shards[0]) {
  s.tx[1].use_ring(fabric_out_);
}

EdgeRig::~EdgeRig() {
  edge_.reset();  // its queued frames go back to the pool first
  for (rte_mbuf* m : fabric_tx()) rte_pktmbuf_free(m);
  rte_ring_free(fabric_out_);
  rte_mempool_free(pool_);
}

uint32_t EdgeRig::pair(uint32_t local_id, uint32_t remote_id) const {
  const uint32_t wire_id = local_id << 16 | remote_id;
  return s.wire_pairs.lookup(&wire_id);
}

rte_mbuf* EdgeRig::mbuf(const Frame& f, uint16_t port) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  char* d = m != nullptr ? rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())) : nullptr;
  if (d == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  std::memcpy(d, f.data(), f.size());
  m->port = port;
  return m;
}

void EdgeRig::receive(uint16_t port, const std::vector<Frame>& fs, Nanos now) {
  std::vector<rte_mbuf*> ms;
  for (const Frame& f : fs) ms.push_back(mbuf(f, port));
  s.stats.ports[port].rx += ms.size();  // as poll_port counts them
  if (e.cfg.is_fabric_port(port))
    pipeline::fabric_frames(s, port, ms.data(), static_cast<uint16_t>(ms.size()), now);
  else
    pipeline::vm_frames(s, port, ms.data(), static_cast<uint16_t>(ms.size()), now);
  for (pipeline::TxBuffer& t : s.tx) t.flush();
}

std::vector<rte_mbuf*> EdgeRig::fabric_tx() {
  if (edge_ != nullptr) s.tx[1].flush();
  std::vector<rte_mbuf*> out;
  void* obj = nullptr;
  while (rte_ring_dequeue(fabric_out_, &obj) == 0) out.push_back(static_cast<rte_mbuf*>(obj));
  return out;
}

PortOut::PortOut(pipeline::EdgeState& s, uint16_t port, const std::string& name)
    : ring(rte_ring_create(name.c_str(), 1024, SOCKET_ID_ANY, RING_F_SC_DEQ)) {
  s.tx[port].use_ring(ring);
}

PortOut::~PortOut() {
  drain();
  rte_ring_free(ring);
}

unsigned PortOut::drain() {
  void* m[64];
  unsigned total = 0;
  for (unsigned n; (n = rte_ring_dequeue_burst(ring, m, 64, nullptr)) != 0;) {
    for (unsigned i = 0; i < n; ++i) {
      auto* mb = static_cast<rte_mbuf*>(m[i]);
      const auto* d = rte_pktmbuf_mtod(mb, const uint8_t*);
      got.emplace_back(d, d + rte_pktmbuf_data_len(mb));
      rte_pktmbuf_free(mb);
    }
    total += n;
  }
  count += total;
  return total;
}

}  // namespace ufab::itest
