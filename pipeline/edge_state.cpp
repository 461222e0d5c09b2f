#include "pipeline/edge_state.hpp"

#include <rte_byteorder.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace ufab::pipeline {

namespace {

// n_slots: the pairs at start-up and the spare slots (params.spare_pairs).
HierSchedulerConfig sched_config(const edge::EdgeConfig& c, size_t n_slots) {
  HierSchedulerConfig s;
  // Room for the tenants reloads add (params.spare_tenants, tenants.hpp).
  s.max_tenants = static_cast<uint32_t>(
      std::min<size_t>(c.tenants.size() + c.spare_tenants, HierScheduler<rte_mbuf*>::kMaxTenants));
  s.max_pairs = static_cast<uint32_t>(std::max<size_t>(n_slots, 1));
  s.flows_per_pair = c.flows_per_pair;
  s.queue_capacity = c.queue_capacity;
  // The pool never holds more packets than there are mbufs.
  s.pool_packets = std::min<uint32_t>(c.mbufs, s.max_pairs * c.flows_per_pair * c.queue_capacity);
  s.pace_depth_ns = c.pair_pacing_depth_ns;
  s.window_whole_packets = c.pair_pacing;  // a paced pair's rate is its pace; see HierSchedulerConfig
  return s;
}

// Pairs of the local VMs `worker` owns; with ip6_only, those whose two VMs have IPv6.
size_t count_pairs(const edge::EdgeConfig& c, const Layout& l, uint16_t worker, bool ip6_only = false) {
  size_t n = 0;
  for (size_t v = 0; v < c.vms.size(); ++v)
    if (l.vm_owner[v] == worker)
      for (const edge::VmCfg& r : c.remote_vms)
        n += c.vms[v].vni == r.vni && (!ip6_only || (c.vms[v].ip6 != edge::Ip6{} && r.ip6 != edge::Ip6{}));
  return n;
}

// Keys the worker's classification cache may hold beside its pairs' (the
// cache is sized by both): for each local VM `worker` owns, the other local
// VMs of its tenant, whose frames it switches without a pair (vm_local.cpp)
// and caches like a pair's. With ip6_only, VMs with IPv6 on both sides. A
// worker with local VMs and no pairs still gets a cache.
size_t count_local_keys(const edge::EdgeConfig& c, const Layout& l, uint16_t worker, bool ip6_only = false) {
  std::unordered_map<uint32_t, size_t> per_vni;  // local VMs of each tenant (with IPv6: ip6_only)
  const auto counts = [&](const edge::VmCfg& v) { return !ip6_only || v.ip6 != edge::Ip6{}; };
  for (const edge::VmCfg& v : c.vms) per_vni[v.vni] += counts(v);
  size_t n = 0;
  for (size_t v = 0; v < c.vms.size(); ++v)
    if (l.vm_owner[v] == worker && counts(c.vms[v])) n += per_vni[c.vms[v].vni] - 1;
  return n;
}

wire::SourceRoute to_route(const std::vector<uint16_t>& labels) {
  wire::SourceRoute r;
  r.n_labels = static_cast<uint8_t>(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) r.label[i] = labels[i];
  return r;
}

// The route, outer source port and uplink a host's responses and finish-acks take.
void set_reply(HostRoutes& hr, const edge::PathCfg& p) {
  hr.reply = to_route(p.labels);
  hr.reply_src_port = p.udp_src_port;
  hr.reply_port = p.port;
}

// Remote VMs with a MAC (remote_vms[].mac; all zero: none given), and room
// for those a reload may add.
uint32_t count_arp_targets(const edge::EdgeConfig& c) {
  uint32_t n = c.spare_remote_vms;
  for (const edge::VmCfg& v : c.remote_vms) n += v.mac != edge::Mac{};
  return n;
}

std::string unique(const char* what) { return HashTable::unique_name(what); }

}  // namespace

EdgeState::EdgeState(const edge::EdgeConfig& c, rte_mempool* mp, uint16_t n_ports, const Layout& l, uint16_t w)
    : EdgeState(c, mp, n_ports, l, w, count_pairs(c, l, w)) {}

