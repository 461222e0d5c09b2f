#include "pipeline/tenants.hpp"

#include <cstdio>

#include "pipeline/edge.hpp"
#include "pipeline/entries.hpp"
#include "pipeline/log.hpp"

namespace ufab::pipeline {

namespace {

// Tags (svlan, vlan) into the VLAN or QinQ map for entry i (the workers
// read them without a lock).
void map_tags(edge::EdgeConfig& c, uint32_t i, uint16_t svlan, uint16_t vlan) {
  if (svlan != 0)
    c.tenant_of_qinq.insert(svlan, vlan, i);  // sized for every tenant entry: not full
  else if (vlan != 0)
    __atomic_store_n(&c.tenant_of_vlan[vlan], static_cast<int32_t>(i), __ATOMIC_RELEASE);
}
void map_tags(edge::EdgeConfig& c, uint32_t i) { map_tags(c, i, c.tenants[i].svlan, c.tenants[i].vlan); }

// Tags (svlan, vlan) out of the map, unless another entry than i has
// them by now (a tenant this reload added or re-tagged).
void unmap_tags(edge::EdgeConfig& c, uint32_t i, uint16_t svlan, uint16_t vlan) {
  if (svlan != 0) {
    c.tenant_of_qinq.erase(svlan, vlan, i);
  } else if (vlan != 0) {
    int32_t mine = static_cast<int32_t>(i);
    __atomic_compare_exchange_n(&c.tenant_of_vlan[vlan], &mine, -1, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
  }
}
void unmap_tags(edge::EdgeConfig& c, uint32_t i) { unmap_tags(c, i, c.tenants[i].svlan, c.tenants[i].vlan); }

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
  // Every new tag in first (it may be another's old one: two tenants swap),
  // then the old ones out where they still name their tenant: no tag in
  // either set is unmapped at any moment.
  for (const TenantRetag& r : which) map_tags(c, r.running, r.svlan, r.vlan);
  for (const TenantRetag& r : which) unmap_tags(c, r.running);
  for (const TenantRetag& r : which) {
    edge::TenantCfg& t = c.tenants[r.running];
    const std::string line = "tenant " + std::to_string(t.vni) + " re-tagged: " + tags_text(t.svlan, t.vlan) + " -> " +
                             tags_text(r.svlan, r.vlan);
    t.vlan = r.vlan;
    t.svlan = r.svlan;
    out.push_back(line);
    UFAB_LOG(NOTICE, "%s", line.c_str());
  }
}

void undo_added_tenants(Edge& e, const std::vector<uint32_t>& added) {
  // An added tenant may have taken the tags of a running one the refused
  // file removes or re-tags: the running tenants' tags go back in first
  // (they are distinct among them), so that taking the added ones out
  // (which clears only tags that still name them) never leaves such a tag
  // unmapped, not even for a moment.
  edge::EdgeConfig& c = e.live_cfg();
  std::vector<uint8_t> undone(c.tenants.size(), 0);
  for (const uint32_t i : added) undone[i] = 1;
  for (uint32_t i = 0; i < c.tenants.size(); ++i)
    if (!c.tenants[i].removed && !undone[i]) map_tags(c, i);
  remove_tenants(e, added, nullptr);
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
