#include "pipeline/local_vms.hpp"

#include <rte_byteorder.h>

#include <algorithm>
#include <cstdio>

#include "pipeline/edge.hpp"
#include "pipeline/entries.hpp"
#include "pipeline/remote_vms.hpp"

namespace ufab::pipeline {

// ---- a worker's part (on its own lcore) ----

uint32_t EdgeState::remove_local_vm(uint32_t v, Nanos now, uint32_t* pairs_removed) {
  const edge::VmCfg& l = cfg.vms[v];
  const VmKey vk{l.vni, rte_cpu_to_be_32(l.ip)};
  local_vms.remove(&vk);
  const ClassifyKey sk{l.port, l.vlan, rte_cpu_to_be_32(l.ip), 0, l.svlan};
  vm_src.remove(&sk);
  ip6.remove_local_vm(l);
  *pairs_removed = 0;
  uint32_t dropped = 0;
  while (!vm_pairs[v].empty()) {  // remove_pair takes each out of the list
    dropped += remove_pair(vm_pairs[v].back(), now);
    ++*pairs_removed;
  }
  // Its receiver-side slots: out of the table (its probes are unknown_vm
  // now), requesting nothing (admission skips them) and silent since long
  // ago, so the next slot search may take them (fabric_rx.cpp).
  bool changed = false;
  for (uint32_t i = 0; i < incoming.size(); ++i) {
    Incoming& in = incoming[i];
    if (in.local_vm != v) continue;
    const IncomingKey key{in.src_ip, in.vni, in.wire_id};
    if (incoming_tbl.lookup(&key) == i) incoming_tbl.remove(&key);
    in_share[i].requested.store(0, std::memory_order_relaxed);
    in.last_seen = 0;
    changed = true;
  }
  in_requesting[v] = 0;
  if (changed) bump(incoming_gen);
  return dropped;
}

// ---- the control lcore's part ----

std::vector<uint8_t> leaving_local(const edge::EdgeConfig& c, const ReloadDiff& d) {
  std::vector<uint8_t> out(c.vms.size(), 0);
  for (const VmChange& ch : d.local_vms)
    if (ch.kind != VmChange::Kind::added) out[ch.running] = 1;
  return out;
}

namespace {

// Remote VMs of tenant vni once d is applied.
size_t remote_after(const edge::EdgeConfig& c, const ReloadDiff& d, uint32_t vni) {
  size_t n = 0;
  for (const edge::VmCfg& r : c.remote_vms) n += !r.removed && r.vni == vni;
  for (const VmChange& ch : d.vms) {
    if (ch.kind != VmChange::Kind::added) n -= c.remote_vms[ch.running].vni == vni;
    if (ch.kind != VmChange::Kind::removed) n += ch.vm.vni == vni;
  }
  return n;
}

}  // namespace

std::string plan_local(const Edge& e, const ReloadDiff& d, const std::vector<size_t>& live, size_t free_entries,
                       std::vector<size_t>& need, LocalPlan& plan) {
  const edge::EdgeConfig& c = e.cfg;
  size_t n_ports = 0;
  for (uint16_t p = 0; p < e.port_capacity(); ++p) n_ports += e.port_present(p);
  size_t entries = 0;
  for (const VmChange& ch : d.local_vms) {
    if (ch.kind == VmChange::Kind::removed) continue;
    ++entries;
    if (!e.port_present(ch.vm.port) || c.is_fabric_port(ch.vm.port))
      return ch.at + ".port " + std::to_string(ch.vm.port) +
             (c.is_fabric_port(ch.vm.port) ? " is a fabric port"
                                           : " does not exist (" + std::to_string(n_ports) +
                                                 " DPDK ports)");
  }
  if (entries > free_entries + e.local_vm_room)
    return c.file + ": vms: " + std::to_string(entries) + " local VM(s) to add, room for " +
           std::to_string(free_entries + e.local_vm_room) + " more (params.spare_local_vms: " +
           std::to_string(c.spare_local_vms) + " beyond the start-up VMs; a removed VM's entry is free once its pairs are gone)";
  // Each new VM to the worker with the fewest pairs once this reload is
  // done (ties to the lower worker), as the layout placed the VMs at
  // start-up; a changed VM stays on its worker.
  std::vector<size_t> load(live.size());
  for (size_t w = 0; w < load.size(); ++w) load[w] = live[w] + need[w];
  for (const VmChange& ch : d.local_vms) {
    if (ch.kind == VmChange::Kind::removed) continue;
    const auto w = ch.kind == VmChange::Kind::changed
                       ? e.layout.vm_owner[ch.running]
                       : static_cast<uint16_t>(std::min_element(load.begin(), load.end()) - load.begin());
    const size_t pairs = remote_after(c, d, ch.vm.vni);
    load[w] += std::max<size_t>(pairs, 1);
    need[w] += pairs;
    plan.owner.push_back(w);
  }
  return "";
}

void remove_local(Edge& e, const ReloadDiff& d, const std::vector<uint8_t>& gone, Nanos now,
                  std::vector<std::string>& out) {
  edge::EdgeConfig& c = e.live_cfg();
  if (std::find(gone.begin(), gone.end(), 1) == gone.end()) return;
  // Its id first: from here no fabric frame is dispatched to it or finds it
  // (a burst a worker is in the middle of has its answer already), except
  // the answers to its pairs' finishes, which go to its owner still
  // (Layout::retire_local_vm).
  for (uint32_t v = 0; v < gone.size(); ++v)
    if (gone[v]) e.layout.retire_local_vm(c.vms[v].id, e.layout.vm_owner[v]);
  std::vector<uint32_t> removed(c.vms.size(), 0), dropped(c.vms.size(), 0);
  e.on_workers([&](EdgeState& s) {
    for (uint32_t v = 0; v < gone.size(); ++v) {
      if (!gone[v]) continue;
      uint32_t n = 0;
      dropped[v] += s.remove_local_vm(v, now, &n);
      removed[v] += n;
    }
  });
  for (const VmChange& ch : d.local_vms) {
    if (ch.kind == VmChange::Kind::added) continue;
    const uint32_t v = ch.running;
    c.vms[v].removed = true;
    char buf[240];
    if (ch.kind == VmChange::Kind::removed)
      std::snprintf(buf, sizeof buf, "local VM %s removed: %u pair(s), %u queued frame(s) dropped", c.vms[v].name.c_str(),
                    removed[v], dropped[v]);
    else
      std::snprintf(buf, sizeof buf, "local VM %s changed (%s): %u pair(s) removed, %u queued frame(s) dropped",
                    c.vms[v].name.c_str(), ch.fields.c_str(), removed[v], dropped[v]);
    out.emplace_back(buf);
  }
}

void add_local(Edge& e, const ReloadDiff& d, const LocalPlan& plan, std::vector<uint32_t>& free,
               std::vector<std::string>& out) {
  edge::EdgeConfig& c = e.live_cfg();
  std::vector<uint32_t> entry;  // the entries of the VMs added, in the diff's order
  std::vector<NewPair> made;
  std::vector<double> tokens;
  std::vector<bool> again;
  size_t k = 0, next_free = 0;
  for (const VmChange& ch : d.local_vms) {
    if (ch.kind == VmChange::Kind::removed) continue;
    edge::VmCfg vm = ch.vm;
    vm.removed = false;
    uint32_t v = FreeEntries::take(free, next_free);
    if (v == UINT32_MAX) {
      v = static_cast<uint32_t>(c.vms.size());
      c.vms.push_back(std::move(vm));  // within the capacity reserved at start-up: nothing moves
      e.layout.vm_owner.push_back(plan.owner[k]);  // likewise
      --e.local_vm_room;
    } else {
      c.vms[v] = std::move(vm);  // no worker reads it now: no table or slot names it
      e.layout.vm_owner[v] = plan.owner[k];
    }
    ++k;
    entry.push_back(v);
    again.push_back(ch.kind == VmChange::Kind::changed);
    tokens.push_back(e.control.add_vm(v));
    for (size_t r = 0; r < c.remote_vms.size(); ++r)
      if (!c.remote_vms[r].removed && c.remote_vms[r].vni == c.vms[v].vni) made.push_back({v, r, e.next_pair_index++});
  }
  if (entry.empty()) return;
  std::vector<uint32_t> slot_of(made.size(), EdgeState::kNoSlot);
  std::string failed;
  e.on_workers([&](EdgeState& s) {
    try {
      for (size_t i = 0; i < entry.size(); ++i) s.add_local_vm(entry[i], tokens[i]);
      make_pairs(e, s, made, slot_of);
    } catch (const std::exception& x) {  // not reached: the file's checks and the room's
      failed = x.what();
    }
  });
  // Now its id names it: fabric frames for it go to its owner.
  for (const uint32_t v : entry) e.layout.set_local_vm(c.vms[v].id, static_cast<int32_t>(v));
  for (size_t i = 0; i < entry.size(); ++i) {
    const uint32_t v = entry[i];
    const edge::VmCfg& vm = c.vms[v];
    out.push_back("local VM " + vm.name + (again[i] ? " re-added" : " added") + " (port " + std::to_string(vm.port) +
                  ", worker " + std::to_string(e.layout.vm_owner[v]) +
                  "): " + pairs_made(made, slot_of, failed, [&](const NewPair& np) { return np.v == v; }));
  }
}

}  // namespace ufab::pipeline