EdgeState::EdgeState(const edge::EdgeConfig& c, rte_mempool* mp, uint16_t n_ports, const Layout& l, uint16_t w,
                     size_t n_pairs)
    : cfg(c),
      pool(mp),
      burst(static_cast<uint16_t>(std::min<uint32_t>(c.burst, TxBuffer::kCap))),
      layout(l),
      worker(w),
      pair_capacity(static_cast<uint32_t>(n_pairs + c.spare_pairs)),
      sched(sched_config(c, pair_capacity)),
      vm_capacity(c.vms.size() + c.spare_local_vms),
      classify(unique("cls"), std::max<uint32_t>(pair_capacity, 1), sizeof(ClassifyKey), ClassifyKey::table_hash),
      // Sized by the start-up keys: pairs added later share it (a cache
      // never fills), and the data path's footprint stays as it was.
      classify_cache(c.classify_cache ? static_cast<uint32_t>(n_pairs + count_local_keys(c, l, w)) : 0),
      local_vms(unique("vm"), static_cast<uint32_t>(vm_capacity), sizeof(VmKey)),
      vm_src(unique("src"), static_cast<uint32_t>(vm_capacity), sizeof(ClassifyKey), ClassifyKey::table_hash),
      wire_pairs(unique("wp"), std::max<uint32_t>(pair_capacity, 1), sizeof(uint32_t)),
      host_by_ip(unique("host"), static_cast<uint32_t>(c.hosts.size() + c.spare_hosts), sizeof(uint32_t)),
      incoming_tbl(unique("in"), c.max_incoming, sizeof(IncomingKey)),
      arp_targets(unique("arp"), std::max<uint32_t>(count_arp_targets(c), 1), sizeof(VmKey)),
      ip6(c, static_cast<uint32_t>(count_pairs(c, l, w, true) + c.spare_pairs)),
      classify6_cache(c.classify_cache ? static_cast<uint32_t>(count_pairs(c, l, w, true) + count_local_keys(c, l, w, true))
                                       : 0),
      timers(pair_capacity, std::max<Nanos>(c.token_period_ns, 1)),
      gate_(std::make_unique<HostMigrationGate>(c.params.freeze_max_rtts, c.seed + w)) {
  // Each worker paces its share of the NIC rate; the bucket holds two
  // full-size frames or 20 us at that rate (a worker's nap), whichever is more.
  if (c.fabric_rate_mbps != 0) {
    const double mbps = c.fabric_rate_mbps / static_cast<double>(std::max<size_t>(l.workers(), 1));
    pacer.configure(mbps, std::max(2.0 * 1518, mbps * 1e6 / 8.0 * 20e-6));
  }
  for (const uint16_t fp : c.fabric_ports)
    if (fp >= n_ports)
      throw std::runtime_error(c.file + ": edge.fabric_port " + std::to_string(fp) + " does not exist (" +
                               std::to_string(n_ports) + " DPDK ports)");
  stats.ports.resize(n_ports);
  for (uint16_t p = 0; p < n_ports; ++p) tx.emplace_back(p, 0, &stats);
  tx_rings.assign(n_ports, nullptr);

  for (size_t t = 0; t < c.tenants.size(); ++t) sched.add_tenant(static_cast<uint32_t>(t), c.tenants[t].weight_class);
  sched.set_class_weights(c.weight_classes);  // 1, 2, 4, ..., 128, or spread over params.weight_span_gbps

  hosts.reserve(c.hosts.size() + c.spare_hosts);  // the data path indexes it while a reload appends
  for (uint32_t h = 0; h < c.hosts.size(); ++h) add_host(h);

  for (uint32_t r = 0; r < c.remote_vms.size(); ++r) add_targets(r);  // ARP and neighbour discovery

  // Every per-pair array at its capacity: a pair added at runtime moves none.
  const size_t cap = pair_capacity;
  pairs.reserve(cap);  // one allocation for the VmPairs (~10 KB each)
  meta.reserve(cap);
  slot.reserve(cap);
  free_pairs.reserve(cap);
  removed_pairs.reserve(cap);
  share = std::make_unique<PairShare[]>(cap);
  history.resize(cap);
  sample_at.assign(cap, 0);
  assigned_q = std::make_unique<AssignedQueue>(static_cast<uint32_t>(cap));
  due.reserve(cap);
  dirty.reserve(cap);
  dirty_flag.assign(cap, 0);
  published_active.assign(cap, 0);
  in_flight.reserve(cap);
  in_flight_flag.assign(cap, 0);
  // Every per-VM array at its capacity too (local VMs a reload adds, local_vms.hpp).
  vm_pairs.reserve(vm_capacity);
  vm_active = std::make_unique<std::atomic<uint32_t>[]>(vm_capacity);
  vm_inputs_gen = std::make_unique<std::atomic<uint32_t>[]>(vm_capacity);
  vm_tokens = std::make_unique<std::atomic<double>[]>(vm_capacity);
  in_requesting.assign(vm_capacity, 0);
  uint32_t global = 0;
  for (size_t v = 0; v < c.vms.size(); ++v) {
    const edge::VmCfg& l = c.vms[v];
    if (l.port >= n_ports)
      throw std::runtime_error(c.file + ": vms[" + std::to_string(v) + "].port " + std::to_string(l.port) +
                               " does not exist (" + std::to_string(n_ports) + " DPDK ports)");
    if (std::find(vm_ports.begin(), vm_ports.end(), l.port) == vm_ports.end()) vm_ports.push_back(l.port);
    add_local_vm(static_cast<uint32_t>(v), c.tenant(l.vni)->tokens(c.params.unit_bw_Bps));
    for (size_t r = 0; r < c.remote_vms.size(); ++r) {
      if (c.remote_vms[r].vni != l.vni) continue;
      ++global;
      if (layout.vm_owner[v] == worker) add_pair(v, r, global - 1);
    }
  }

  // VM-side ports no VM names yet (layout.cpp): polled for the VMs a reload adds.
  for (uint16_t p = 0; p < n_ports; ++p)
    if (!c.is_fabric_port(p) && std::find(vm_ports.begin(), vm_ports.end(), p) == vm_ports.end()) vm_ports.push_back(p);

  incoming.reserve(c.max_incoming);
  in_share = std::make_unique<IncomingShare[]>(c.max_incoming);
}

