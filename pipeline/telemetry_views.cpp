// Telemetry views: counters, tenants, paths, pairs, one pair with its history, workers.
#include <rte_telemetry.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "edge/dpdk/port.hpp"
#include "pipeline/entries.hpp"
#include "pipeline/reload.hpp"
#include "pipeline/telemetry_fill.hpp"

namespace ufab::pipeline::tel {

void add_real(rte_tel_data* d, const char* name, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  rte_tel_data_add_dict_string(d, name, buf);
}

const char* state_name(VmPair::State st) {
  switch (st) {
    case VmPair::State::selecting: return "selecting";
    case VmPair::State::active: return "active";
    case VmPair::State::idle: return "idle";
  }
  return "?";
}

// {"ok": 0, "error": "..."} (22.11 telemetry has no booleans). A string
// value holds 127 characters: a longer message goes on in error_2, error_3.
void fail(rte_tel_data* d, const std::string& why) {
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 0);
  constexpr size_t kPart = RTE_TEL_MAX_STRING_LEN - 1;
  for (size_t at = 0, k = 1; at < why.size() && k <= 4; at += kPart, ++k) {
    const std::string name = k == 1 ? "error" : "error_" + std::to_string(k);
    rte_tel_data_add_dict_string(d, name.c_str(), why.substr(at, kPart).c_str());
  }
}

// "A,B" -> {"A", "B"}
std::vector<std::string> split(const char* params) {
  std::vector<std::string> out;
  if (params == nullptr) return out;
  std::string cur;
  for (const char* c = params; *c != '\0'; ++c) {
    if (*c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += *c;
    }
  }
  out.push_back(cur);
  return out;
}

void fill_stats(Edge& e, rte_tel_data* d) {
  const EdgeTotals t = totals(e);
  const EdgeStats& st = t.stats;
  rte_tel_data_start_dict(d);
  const uint64_t rx = st.rx(), tx = st.tx(), dropped = st.dropped(), q = t.queued;
  rte_tel_data_add_dict_u64(d, "rx", rx);
  rte_tel_data_add_dict_u64(d, "tx", tx);
  rte_tel_data_add_dict_u64(d, "queued", q);
  rte_tel_data_add_dict_u64(d, "in_rings", st.in_rings());
  rte_tel_data_add_dict_u64(d, "dropped", dropped);
  rte_tel_data_add_dict_u64(d, "absorbed", st.absorbed);
  rte_tel_data_add_dict_u64(d, "generated", st.generated);
  rte_tel_data_add_dict_u64(d, "conserved", rx + st.generated == tx + q + dropped + st.absorbed);
  rte_tel_data_add_dict_u64(d, "encapsulated", st.encapsulated);
  rte_tel_data_add_dict_u64(d, "decapsulated", st.decapsulated);
  rte_tel_data_add_dict_u64(d, "reflected", st.reflected);
  rte_tel_data_add_dict_u64(d, "arp_replied", st.arp_replied);
  rte_tel_data_add_dict_u64(d, "nd_replied", st.nd_replied);
  rte_tel_data_add_dict_u64(d, "ptb_sent", st.ptb_sent);
  rte_tel_data_add_dict_u64(d, "local_delivered", st.local_delivered);
  rte_tel_data_add_dict_u64(d, "incoming_reused", st.incoming_reused);
  rte_tel_data_add_dict_u64(d, "token_rounds", st.token_rounds);
  rte_tel_data_add_dict_u64(d, "token_rounds_stretched", st.token_rounds_stretched);
  rte_tel_data_add_dict_u64(d, "token_vm_assignments", st.token_vm_assignments);
  rte_tel_data_add_dict_u64(d, "uplink_failovers", e.control.uplink_failovers);
  rte_tel_data_add_dict_u64(d, "pair_polls", st.pair_polls);
  rte_tel_data_add_dict_u64(d, "pair_poll_cuts", st.pair_poll_cuts);
  rte_tel_data_add_dict_u64(d, "bypassed", st.bypassed);
  rte_tel_data_add_dict_u64(d, "classify_lookups", st.classify_lookups);
  uint64_t incoming = 0;
  for (const auto& s : e.shards) incoming += s->incoming_published.load(std::memory_order_acquire);
  rte_tel_data_add_dict_u64(d, "incoming_pairs", incoming);
  rte_tel_data_add_dict_u64(d, "workers", e.shards.size());
  for (size_t r = 0; r < kDrops; ++r) {
    char name[64];
    std::snprintf(name, sizeof(name), "drop_%s", to_string(static_cast<Drop>(r)).data());
    rte_tel_data_add_dict_u64(d, name, st.dropped(static_cast<Drop>(r)));
  }
  // The edge's ports, and those removed at runtime that counted frames
  // ("removed": 1; ports.hpp).
  for (size_t p = 0; p < st.ports.size(); ++p) {
    const PortStats& ps = st.ports[p];
    const bool present = e.port_present(static_cast<uint16_t>(p));
    if (!present && !ps.counted()) continue;
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    // Its device name (ports attached at runtime take the lowest free id).
    if (char dev[RTE_ETH_NAME_MAX_LEN]; present && rte_eth_dev_get_name_by_port(static_cast<uint16_t>(p), dev) == 0)
      rte_tel_data_add_dict_string(c, "name", dev);
    rte_tel_data_add_dict_u64(c, "rx", ps.rx);
    rte_tel_data_add_dict_u64(c, "tx", ps.tx);
    if (!present) rte_tel_data_add_dict_u64(c, "removed", 1);
    // The link now (read here, on the telemetry thread), how the edge
    // follows it (the PMD's events, or polled) and the changes it saw
    // (port_link.hpp). A removed port is not asked (ethdev would log
    // "Invalid port_id").
    const bool up = present && dpdk::link_up_now(static_cast<uint16_t>(p)).value_or(false);
    rte_tel_data_add_dict_u64(c, "link_up", up ? 1 : 0);
    if (p < e.links.size()) {
      const PortLink& l = e.links[static_cast<uint16_t>(p)];
      rte_tel_data_add_dict_string(c, "link_watch", l.events.load(std::memory_order_relaxed) ? "events" : "polled");
      rte_tel_data_add_dict_u64(c, "link_changes", l.changes.load(std::memory_order_relaxed));
    }
    for (size_t r = 0; r < kDrops; ++r)
      if (ps.drops[r] != 0) rte_tel_data_add_dict_u64(c, to_string(static_cast<Drop>(r)).data(), ps.drops[r]);
    char name[32];
    std::snprintf(name, sizeof(name), "port%zu", p);
    rte_tel_data_add_dict_container(d, name, c, 0);
  }
}

