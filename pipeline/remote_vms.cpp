#include "pipeline/remote_vms.hpp"

#include <rte_byteorder.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "pipeline/edge.hpp"
#include "pipeline/entries.hpp"
#include "pipeline/local_vms.hpp"
#include "pipeline/log.hpp"
#include "pipeline/rss_reta.hpp"

namespace ufab::pipeline {

// ---- a worker's part (on its own lcore) ----

uint32_t EdgeState::remove_pair(uint32_t p, Nanos now) {
  const PairMeta& m = meta[p];
  const edge::VmCfg& l = cfg.vms[m.local_vm];
  const edge::VmCfg& rv = cfg.remote_vms[m.remote_vm];
  const ClassifyKey ck{l.port, l.vlan, rte_cpu_to_be_32(l.ip), rte_cpu_to_be_32(rv.ip), l.svlan};
  classify.remove(&ck);
  if (l.ip6 != edge::Ip6{} && rv.ip6 != edge::Ip6{}) ip6.remove_pair(l, rv);
  std::vector<uint32_t>& mine = vm_pairs[m.local_vm];
  mine.erase(std::find(mine.begin(), mine.end(), p));
  const uint32_t dropped = sched.flush_pair(p, [&](rte_mbuf*&& f, uint32_t) {
    rte_pktmbuf_free(f);
    stats.drop(l.port, Drop::pair_removed);
  });
  // Out of Alg. 1: its VM's next assignment is over its other pairs.
  if (published_active[p]) {
    share[p].active.store(false, std::memory_order_relaxed);
    std::atomic<uint32_t>& n = vm_active[m.local_vm];
    n.store(n.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    published_active[p] = 0;
  }
  bump(vm_inputs_gen[m.local_vm]);
  pairs[p].finish_now(now);  // sent at its next poll (control_tx), retried until acked or given up
  wake(p);
  slot[p] = Slot::removed;
  removed_pairs.push_back(p);
  return dropped;
}

void EdgeState::reclaim() {
  for (size_t k = 0; k < removed_pairs.size();) {
    const uint32_t p = removed_pairs[k];
    if (!reclaimable(p) || !sched.remove_pair(p)) {
      ++k;
      continue;
    }
    if (wire_pairs.lookup(&meta[p].wire_id) == p) wire_pairs.remove(&meta[p].wire_id);
    timers.arm(p, PairTimers::kUnarmed);
    slot[p] = Slot::free;
    free_pairs.push_back(p);
    removed_pairs[k] = removed_pairs.back();
    removed_pairs.pop_back();
  }
}

void EdgeState::remove_host(uint32_t h) { host_by_ip.remove(&cfg.hosts[h].ip); }

void EdgeState::add_targets(uint32_t r) {
  const edge::VmCfg& rv = cfg.remote_vms[r];
  if (rv.mac != edge::Mac{}) {
    const VmKey k{rv.vni, rte_cpu_to_be_32(rv.ip)};
    add_configured(arp_targets, &k, r, "ARP target (VNI, IP)");
  }
  ip6.add_nd_target(rv, r);
}

void EdgeState::remove_targets(uint32_t r) {
  const edge::VmCfg& rv = cfg.remote_vms[r];
  if (rv.mac != edge::Mac{}) {
    const VmKey k{rv.vni, rte_cpu_to_be_32(rv.ip)};
    arp_targets.remove(&k);
  }
  ip6.remove_nd_target(rv);
}

// ---- the control lcore's part ----

void make_pairs(Edge& e, EdgeState& s, const std::vector<NewPair>& made, std::vector<uint32_t>& slot_of) {
  for (size_t i = 0; i < made.size(); ++i) {
    const NewPair& np = made[i];
    if (e.layout.vm_owner[np.v] != s.worker) continue;
    const uint32_t p = s.add_pair(np.v, np.r, np.global);
    slot_of[i] = p;
    if (p == EdgeState::kNoSlot) continue;
    // A path drained now (set_drained), or on an uplink that is down
    // (uplinks.cpp), is drained for the new pair too; one on a down uplink
    // is unreachable as well (no finish is sent on it).
    const uint32_t h = s.meta[p].host;
    for (size_t k = 0; k < e.control.drained[h].size(); ++k) {
      if (e.control.path_unusable(h, k)) s.pairs[p].set_path_drained(k, true);
      if (e.control.uplink_is_down(e.cfg.hosts[h].paths[k].port)) s.pairs[p].set_path_unreachable(k, true);
    }
  }
}

std::string apply_vms(Edge& e, const ReloadDiff& d, Nanos now, std::vector<std::string>& out) {
  using Kind = VmChange::Kind;
  const std::vector<VmChange>& changes = d.vms;
  if (changes.empty() && d.hosts.empty() && d.local_vms.empty()) return "";
  edge::EdgeConfig& c = e.live_cfg();
  const char* kNothing = "; nothing applied";
  for (size_t p = 0; p < e.layout.rx_mode.size() && !(changes.empty() && d.local_vms.empty()); ++p)
    if (e.shards[0]->offload.marks(static_cast<uint16_t>(p)))
      return c.file + ": " + (changes.empty() ? "vms" : "remote_vms") + ": changed, needs a restart while port " +
             std::to_string(p) + " classifies by rte_flow MARK rules (they name pair slots)" + kNothing;
  // Entries: removed ones nothing names any more first (entries.hpp), then
  // the room reserved at start-up.
  FreeEntries free = free_entries(e);
  size_t hosts_added = 0;
  for (const HostChange& h : d.hosts) hosts_added += h.added;
  if (hosts_added > free.hosts.size() + e.host_room)
    return c.file + ": hosts: " + std::to_string(hosts_added) + " host(s) to add, room for " +
           std::to_string(free.hosts.size() + e.host_room) + " more (params.spare_hosts: " + std::to_string(c.spare_hosts) +
           " beyond the start-up hosts; a removed host's entry is free once its VMs' pairs are gone)" + kNothing;
  // The room: entries to append, and each worker's slots for the pairs of
  // the VMs added (a removed pair's slot frees only once its finish is done):
  // a remote VM's with each local VM of its tenant that stays, a local VM's
  // (local_vms.cpp) with each remote VM of its tenant after this reload.
  const std::vector<uint8_t> leaving = leaving_local(c, d);
  size_t entries = 0;
  std::vector<size_t> need(e.shards.size(), 0);
  for (const VmChange& ch : changes) {
    if (ch.kind == Kind::removed) continue;
    ++entries;
    for (size_t v = 0; v < c.vms.size(); ++v)
      if (!c.vms[v].removed && !leaving[v]) need[e.layout.vm_owner[v]] += c.vms[v].vni == ch.vm.vni;
  }
  if (entries > free.remote_vms.size() + e.remote_vm_room)
    return c.file + ": remote_vms: " + std::to_string(entries) + " VM(s) to add, room for " +
           std::to_string(free.remote_vms.size() + e.remote_vm_room) + " more (params.spare_remote_vms: " +
           std::to_string(c.spare_remote_vms) + " beyond the start-up VMs; a removed VM's entry is free once its pairs are gone)" +
           kNothing;
  std::vector<size_t> room(e.shards.size(), 0), live(e.shards.size(), 0);
  e.on_workers([&](EdgeState& s) {  // reclaimed by free_entries
    room[s.worker] = s.spare_slots();
    live[s.worker] = s.live_pairs();
  });
  LocalPlan plan;
  if (std::string err = plan_local(e, d, live, free.local_vms.size(), need, plan); !err.empty()) return err + kNothing;
  for (size_t w = 0; w < e.shards.size(); ++w)
    if (need[w] > room[w])
      return c.file + ": " + (changes.empty() ? "vms" : "remote_vms") + ": worker " + std::to_string(w) + " needs " +
             std::to_string(need[w]) + " VM-pair slot(s), has " + std::to_string(room[w]) + " (params.spare_pairs: " +
             std::to_string(c.spare_pairs) + " per worker; a removed pair's slot frees once its finish is done)" +
             kNothing;

  // Hosts: removed (their probes are then unknown; the entry stays for the
  // finishes of their VMs' pairs), then added, appended in the order
  // diff_remote gave their VMs' host indices. A changed host is both: a new
  // entry, with no drained path, and its VMs changed with it (below).
  for (const HostChange& h : d.hosts) {
    if (h.added) continue;
    e.on_workers([&](EdgeState& s) { s.remove_host(h.running); });
    c.hosts[h.running].removed = true;
    out.push_back("host " + h.host.name + (h.fields.empty() ? " removed" : " changed (" + h.fields + ")"));
  }
  // diff_remote gave the VMs on an added host the index it would have if
  // appended (the running count, then one more per host added); placed[k]
  // is where the k-th host added went.
  const auto planned = static_cast<uint32_t>(c.hosts.size());
  std::vector<uint32_t> placed;
  size_t next_host = 0;
  for (const HostChange& h : d.hosts) {
    if (!h.added) continue;
    uint32_t idx = FreeEntries::take(free.hosts, next_host);
    if (idx == UINT32_MAX) {
      idx = static_cast<uint32_t>(c.hosts.size());
      c.hosts.push_back(h.host);  // within the capacity reserved at start-up: nothing moves
      --e.host_room;
      e.control.drained.emplace_back(h.host.paths.size(), false);
    } else {
      c.hosts[idx] = h.host;  // no worker reads it now: no slot names it
      e.control.drained[idx].assign(h.host.paths.size(), false);
    }
    placed.push_back(idx);
    e.on_workers([&](EdgeState& s) { s.add_host(idx); });
    e.control.host_added(idx);  // its replies by another path while the reply path's uplink is down (uplinks.cpp)
    out.push_back("host " + h.host.name + (h.fields.empty() ? " added (" : " re-added (") +
                  std::to_string(h.host.paths.size()) + " path(s))");
  }

  // Removals first (a changed VM's new keys may be its old ones), in one
  // command per worker, as the additions after them.
  std::vector<uint8_t> gone(c.remote_vms.size(), 0);
  for (const VmChange& ch : changes)
    if (ch.kind != Kind::added) gone[ch.running] = 1;
  std::vector<size_t> removed(c.remote_vms.size(), 0), dropped(c.remote_vms.size(), 0);
  if (std::find(gone.begin(), gone.end(), 1) != gone.end())
    e.on_workers([&](EdgeState& s) {
      for (uint32_t r = 0; r < gone.size(); ++r)
        if (gone[r]) s.remove_targets(r);
      for (uint32_t p = 0; p < s.pairs.size(); ++p) {
        const uint32_t r = s.meta[p].remote_vm;
        if (!s.live(p) || !gone[r]) continue;
        dropped[r] += s.remove_pair(p, now);
        ++removed[r];
      }
    });
  for (const VmChange& ch : changes) {
    if (ch.kind == Kind::added) continue;
    const uint32_t r = ch.running;
    c.remote_vms[r].removed = true;
    char buf[200];
    if (ch.kind == Kind::removed)
      std::snprintf(buf, sizeof buf, "remote VM %s removed: %zu pair(s), %zu queued frame(s) dropped",
                    c.remote_vms[r].name.c_str(), removed[r], dropped[r]);
    else
      std::snprintf(buf, sizeof buf, "remote VM %s changed (%s): %zu pair(s) removed, %zu queued frame(s) dropped",
                    c.remote_vms[r].name.c_str(), ch.fields.c_str(), removed[r], dropped[r]);
    out.emplace_back(buf);
  }
  remove_local(e, d, leaving, now, out);  // local VMs leaving: their pairs, their tables
  // A cached key would still name a removed slot, which a new pair may take,
  // or a removed local VM (local switching): the caches start over, once for
  // the whole reload, before anything is added.
  if (std::find(gone.begin(), gone.end(), 1) != gone.end() || std::find(leaving.begin(), leaving.end(), 1) != leaving.end())
    e.on_workers([](EdgeState& s) {
      s.classify_cache.clear();
      s.classify6_cache.clear();
    });
  // Then additions (and the changed VMs' new entries), appended, each with
  // its pairs in config order (a VM's pairs over the local VMs of its
  // tenant, the next indices).
  std::vector<uint32_t> entry;  // the entries of the VMs added, in the diff's order
  std::vector<NewPair> made;
  std::vector<bool> again;  // by VM added: a changed VM's new entry
  size_t next_remote = 0;
  for (const VmChange& ch : changes) {
    if (ch.kind == Kind::removed) continue;
    again.push_back(ch.kind == Kind::changed);
    edge::VmCfg vm = ch.vm;
    vm.removed = false;
    if (vm.host >= planned) vm.host = placed[vm.host - planned];
    uint32_t r = FreeEntries::take(free.remote_vms, next_remote);
    if (r == UINT32_MAX) {
      r = static_cast<uint32_t>(c.remote_vms.size());
      c.remote_vms.push_back(std::move(vm));  // within the capacity reserved at start-up: nothing moves
      --e.remote_vm_room;
    } else {
      c.remote_vms[r] = std::move(vm);  // no worker reads it now: no table or slot names it
    }
    entry.push_back(r);
    for (size_t v = 0; v < c.vms.size(); ++v)
      if (!c.vms[v].removed && c.vms[v].vni == c.remote_vms[r].vni) made.push_back({v, r, e.next_pair_index++});
  }
  std::vector<uint32_t> slot_of(made.size(), EdgeState::kNoSlot);
  std::string failed;
  if (!entry.empty())
    e.on_workers([&](EdgeState& s) {
      try {
        for (const uint32_t r : entry) s.add_targets(r);
        make_pairs(e, s, made, slot_of);
      } catch (const std::exception& x) {  // not reached: the file's checks and the room's
        failed = x.what();
      }
    });
  for (size_t k = 0; k < entry.size(); ++k) {
    const edge::VmCfg& vm = c.remote_vms[entry[k]];
    out.push_back("remote VM " + vm.name + (again[k] ? " re-added" : " added") + " (host " + c.hosts[vm.host].name +
                  "): " + pairs_made(made, slot_of, failed, [&](const NewPair& np) { return np.r == entry[k]; }));
  }
  add_local(e, d, plan, free.local_vms, out);  // local VMs added: with every remote VM of their tenant, those just added too
  // The VM ports' RSS redirection by owner, for the local VMs now there.
  if (!d.local_vms.empty()) steer_vm_ports_by_reta(e.cfg, e.rss_hf, e.layout);
  // Alg. 1's per-VM scratch, sized as at start-up, so its rounds do not allocate.
  e.control.reserve_tokens();
  UFAB_LOG(NOTICE, "hosts and VMs: %zu change(s) applied", d.hosts.size() + changes.size() + d.local_vms.size());
  return "";
}

}  // namespace ufab::pipeline
