#include "pipeline/control.hpp"

#include "pipeline/ports.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "pipeline/edge.hpp"
#include "pipeline/log.hpp"
#include "pipeline/reload.hpp"
#include "pipeline/remote_vms.hpp"
#include "pipeline/tenants.hpp"

namespace ufab::pipeline {

void Control::init() {
  const edge::EdgeConfig& c = e_.cfg;
  for (const edge::TenantCfg& t : c.tenants) {
    guarantee_bps.push_back(t.guarantee_bps);
    weight_class.push_back(t.weight_class);
    weight_from_guarantee.push_back(t.weight_from_guarantee);
  }
  for (const edge::HostCfg& h : c.hosts) drained.emplace_back(h.paths.size(), false);
  size_t ports = 0;
  for (const uint16_t f : c.fabric_ports) ports = std::max<size_t>(ports, f + 1u);
  uplink_down.assign(ports, 0);  // uplinks.cpp
  uplink_seen_.assign(ports, 0);
  for (size_t v = 0; v < c.vms.size(); ++v) add_vm(v);
  reserve_tokens();
  in_scratch_.reserve(c.max_incoming);
  incoming_seen_.assign(e_.shards.size(), kStale);
}

double Control::add_vm(size_t v) {
  const edge::EdgeConfig& c = e_.cfg;
  const double phi = guarantee_bps[c.tenant_index(c.vms[v].vni)] / 8.0 / c.params.unit_bw_Bps;
  if (v == senders_.size()) {
    senders_.emplace_back(phi);
    receivers_.emplace_back(phi);
    sender_seen_.push_back(kStale);
  } else {  // a removed VM's entry, taken anew (entries.hpp)
    senders_[v] = VmTokens(phi);
    receivers_[v] = VmTokens(phi);
    sender_seen_[v] = kStale;
  }
  receivers_[v].resize(c.max_incoming);  // reserved, so that a round does not allocate
  receivers_[v].resize(0);
  return phi;
}

void Control::reserve_tokens() {
  const edge::EdgeConfig& c = e_.cfg;
  size_t most = c.max_incoming;
  for (size_t v = 0; v < c.vms.size(); ++v) {
    const size_t n = e_.shards[e_.layout.vm_owner[v]]->vm_pairs[v].size();
    // Reserve at the maxima, so a token round never allocates.
    const size_t keep = senders_[v].pairs().size();
    senders_[v].resize(std::max(n, keep));
    senders_[v].resize(keep);
    most = std::max(most, n);
  }
  scratch_.reserve(most);
}

bool Control::token_round_step(size_t max_pairs) {
  // Work over what changed: a VM whose worker published no active sending
  // pair is skipped (Alg. 1 over no pair assigns nothing), and so is one
  // whose inputs did not change since its last assignment (the same inputs
  // give the same phi_S). The generation is read (acquire) before the
  // shares: a change made while they are read bumps it again, and the next
  // round recomputes. The receiver-side pairs are found in one pass over
  // each worker's learned slots, grouped by local VM, instead of one pass
  // per VM, and only on a shard whose slots changed.
  //
  // The step's budget is in eighths of a pair: a VM looked at and skipped
  // costs one (two loads), each pair of a VM assigned costs eight.
  const double unit = e_.cfg.params.unit_bw_Bps;
  const size_t budget = max_pairs > SIZE_MAX / 8 ? SIZE_MAX : max_pairs * 8;
  size_t looked = 0;
  for (; next_vm_ < senders_.size() && looked < budget; ++next_vm_) {
    const size_t v = next_vm_;
    EdgeState& s = *e_.shards[e_.layout.vm_owner[v]];
    ++looked;
    if (s.vm_active[v].load(std::memory_order_relaxed) == 0) continue;
    const uint32_t gen = s.vm_inputs_gen[v].load(std::memory_order_acquire);
    if (sender_seen_[v] == gen) continue;
    sender_seen_[v] = gen;
    ++vms_assigned;
    looked += 8 * s.vm_pairs[v].size();
    std::vector<uint32_t>& active = scratch_;
    active.clear();
    for (const uint32_t p : s.vm_pairs[v])
      if (s.share[p].active.load(std::memory_order_relaxed)) active.push_back(p);
    VmTokens& snd = senders_[v];
    snd.resize(active.size());
    auto pt = snd.pairs();
    for (size_t k = 0; k < active.size(); ++k) {
      const PairShare& sh = s.share[active[k]];
      pt[k] = PairToken{sh.rate_Bps.load(std::memory_order_relaxed), 0, sh.admitted.load(std::memory_order_relaxed)};
    }
    if (!active.empty()) snd.assign(unit);
    for (size_t k = 0; k < active.size(); ++k) {
      PairShare& sh = s.share[active[k]];
      // Only a changed phi_S goes to the worker (its apply_tokens() reads
      // the pairs named in its queue; this lcore is the only writer).
      if (sh.assigned.load(std::memory_order_relaxed) == pt[k].phi_S) continue;
      sh.assigned.store(pt[k].phi_S, std::memory_order_relaxed);
      s.assigned_q->changed(sh, active[k]);
    }
  }
  if (next_vm_ < senders_.size()) return false;
  next_vm_ = 0;

  for (const auto& shard : e_.shards) {
    EdgeState& s = *shard;
    const uint32_t gen = s.incoming_gen.load(std::memory_order_acquire);
    if (incoming_seen_[s.worker] == gen) continue;
    incoming_seen_[s.worker] = gen;
    ++shards_admitted;
    std::vector<uint64_t>& by_vm = in_scratch_;  // local VM << 32 | slot, then sorted: slot order within a VM
    by_vm.clear();
    const uint32_t n_in = s.incoming_published.load(std::memory_order_acquire);
    // Only the VMs this worker owns (as one pass per VM over its owner's slots did).
    for (uint32_t i = 0; i < n_in; ++i) {
      if (s.in_share[i].requested.load(std::memory_order_relaxed) <= 0) continue;
      const uint32_t vm = s.in_share[i].local_vm.load(std::memory_order_relaxed);
      if (e_.layout.vm_owner[vm] == s.worker) by_vm.push_back(uint64_t{vm} << 32 | i);
    }
    std::sort(by_vm.begin(), by_vm.end());
    for (size_t k = 0; k < by_vm.size();) {
      const auto v = static_cast<uint32_t>(by_vm[k] >> 32);
      size_t end = k;
      while (end < by_vm.size() && static_cast<uint32_t>(by_vm[end] >> 32) == v) ++end;
      VmTokens& rcv = receivers_[v];
      rcv.resize(end - k);
      auto rt = rcv.pairs();
      for (size_t j = k; j < end; ++j)
        rt[j - k] = PairToken{0, s.in_share[static_cast<uint32_t>(by_vm[j])].requested.load(std::memory_order_relaxed),
                              kTokenUnbound};
      rcv.admit();
      for (size_t j = k; j < end; ++j)
        s.in_share[static_cast<uint32_t>(by_vm[j])].admitted.store(rt[j - k].phi_D, std::memory_order_relaxed);
      k = end;
    }
  }
  ++rounds;
  return true;
}

std::string Control::set_guarantee(uint32_t vni, double gbps, std::string* class_change) {
  const edge::EdgeConfig& c = e_.cfg;
  if (c.tenant(vni) == nullptr) return "no tenant with vni " + std::to_string(vni);
  // The range the configuration takes (tenants[].guarantee_gbps), so that
  // any guarantee a reload reads can be set.
  if (!(gbps >= 0 && gbps <= 1e4)) return "guarantee must be 0..10000 Gb/s";
  const size_t t = c.tenant_index(vni);
  guarantee_bps[t] = gbps * 1e9;
  const double phi = guarantee_bps[t] / 8.0 / c.params.unit_bw_Bps;
  // Only Alg. 1's phi_alpha changes: the VMs' next rounds hand out the new
  // tokens; the schedulers and their queues are not touched.
  for (size_t v = 0; v < c.vms.size(); ++v)
    if (c.vms[v].vni == vni) {
      senders_[v].set_guarantee_tokens(phi);
      receivers_[v].set_guarantee_tokens(phi);
      e_.shards[e_.layout.vm_owner[v]]->vm_tokens[v].store(phi, std::memory_order_relaxed);
      sender_seen_[v] = kStale;  // phi_alpha is an input too
      incoming_seen_[e_.layout.vm_owner[v]] = kStale;
    }
  UFAB_LOG(NOTICE, "tenant %u: guarantee %.6g Gb/s (%.6g tokens per VM)", vni, gbps, phi);
  // A class that follows the guarantee follows it now (§4.1).
  if (weight_from_guarantee[t]) {
    const std::string moved = move_class(t, c.weight_class_of(guarantee_bps[t]).cls);
    if (class_change != nullptr) *class_change = moved;
  }
  return "";
}

std::string Control::move_class(size_t t, uint32_t cls) {
  const edge::EdgeConfig& c = e_.cfg;
  if (weight_class[t] == cls) return "";
  const uint32_t from = weight_class[t];
  weight_class[t] = cls;
  const auto tenant = static_cast<uint32_t>(t);
  e_.on_workers([&](EdgeState& s) { s.sched.set_tenant_class(tenant, cls); });
  char buf[96];
  std::snprintf(buf, sizeof(buf), "tenant %u: weight_class %u -> %u", c.tenants[t].vni, from, cls);
  UFAB_LOG(NOTICE, "%s%s", buf, weight_from_guarantee[t] ? " (from its guarantee)" : "");
  return buf;
}

std::string Control::set_weight_class(uint32_t vni, int cls, std::string* change) {
  const edge::EdgeConfig& c = e_.cfg;
  if (c.tenant(vni) == nullptr) return "no tenant with vni " + std::to_string(vni);
  if (cls != kWeightFromGuarantee && (cls < 0 || cls >= static_cast<int>(kWeightClasses)))
    return "weight class must be 0.." + std::to_string(kWeightClasses - 1) + " or auto";
  const size_t t = c.tenant_index(vni);
  weight_from_guarantee[t] = cls == kWeightFromGuarantee;
  const std::string moved =
      move_class(t, weight_from_guarantee[t] ? c.weight_class_of(guarantee_bps[t]).cls : static_cast<uint32_t>(cls));
  if (change != nullptr) *change = moved;
  return "";
}

std::string Control::set_drained(const std::string& host, const std::string& path, bool on, size_t* host_index) {
  const edge::EdgeConfig& c = e_.cfg;
  size_t h = c.hosts.size();
  for (size_t i = 0; i < c.hosts.size(); ++i)
    if (c.hosts[i].name == host && !c.hosts[i].removed) h = i;
  if (h == c.hosts.size()) {
    size_t idx = 0;
    const auto [end, ec] = std::from_chars(host.data(), host.data() + host.size(), idx);
    if (host.empty() || ec != std::errc() || end != host.data() + host.size() || idx >= c.hosts.size() ||
        c.hosts[idx].removed)
      return "no host '" + host + "' (a name from hosts: or an index below " + std::to_string(c.hosts.size()) + ")";
    h = idx;
  }
  size_t p = 0;
  const auto [end, ec] = std::from_chars(path.data(), path.data() + path.size(), p);
  if (path.empty() || ec != std::errc() || end != path.data() + path.size() || p >= c.hosts[h].paths.size())
    return "host " + c.hosts[h].name + " has no path '" + path + "' (indices 0.." +
           std::to_string(c.hosts[h].paths.size() - 1) + ")";
  drained[h][p] = on;
  *host_index = h;
  const bool out = path_unusable(h, p);  // undrained, it stays out while its uplink is down (uplinks.cpp)
  e_.on_workers([&](EdgeState& s) {
    for (uint32_t i = 0; i < s.pairs.size(); ++i)
      if (s.meta[i].host == h) {
        s.pairs[i].set_path_drained(p, out);
        s.wake(i);
      }
  });
  UFAB_LOG(NOTICE, "host %s path %zu %s", c.hosts[h].name.c_str(), p, on ? "drained" : "undrained");
  return "";
}

Control::ReloadResult Control::reload(Nanos now) {
  ReloadResult r;
  ReloadDiff diff;
  std::string text;
  std::vector<int> live_class(weight_class.size());
  for (size_t t = 0; t < live_class.size(); ++t)
    live_class[t] = weight_from_guarantee[t] ? TenantChange::kFromGuarantee : static_cast<int>(weight_class[t]);
  r.error = diff_config(e_.cfg, e_.cfg_text, guarantee_bps, live_class, text, diff, port_by_name);
  // Tenants added first (their VMs find them by VNI; refused whole when
  // they do not fit), then hosts and VMs, which may still be refused
  // (room): that takes the new tenants out again (tenants.hpp).
  std::vector<uint32_t> added;
  if (r.error.empty()) r.error = add_tenants(e_, diff, added, r.changes);
  const size_t vm_lines = r.changes.size();
  if (r.error.empty()) {
    r.error = apply_vms(e_, diff, now, r.changes);
    if (!r.error.empty()) undo_added_tenants(e_, added);
  }
  if (r.error.empty() && !diff.tenants_retagged.empty()) {
    // Re-tagged tenants' tags move once their VMs changed (tenants.hpp);
    // the reply names them before their VMs.
    std::vector<std::string> lines;
    retag_tenants(e_, diff.tenants_retagged, lines);
    r.changes.insert(r.changes.begin() + static_cast<std::ptrdiff_t>(vm_lines), lines.begin(), lines.end());
  }
  if (!r.error.empty()) {
    r.changes.clear();
    UFAB_LOG(ERR, "reload rejected, nothing applied: %s", r.error.c_str());
    return r;
  }
  // Tenants removed last: their VMs are gone.
  remove_tenants(e_, diff.tenants_removed, &r.changes);
  const auto spec = [](int cls) { return cls == TenantChange::kFromGuarantee ? std::string("auto") : std::to_string(cls); };
  for (const TenantChange& ch : diff.tenants) {
    const size_t t = e_.cfg.tenant_index(ch.vni);
    const bool new_spec = ch.old_class != ch.new_class;
    // A class given anew is set once, below, from the new guarantee.
    if (new_spec) weight_from_guarantee[t] = false;
    char buf[160];
    if (ch.old_bps != ch.new_bps) {
      std::string moved;
      if (const std::string err = set_guarantee(ch.vni, ch.new_bps / 1e9, &moved); !err.empty()) {
        // Not reached: the file's range is set_guarantee's.
        r.changes.push_back("tenant " + std::to_string(ch.vni) + ": guarantee_gbps not applied: " + err);
      } else {
        std::snprintf(buf, sizeof(buf), "tenant %u: guarantee_gbps %.6g -> %.6g", ch.vni, ch.old_bps / 1e9, ch.new_bps / 1e9);
        r.changes.emplace_back(buf);
        if (!moved.empty()) r.changes.push_back(moved + " (from its guarantee)");
      }
    }
    if (new_spec) {
      const uint32_t from = weight_class[t];
      set_weight_class(ch.vni, ch.new_class == TenantChange::kFromGuarantee ? kWeightFromGuarantee : ch.new_class);
      std::snprintf(buf, sizeof(buf), "tenant %u: weight_class %s -> %s (class %u -> %u)", ch.vni, spec(ch.old_class).c_str(),
                    spec(ch.new_class).c_str(), from, weight_class[t]);
      r.changes.emplace_back(buf);
    }
  }
  UFAB_LOG(NOTICE, "reload: %zu change(s) applied", r.changes.size());
  r.ok = true;
  return r;
}

}  // namespace ufab::pipeline