void fill_tenants(Edge& e, rte_tel_data* d) {
  const edge::EdgeConfig& cfg = e.cfg;
  std::vector<uint64_t> pairs(cfg.tenants.size()), backlog(cfg.tenants.size()), active(cfg.tenants.size());
  // The class as the schedulers hold it (every worker's is the same: the
  // control lcore moves them together), so a change shows once applied.
  std::vector<uint32_t> cls(cfg.tenants.size()), cls_weight(cfg.tenants.size());
  e.on_workers([&](EdgeState& s) {
    if (s.worker == 0)
      for (uint32_t t = 0; t < cls.size(); ++t) {
        cls[t] = s.sched.tenant_class(t);
        cls_weight[t] = s.sched.class_weight(cls[t]);
      }
    for (uint32_t p = 0; p < s.pairs.size(); ++p) {
      if (!s.live(p)) continue;
      const uint32_t t = s.meta[p].tenant;
      ++pairs[t];
      backlog[t] += s.sched.backlog_bytes(p);
      active[t] += s.pairs[p].state() == VmPair::State::active;
    }
  });
  rte_tel_data_start_dict(d);
  for (size_t t = 0; t < cfg.tenants.size() && t < RTE_TEL_MAX_DICT_ENTRIES; ++t) {
    const edge::TenantCfg& tc = cfg.tenants[t];
    if (tc.removed) continue;  // taken out by a reload (tenants.hpp)
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    const double g = e.control.guarantee_bps[t];
    rte_tel_data_add_dict_u64(c, "vni", tc.vni);
    rte_tel_data_add_dict_string(c, "tags", tags_text(tc.svlan, tc.vlan).c_str());
    add_real(c, "guarantee_gbps", g / 1e9);
    add_real(c, "tokens_per_vm", g / 8.0 / cfg.params.unit_bw_Bps);
    rte_tel_data_add_dict_u64(c, "weight_class", cls[t]);
    rte_tel_data_add_dict_u64(c, "class_weight", cls_weight[t]);
    // auto: its guarantee in units of weight_unit_gbps, mapped to the nearest
    // class (§4.1); weight_error = class weight / that - 1.
    const bool from_guarantee = e.control.weight_from_guarantee[t];
    rte_tel_data_add_dict_string(c, "weight_class_from", from_guarantee ? "guarantee" : "config");
    if (from_guarantee) add_real(c, "weight_error", cfg.weight_class_of(g).rel_error);
    rte_tel_data_add_dict_u64(c, "pairs", pairs[t]);
    rte_tel_data_add_dict_u64(c, "active_pairs", active[t]);
    rte_tel_data_add_dict_u64(c, "backlog_bytes", backlog[t]);
    char name[32];
    std::snprintf(name, sizeof(name), "tenant%" PRIu32, tc.vni);
    rte_tel_data_add_dict_container(d, name, c, 0);
  }
}

