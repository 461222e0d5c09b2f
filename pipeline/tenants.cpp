#include "pipeline/tenants.hpp"

#include <cstdio>

#include "pipeline/edge.hpp"
#include "pipeline/entries.hpp"
#include "pipeline/log.hpp"

namespace ufab::pipeline {

namespace {

// Entry i's tags into the VLAN or QinQ map (the workers read them without a lock).
void map_tags(edge::EdgeConfig& c, uint32_t i) {
  const edge::TenantCfg& t = c.tenants[i];
  if (t.svlan != 0)
    c.tenant_of_qinq.insert(t.svlan, t.vlan, i);  // sized for every tenant entry: not full
  else if (t.vlan != 0)
    __atomic_store_n(&c.tenant_of_vlan[t.vlan], static_cast<int32_t>(i), __ATOMIC_RELEASE);
}

// Entry i's tags out of the map, unless another tenant took them already
// (one this reload added or re-tagged).
void unmap_tags(edge::EdgeConfig& c, uint32_t i) {
  const edge::TenantCfg& t = c.tenants[i];
  if (t.svlan != 0) {
    c.tenant_of_qinq.erase(t.svlan, t.vlan, i);
  } else if (t.vlan != 0) {
    int32_t mine = static_cast<int32_t>(i);
    __atomic_compare_exchange_n(&c.tenant_of_vlan[t.vlan], &mine, -1, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
  }
}

}  // namespace

std::string add_tenants(Edge& e, const ReloadDiff& d, std::vector<uint32_t>& made, std::vector<std::string>& out) {
  if (d.tenants_added.empty()) return "";
  FreeEntries free = free_entries(e);
  if (d.tenants_added.size() > free.tenants.size() + e.tenant_room)
    return e.cfg.file + ": tenants: " + std::to_string(d.tenants_added.size()) + " tenant(s) to add, room for " +
           std::to_string(free.tenants.size() + e.tenant_room) + " more (params.spare_tenants: " +
           std::to_string(e.cfg.spare_tenants) +
           " beyond the start-up tenants; a removed tenant's entry is free once its pairs are gone); nothing applied";
  edge::EdgeConfig& c = e.live_cfg();
  Control& ctl = e.control;
  size_t next_free = 0;
  for (const edge::TenantCfg& file : d.tenants_added) {
    edge::TenantCfg t = file;
    // An auto class against the unit the edge started with (the file's own
    // unit follows its own tenants), as a guarantee changed at runtime.
    if (t.weight_from_guarantee) t.weight_class = c.weight_class_of(t.guarantee_bps).cls;
    uint32_t i = FreeEntries::take(free.tenants, next_free);
    if (i == UINT32_MAX) {
      i = static_cast<uint32_t>(c.tenants.size());
      c.tenants.push_back(t);  // within the capacity reserved at start-up: never moves
      --e.tenant_room;
      ctl.guarantee_bps.push_back(t.guarantee_bps);
      ctl.weight_class.push_back(t.weight_class);
      ctl.weight_from_guarantee.push_back(t.weight_from_guarantee);
    } else {
      c.tenants[i] = t;
      ctl.guarantee_bps[i] = t.guarantee_bps;
      ctl.weight_class[i] = t.weight_class;
      ctl.weight_from_guarantee[i] = t.weight_from_guarantee;
    }
    // Every worker's scheduler (a removed tenant's id may still be there,
    // its pairs gone: it takes the new class).
    e.on_workers([&](EdgeState& s) {
      if (!s.sched.add_tenant(i, t.weight_class)) s.sched.set_tenant_class(i, t.weight_class);
    });
    // Last, its tag: the workers then know it (vm_rx), and the reload's
    // local VMs of it are added next.
    map_tags(c, i);
    made.push_back(i);
    char buf[160];
    const std::string tags = t.vlan != 0 ? ", " + tags_text(t.svlan, t.vlan) : "";
    std::snprintf(buf, sizeof(buf), "tenant %u added: guarantee_gbps %.6g, weight_class %u%s%s", t.vni,
                  t.guarantee_bps / 1e9, t.weight_class, t.weight_from_guarantee ? " (from its guarantee)" : "",
                  tags.c_str());
    out.emplace_back(buf);
    UFAB_LOG(NOTICE, "%s", buf);
  }
  return "";
}

void retag_tenants(Edge& e, const std::vector<TenantRetag>& which, std::vector<std::string>& out) {
  edge::EdgeConfig& c = e.live_cfg();
  // Every old tag out first, so that two tenants may swap theirs.
  for (const TenantRetag& r : which) unmap_tags(c, r.running);
  for (const TenantRetag& r : which) {
    edge::TenantCfg& t = c.tenants[r.running];
    const std::string line = "tenant " + std::to_string(t.vni) + " re-tagged: " + tags_text(t.svlan, t.vlan) + " -> " +
                             tags_text(r.svlan, r.vlan);
    t.vlan = r.vlan;
    t.svlan = r.svlan;
    map_tags(c, r.running);
    out.push_back(line);
    UFAB_LOG(NOTICE, "%s", line.c_str());
  }
}

void undo_added_tenants(Edge& e, const std::vector<uint32_t>& added) {
  remove_tenants(e, added, nullptr);
  // An added tenant may have taken the tags of a running one the refused
  // file removes or re-tags, and taking them out cleared them: every live
  // tenant's tags in again (they are distinct among live tenants).
  edge::EdgeConfig& c = e.live_cfg();
  for (uint32_t i = 0; i < c.tenants.size(); ++i)
    if (!c.tenants[i].removed) map_tags(c, i);
}

void remove_tenants(Edge& e, const std::vector<uint32_t>& which, std::vector<std::string>* out) {
  edge::EdgeConfig& c = e.live_cfg();
  for (const uint32_t i : which) {
    edge::TenantCfg& t = c.tenants[i];
    unmap_tags(c, i);  // unless a tenant this reload added or re-tagged took them already
    t.removed = true;
    // A scheduler keeps the id while a removed pair of it is there; the
    // entry is free for another tenant once no pair slot names it.
    e.on_workers([&](EdgeState& s) { s.sched.remove_tenant(i); });
    if (out != nullptr) out->push_back("tenant " + std::to_string(t.vni) + " removed");
    UFAB_LOG(NOTICE, "tenant %u removed", t.vni);
  }
}

}  // namespace ufab::pipeline