void EdgeState::reserve_ports(uint16_t capacity) {
  stats.ports.resize(std::max<size_t>(stats.ports.size(), capacity));
  for (auto p = static_cast<uint16_t>(tx.size()); p < capacity; ++p) tx.emplace_back(p, 0, &stats);
  tx_rings.resize(std::max<size_t>(tx_rings.size(), capacity), nullptr);
}

void EdgeState::add_local_vm(uint32_t v, double tokens) {
  const edge::VmCfg& l = cfg.vms[v];
  const VmKey vk{l.vni, rte_cpu_to_be_32(l.ip)};
  add_configured(local_vms, &vk, v, "local VM (VNI, IP)");
  const ClassifyKey sk{l.port, l.vlan, rte_cpu_to_be_32(l.ip), 0, l.svlan};
  add_configured(vm_src, &sk, v, "local VM (port, tags, IP)");
  ip6.add_local_vm(l, v);
  if (vm_pairs.size() <= v) vm_pairs.resize(v + 1);  // within the capacity reserved
  vm_tokens[v].store(tokens, std::memory_order_relaxed);
}

void EdgeState::add_host(uint32_t index) {
  const edge::EdgeConfig& c = cfg;
  const edge::HostCfg& h = c.hosts[index];
  HostRoutes hr;
  hr.outer.src_mac = c.mac;
  hr.outer.dst_mac = h.mac;
  hr.outer.src_ip = c.ip;
  hr.outer.dst_ip = h.ip;
  hr.outer.dst_port = c.udp_port;
  for (const edge::PathCfg& p : h.paths) {
    hr.routes.push_back(to_route(p.labels));
    hr.src_ports.push_back(p.udp_src_port);
    hr.data_encap.push_back(EncapTemplate::make(hr.outer, p.udp_src_port, hr.routes.back()));
    hr.data_encap.back().port = p.port;
  }
  set_reply(hr, h.reply_path);
  add_configured(host_by_ip, &h.ip, index, "host IP");
  if (index < hosts.size())
    hosts[index] = std::move(hr);  // a removed host's entry no slot names any more (entries.hpp)
  else
    hosts.push_back(std::move(hr));
}