void fill_paths(Edge& e, rte_tel_data* d) {
  const edge::EdgeConfig& cfg = e.cfg;
  std::vector<std::vector<uint64_t>> on(cfg.hosts.size());
  for (size_t h = 0; h < cfg.hosts.size(); ++h) on[h].assign(cfg.hosts[h].paths.size(), 0);
  e.on_workers([&](EdgeState& s) {
    for (uint32_t p = 0; p < s.pairs.size(); ++p)
      if (const int ap = s.pairs[p].active_path(); ap >= 0 && s.live(p)) ++on[s.meta[p].host][static_cast<size_t>(ap)];
  });
  rte_tel_data_start_dict(d);
  for (size_t h = 0; h < cfg.hosts.size() && h < RTE_TEL_MAX_DICT_ENTRIES; ++h) {
    const edge::HostCfg& hc = cfg.hosts[h];
    if (hc.removed) continue;  // by a reload (remote_vms.hpp)
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    char buf[160];
    rte_tel_data_add_dict_string(c, "ip", edge::ip4_text(hc.ip).c_str());
    rte_tel_data_add_dict_u64(c, "base_rtt_ns", hc.base_rtt_ns);
    for (size_t i = 0; i < hc.paths.size(); ++i) {
      int len = std::snprintf(buf, sizeof(buf), "udp_src=%u active_pairs=%" PRIu64 " drained=%d labels=",
                              hc.paths[i].udp_src_port, on[h][i], e.control.drained[h][i] ? 1 : 0);
      for (size_t k = 0; k < hc.paths[i].labels.size() && len > 0 && static_cast<size_t>(len) < sizeof(buf); ++k)
        len += std::snprintf(buf + len, sizeof(buf) - static_cast<size_t>(len), k ? ",%u" : "%u", hc.paths[i].labels[k]);
      if (len > 0 && static_cast<size_t>(len) < sizeof(buf))  // the fabric port (uplink) it leaves on
        std::snprintf(buf + len, sizeof(buf) - static_cast<size_t>(len), " port=%u uplink_down=%d", hc.paths[i].port,
                      e.control.uplink_is_down(hc.paths[i].port) ? 1 : 0);
      char name[32];
      std::snprintf(name, sizeof(name), "path%zu", i);
      rte_tel_data_add_dict_string(c, name, buf);
    }
    rte_tel_data_add_dict_container(d, hc.name.c_str(), c, 0);
  }
}

