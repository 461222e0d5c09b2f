#include "pipeline/edge.hpp"

#include <rte_pause.h>

#include <algorithm>
#include <stdexcept>

#include "pipeline/dispatch.hpp"
#include "pipeline/log.hpp"

namespace ufab::pipeline {

namespace {

rte_ring* make_ring(const std::string& name, unsigned flags) {
  rte_ring* r = rte_ring_create(name.c_str(), kRingSize, SOCKET_ID_ANY, flags | RING_F_EXACT_SZ);
  if (r == nullptr) throw std::runtime_error("cannot create ring " + name + " (out of memory? raise -m)");
  return r;
}

}  // namespace

namespace {
// Before anything refers into it: the entries reloads append never move it.
edge::EdgeConfig& with_room(edge::EdgeConfig& c) {
  c.vms.reserve(c.vms.size() + c.spare_local_vms);
  c.remote_vms.reserve(c.remote_vms.size() + c.spare_remote_vms);
  c.hosts.reserve(c.hosts.size() + c.spare_hosts);
  c.tenants.reserve(c.tenants.size() + c.spare_tenants);
  return c;
}
}  // namespace

namespace {
// The start-up ports and room for `spare` more, within DPDK's port ids.
uint16_t capacity(uint16_t n_ports, uint16_t spare) {
  return static_cast<uint16_t>(std::min<unsigned>(RTE_MAX_ETHPORTS, unsigned{n_ports} + spare));
}
}  // namespace

Edge::Edge(edge::EdgeConfig& c, std::string text, rte_mempool* pool, uint16_t n_ports, Layout l, uint16_t spare_ports)
    : cfg(with_room(c)),
      cfg_text(std::move(text)),
      layout(std::move(l)),
      links(capacity(n_ports, spare_ports)),
      control(*this),
      cfg_rw_(c),
      pool_(pool),
      present_(capacity(n_ports, spare_ports), 0) {
  std::fill(present_.begin(), present_.begin() + n_ports, 1);
  layout.reserve_ports(port_capacity());
  remote_vm_room = c.spare_remote_vms;
  host_room = c.spare_hosts;
  local_vm_room = c.spare_local_vms;
  tenant_room = c.spare_tenants;
  layout.vm_owner.reserve(c.vms.size() + c.spare_local_vms);  // read by every lcore while a reload appends
  for (size_t w = 0; w < layout.workers(); ++w) {
    shards.push_back(std::make_unique<EdgeState>(cfg, pool, n_ports, layout, static_cast<uint16_t>(w)));
    shards.back()->reserve_ports(port_capacity());
    next_pair_index += static_cast<uint32_t>(shards.back()->pairs.size());
  }
  if (!layout.mixed) {
    for (size_t w = 0; w < layout.workers(); ++w) {
      rx_rings_.push_back(make_ring("ufab_rx" + std::to_string(w), RING_F_SC_DEQ));
      cmd_rings_.push_back(make_ring("ufab_cmd" + std::to_string(w), RING_F_SP_ENQ | RING_F_SC_DEQ));
    }
    for (auto& s : shards) {
      s->rx_ring = rx_rings_[s->worker];
      s->peer_rings = rx_rings_;
    }
  }
  control.init();
}

Edge::~Edge() {
  shards.clear();  // frees what the schedulers still hold
  for (auto* v : {&rx_rings_, &cmd_rings_, &tx_rings_})
    for (rte_ring* r : *v) {
      void* m = nullptr;
      if (v != &cmd_rings_)
        while (rte_ring_dequeue(r, &m) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
      rte_ring_free(r);
    }
}

void Edge::attach_port(uint16_t port, uint16_t n_txq, uint16_t n_rxq, const std::string& why) {
  layout.rx_queues[port] = n_rxq;
  layout.rx_mode[port] = n_rxq > 1 ? RxMode::spread : RxMode::dispatch;
  layout.rx_why[port] = n_rxq > 1 ? "" : why;
  // Workers without a TX queue of their own send through the port's TX
  // ring, drained by worker 0 (one per port id, kept if the port goes and
  // another takes its id: ports.hpp).
  rte_ring* r = nullptr;
  if (n_txq < shards.size()) {
    const std::string name = "ufab_tx" + std::to_string(port);
    r = rte_ring_lookup(name.c_str());
    if (r == nullptr) {
      r = make_ring(name, RING_F_SC_DEQ);
      tx_rings_.push_back(r);
    }
  }
  on_workers([&](EdgeState& s) {
    s.tx[port] = TxBuffer(port, static_cast<uint16_t>(s.worker < n_txq ? s.worker : 0), &s.stats, &links[port]);
    if (r != nullptr && s.worker >= n_txq) s.tx[port].use_ring(r);
    if (s.worker == 0) s.tx_rings[port] = r;
  });
  if (r == nullptr) return;
  UFAB_LOG(INFO, "port %u has %u TX queue(s) for %zu workers: workers %u.. send through worker 0", port, n_txq,
           shards.size(), n_txq);
}

void Edge::on_worker(size_t w, const std::function<void(EdgeState&)>& fn) {
  if (layout.mixed || !workers_running.load(std::memory_order_acquire)) {
    fn(*shards[w]);
    return;
  }
  Command c;
  c.fn = fn;
  while (rte_ring_sp_enqueue(cmd_rings_[w], &c) != 0) rte_pause();
  while (!c.done.load(std::memory_order_acquire)) rte_pause();
}

void Edge::serve_commands(EdgeState& s) {
  if (cmd_rings_.empty()) return;
  void* p = nullptr;
  while (rte_ring_sc_dequeue(cmd_rings_[s.worker], &p) == 0) {
    auto* c = static_cast<Command*>(p);
    c->fn(s);
    c->done.store(true, std::memory_order_release);
  }
}

EdgeTotals totals(Edge& e) {
  EdgeTotals t;
  const size_t n = e.shards.size();
  t.per_worker.resize(n);
  t.worker_queued.resize(n);
  t.worker_pairs.resize(n);
  t.worker_room.resize(n);
  t.worker_busy.resize(n);
  for (size_t w = 0; w < n; ++w)
    e.on_worker(w, [&](EdgeState& s) {
      t.per_worker[w] = s.stats;
      t.worker_queued[w] = s.queued();
      t.worker_pairs[w] = s.live_pairs();
      t.worker_room[w] = s.room();
      t.worker_busy[w] = s.loop_ns != 0 ? static_cast<double>(s.busy_ns) / static_cast<double>(s.loop_ns) : 0;
    });
  for (size_t w = 0; w < n; ++w) {
    t.stats.add(t.per_worker[w]);
    t.queued += t.worker_queued[w];
  }
  t.stats.token_rounds += e.control.rounds;
  t.stats.token_rounds_stretched += e.control.stretched;
  t.stats.token_vm_assignments += e.control.vms_assigned;
  t.queued += t.stats.in_rings();
  return t;
}

}  // namespace ufab::pipeline