void EdgeState::use_reply(uint32_t index, int k) {
  const edge::HostCfg& h = cfg.hosts[index];
  set_reply(hosts[index], k < 0 ? h.reply_path : h.paths[static_cast<size_t>(k)]);
}

uint32_t EdgeState::add_pair(size_t v, size_t r, uint32_t global) {
  const edge::EdgeConfig& c = cfg;
  const edge::VmCfg& l = c.vms[v];
  const edge::VmCfg& rv = c.remote_vms[r];
  PairMeta m;
  m.global = global;
  m.wire_id = uint32_t{l.id} << 16 | rv.id;
  m.tenant = static_cast<uint32_t>(c.tenant_index(l.vni));
  m.local_vm = static_cast<uint32_t>(v);
  m.remote_vm = static_cast<uint32_t>(r);
  m.host = rv.host;
  m.shim = EncapTemplate::shim_word(l.vni, m.wire_id);
  std::vector<uint8_t> hops;
  for (const edge::PathCfg& p : c.hosts[rv.host].paths) hops.push_back(static_cast<uint8_t>(p.labels.size()));
  const Nanos rtt = c.hosts[rv.host].base_rtt_ns;
  const uint64_t seed = c.seed * 7919 + m.global;
  uint32_t idx = kNoSlot;
  if (!free_pairs.empty()) {  // a removed pair's slot, its finish done (reclaim)
    idx = free_pairs.back();
    free_pairs.pop_back();
    std::destroy_at(&pairs[idx]);
    std::construct_at(&pairs[idx], c.params, m.wire_id, rtt, hops, gate_.get(), seed);
    meta[idx] = m;
    slot[idx] = Slot::live;
    PairShare& sh = share[idx];  // its Alg. 1 inputs as a new pair's (assigned_queued: the queue's own)
    sh.active.store(false, std::memory_order_relaxed);
    sh.rate_Bps.store(0, std::memory_order_relaxed);
    sh.admitted.store(kTokenUnbound, std::memory_order_relaxed);
    sh.assigned.store(1.0, std::memory_order_relaxed);
    history[idx] = PairHistory{};
    sample_at[idx] = 0;
  } else if (pairs.size() < pair_capacity) {
    idx = static_cast<uint32_t>(pairs.size());
    pairs.emplace_back(c.params, m.wire_id, rtt, hops, gate_.get(), seed);
    meta.push_back(m);
    slot.push_back(Slot::live);
  } else {
    return kNoSlot;
  }
  sched.add_pair(idx, m.tenant, c.window_gating ? 0 : HierScheduler<rte_mbuf*>::kMaxWindow);
  const ClassifyKey ck{l.port, l.vlan, rte_cpu_to_be_32(l.ip), rte_cpu_to_be_32(rv.ip), l.svlan};
  add_configured(classify, &ck, idx, "VM-pair (port, tags, source IP, destination IP)");
  // A removed pair of the same two VMs (its remote VM moved to another
  // host) hands its wire id over: its finish-acks are then the new pair's
  // to ignore, and its finish runs out its retries.
  if (const uint32_t old = wire_pairs.lookup(&m.wire_id); old != HashTable::kMiss && !live(old)) wire_pairs.remove(&m.wire_id);
  add_configured(wire_pairs, &m.wire_id, idx, "VM-pair id");
  if (l.ip6 != edge::Ip6{} && rv.ip6 != edge::Ip6{}) ip6.add_pair(l, rv, idx);
  vm_pairs[v].push_back(idx);
  // Its first tick polls and publishes it, as the start-up pairs' first.
  timers.arm(idx, 0);
  mark_dirty(idx);
  return idx;
}

EdgeState::~EdgeState() {
  // Open every window so the scheduler hands back what it still holds.
  for (uint32_t p = 0; p < pairs.size(); ++p) {
    sched.on_acked(p, UINT64_MAX);
    sched.set_window(p, HierScheduler<rte_mbuf*>::kMaxWindow);
  }
  rte_mbuf* pkts[64];
  uint32_t lens[64], ids[64];
  for (size_t n; (n = sched.dequeue_burst(pkts, lens, ids, 64)) != 0;) rte_pktmbuf_free_bulk(pkts, static_cast<unsigned>(n));
}

}  // namespace ufab::pipeline