// One pair's fields into c (on its worker's lcore).
static void pair_fields(const EdgeState& s, uint32_t p, rte_tel_data* c, Nanos now) {
  const VmPair& vp = s.pairs[p];
  const PairMeta& pm = s.meta[p];
  rte_tel_data_start_dict(c);
  rte_tel_data_add_dict_u64(c, "index", pm.global);
  rte_tel_data_add_dict_u64(c, "worker", s.worker);
  rte_tel_data_add_dict_string(c, "local", s.cfg.vms[pm.local_vm].name.c_str());
  rte_tel_data_add_dict_string(c, "remote", s.cfg.remote_vms[pm.remote_vm].name.c_str());
  rte_tel_data_add_dict_u64(c, "vni", s.cfg.tenants[pm.tenant].vni);
  rte_tel_data_add_dict_string(c, "state", state_name(vp.state()));
  rte_tel_data_add_dict_int(c, "path", vp.active_path());
  add_real(c, "window_bytes", vp.window(now));
  rte_tel_data_add_dict_u64(c, "inflight_bytes", vp.inflight());
  rte_tel_data_add_dict_u64(c, "backlog_bytes", s.sched.backlog_bytes(p));
  add_real(c, "token", vp.token());
  add_real(c, "assigned_token", vp.assigned_token());
  add_real(c, "rate_gbps", vp.rate_Bps() * 8 / 1e9);
  rte_tel_data_add_dict_u64(c, "bytes_sent", vp.bytes_sent());
  rte_tel_data_add_dict_u64(c, "last_rtt_us", vp.last_rtt() / kUs);
  rte_tel_data_add_dict_u64(c, "rtt_estimate_us", vp.rtt_estimate(now) / kUs);
  rte_tel_data_add_dict_u64(c, "probes", vp.counters().probes);
  rte_tel_data_add_dict_u64(c, "responses", vp.counters().responses);
  rte_tel_data_add_dict_u64(c, "probe_losses", vp.counters().probe_losses);
  rte_tel_data_add_dict_u64(c, "finishes", vp.counters().finishes);
  rte_tel_data_add_dict_u64(c, "finish_acked", vp.counters().finish_acked);
  rte_tel_data_add_dict_u64(c, "finish_gave_up", vp.counters().finish_gave_up);
  rte_tel_data_add_dict_u64(c, "finish_abandoned", vp.counters().finish_abandoned);
  rte_tel_data_add_dict_u64(c, "migrations", vp.counters().migrations_violation + vp.counters().migrations_better);
}

// /ufab/pairs,FIRST: the first kPairsPerPage pairs with index FIRST or
// higher, and "next_first" (the index the next page starts at) when more
// follow. Indexes of pairs removed at runtime are not reused, so after many
// changes the live indexes have gaps: a page holds the next 32 live pairs,
// not the index range FIRST .. FIRST + 31, and is empty only at the end. A
// page of 32 pairs is about 9 KB of JSON, inside DPDK's 16 KB reply limit
// (64 were cut at about 59).
void fill_pairs(Edge& e, const char* params, rte_tel_data* d, Nanos now) {
  constexpr size_t kPairsPerPage = 32;
  char* end = nullptr;
  const unsigned long long first = params != nullptr && *params != '\0' ? std::strtoull(params, &end, 10) : 0;
  if (end != nullptr && *end != '\0') return fail(d, "usage: /ufab/pairs[,FIRST]");
  // The page's bounds from the live indexes of every worker, then its pairs.
  // A pair made between the two passes has a higher index than any before
  // it, so it is beyond `last`; one removed between them is left out.
  std::vector<uint64_t> live;
  e.on_workers([&](EdgeState& s) {
    for (uint32_t p = 0; p < s.pairs.size(); ++p)
      if (s.live(p) && s.meta[p].global >= first) live.push_back(s.meta[p].global);
  });
  rte_tel_data_start_dict(d);
  if (live.empty()) return;
  const bool more = live.size() > kPairsPerPage;
  const size_t n = more ? kPairsPerPage : live.size();
  std::nth_element(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(n - 1), live.end());
  const uint64_t last = live[n - 1];
  e.on_workers([&](EdgeState& s) {
    for (uint32_t p = 0; p < s.pairs.size(); ++p) {
      if (!s.live(p)) continue;  // removed at runtime (remote_vms.hpp); its index is not reused
      const uint32_t g = s.meta[p].global;
      if (g < first || g > last) continue;
      rte_tel_data* c = rte_tel_data_alloc();
      if (c == nullptr) return;
      pair_fields(s, p, c, now);
      char name[32];
      std::snprintf(name, sizeof(name), "pair_0x%08" PRIx32, s.meta[p].wire_id);
      rte_tel_data_add_dict_container(d, name, c, 0);
    }
  });
  if (more) rte_tel_data_add_dict_u64(d, "next_first", last + 1);
}

void fill_pair(Edge& e, const char* params, rte_tel_data* d, Nanos now) {
  char* end = nullptr;
  const unsigned long long want = params != nullptr ? std::strtoull(params, &end, 10) : 0;
  if (params == nullptr || *params == '\0' || *end != '\0') return fail(d, "usage: /ufab/pair,INDEX");
  bool found = false;
  e.on_workers([&](EdgeState& s) {
    for (uint32_t p = 0; p < s.pairs.size() && !found; ++p) {
      if (s.meta[p].global != want || !s.live(p)) continue;
      found = true;
      pair_fields(s, p, d, now);
      // DPDK 22.11 telemetry nests containers one level deep, so each sample
      // is one self-describing string in the "history" array.
      rte_tel_data* h = rte_tel_data_alloc();
      if (h == nullptr) return;
      rte_tel_data_start_array(h, RTE_TEL_STRING_VAL);
      const PairHistory& hist = s.history[p];
      for (uint32_t k = 0; k < hist.size(); ++k) {
        const PairSample& smp = hist.at(k);
        char buf[RTE_TEL_MAX_STRING_LEN];
        std::snprintf(buf, sizeof(buf), "t_ns=%" PRIu64 ",window_bytes=%.0f,rate_bps=%.0f,path=%d", smp.t_ns,
                      smp.window_bytes, smp.rate_bps, smp.path);
        rte_tel_data_add_array_string(h, buf);
      }
      rte_tel_data_add_dict_container(d, "history", h, 0);
    }
  });
  if (!found) fail(d, "no pair " + std::string(params));
}

void fill_workers(Edge& e, rte_tel_data* d) {
  const EdgeTotals t = totals(e);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "control_lcore", e.layout.control_lcore);
  rte_tel_data_add_dict_int(d, "mixed", e.mixed() ? 1 : 0);
  // What reloads may still add (pipeline/remote_vms.hpp, local_vms.hpp):
  // remote VM, local VM and host entries (removed ones no slot names, then
  // the room left of params.spare_*: entries.hpp), and each worker's pair
  // slots (spare_pairs).
  const FreeEntries room = free_entries(e);
  rte_tel_data_add_dict_u64(d, "remote_vm_room", room.remote_vms.size() + e.remote_vm_room);
  rte_tel_data_add_dict_u64(d, "local_vm_room", room.local_vms.size() + e.local_vm_room);
  rte_tel_data_add_dict_u64(d, "host_room", room.hosts.size() + e.host_room);
  rte_tel_data_add_dict_u64(d, "tenant_room", room.tenants.size() + e.tenant_room);
  // How each port's RX queues are polled (layout.hpp RxMode): "rx_port<P>": "<mode> queues=<Q>".
  for (size_t p = 0; p < e.layout.rx_mode.size(); ++p) {
    if (!e.port_present(static_cast<uint16_t>(p))) continue;
    char key[32], val[64];
    std::snprintf(key, sizeof(key), "rx_port%zu", p);
    std::snprintf(val, sizeof(val), "%s queues=%u", to_string(e.layout.rx_mode[p]), e.layout.rx_queues[p]);
    rte_tel_data_add_dict_string(d, key, val);
    // Where the port spreads by RSS: whether its redirection table sends each
    // VM to its owner (rss_reta.hpp), "rx_reta<P>": "programmed: ..." or
    // "not programmed: <why>", which the library cuts to the 127 characters a
    // telemetry string holds (and says so with E2BIG: nothing to do here).
    if (p < e.layout.rx_reta.size() && !e.layout.rx_reta[p].empty()) {
      std::snprintf(key, sizeof(key), "rx_reta%zu", p);
      rte_tel_data_add_dict_string(d, key, e.layout.rx_reta[p].c_str());
    }
  }
  for (size_t w = 0; w < e.shards.size(); ++w) {
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    rte_tel_data_add_dict_u64(c, "lcore", e.layout.worker_lcores[w]);
    rte_tel_data_add_dict_u64(c, "pairs", t.worker_pairs[w]);
    rte_tel_data_add_dict_u64(c, "spare_pairs", t.worker_room[w]);
    rte_tel_data_add_dict_u64(c, "rx", t.per_worker[w].rx());
    rte_tel_data_add_dict_u64(c, "tx", t.per_worker[w].tx());
    rte_tel_data_add_dict_u64(c, "queued", t.worker_queued[w]);
    rte_tel_data_add_dict_u64(c, "handed_off", t.per_worker[w].handed_off);
    rte_tel_data_add_dict_u64(c, "taken_over", t.per_worker[w].taken_over);
    rte_tel_data_add_dict_u64(c, "rxq_polled", t.per_worker[w].rxq_polled);
    rte_tel_data_add_dict_u64(c, "misqueued", t.per_worker[w].misqueued);
    add_real(c, "busy", t.worker_busy[w]);
    char name[32];
    std::snprintf(name, sizeof(name), "worker%zu", w);
    rte_tel_data_add_dict_container(d, name, c, 0);
  }
}

}  // namespace ufab::pipeline::tel
