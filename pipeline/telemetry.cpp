#include "pipeline/telemetry.hpp"

#include <rte_telemetry.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace ufab::pipeline {

namespace {

enum Cmd : int { kStats, kTenants, kPaths, kPairs, kPair, kTenantSet, kPathDrain, kPathUndrain, kReload, kWorkers };

std::atomic<Telemetry::Request*> g_pending{nullptr};
std::atomic<bool> g_serving{false};

// Telemetry thread: post the request and wait for the worker.
int ask(int cmd, const char* params, rte_tel_data* d) {
  if (!g_serving.load(std::memory_order_acquire)) return -1;
  Telemetry::Request r;
  r.cmd = cmd;
  r.params = params;
  r.d = d;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (Telemetry::Request* expected = nullptr; !g_pending.compare_exchange_weak(expected, &r); expected = nullptr) {
    if (std::chrono::steady_clock::now() > deadline) return -1;  // another client's request is being served
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  while (!r.done.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > deadline) {
      Telemetry::Request* mine = &r;
      if (g_pending.compare_exchange_strong(mine, nullptr)) return -1;  // never taken: safe to leave
      while (!r.done.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::microseconds(100));
      break;  // the worker took it just now and has finished
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return r.rc;
}

int cb_stats(const char*, const char* p, rte_tel_data* d) { return ask(kStats, p, d); }
int cb_tenants(const char*, const char* p, rte_tel_data* d) { return ask(kTenants, p, d); }
int cb_paths(const char*, const char* p, rte_tel_data* d) { return ask(kPaths, p, d); }
int cb_pairs(const char*, const char* p, rte_tel_data* d) { return ask(kPairs, p, d); }
int cb_pair(const char*, const char* p, rte_tel_data* d) { return ask(kPair, p, d); }
int cb_tenant_set(const char*, const char* p, rte_tel_data* d) { return ask(kTenantSet, p, d); }
int cb_path_drain(const char*, const char* p, rte_tel_data* d) { return ask(kPathDrain, p, d); }
int cb_path_undrain(const char*, const char* p, rte_tel_data* d) { return ask(kPathUndrain, p, d); }
int cb_reload(const char*, const char* p, rte_tel_data* d) { return ask(kReload, p, d); }
int cb_workers(const char*, const char* p, rte_tel_data* d) { return ask(kWorkers, p, d); }

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
  rte_tel_data_add_dict_u64(d, "token_rounds", st.token_rounds);
  uint64_t incoming = 0;
  for (const auto& s : e.shards) incoming += s->incoming_published.load(std::memory_order_acquire);
  rte_tel_data_add_dict_u64(d, "incoming_pairs", incoming);
  rte_tel_data_add_dict_u64(d, "workers", e.shards.size());
  for (size_t r = 0; r < kDrops; ++r) {
    char name[64];
    std::snprintf(name, sizeof(name), "drop_%s", to_string(static_cast<Drop>(r)).data());
    rte_tel_data_add_dict_u64(d, name, st.dropped(static_cast<Drop>(r)));
  }
  for (size_t p = 0; p < st.ports.size(); ++p) {
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    const PortStats& ps = st.ports[p];
    rte_tel_data_add_dict_u64(c, "rx", ps.rx);
    rte_tel_data_add_dict_u64(c, "tx", ps.tx);
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
  e.on_workers([&](EdgeState& s) {
    for (uint32_t p = 0; p < s.pairs.size(); ++p) {
      const uint32_t t = s.meta[p].tenant;
      ++pairs[t];
      backlog[t] += s.sched.backlog_bytes(p);
      active[t] += s.pairs[p].state() == VmPair::State::active;
    }
  });
  rte_tel_data_start_dict(d);
  for (size_t t = 0; t < cfg.tenants.size() && t < RTE_TEL_MAX_DICT_ENTRIES; ++t) {
    const edge::TenantCfg& tc = cfg.tenants[t];
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    const double g = e.control.guarantee_bps[t];
    rte_tel_data_add_dict_u64(c, "vni", tc.vni);
    add_real(c, "guarantee_gbps", g / 1e9);
    add_real(c, "tokens_per_vm", g / 8.0 / cfg.params.unit_bw_Bps);
    rte_tel_data_add_dict_u64(c, "weight_class", tc.weight_class);
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
      if (const int ap = s.pairs[p].active_path(); ap >= 0) ++on[s.meta[p].host][static_cast<size_t>(ap)];
  });
  rte_tel_data_start_dict(d);
  for (size_t h = 0; h < cfg.hosts.size() && h < RTE_TEL_MAX_DICT_ENTRIES; ++h) {
    const edge::HostCfg& hc = cfg.hosts[h];
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", hc.ip >> 24, (hc.ip >> 16) & 255, (hc.ip >> 8) & 255, hc.ip & 255);
    rte_tel_data_add_dict_string(c, "ip", buf);
    rte_tel_data_add_dict_u64(c, "base_rtt_ns", hc.base_rtt_ns);
    for (size_t i = 0; i < hc.paths.size(); ++i) {
      int len = std::snprintf(buf, sizeof(buf), "udp_src=%u active_pairs=%" PRIu64 " drained=%d labels=",
                              hc.paths[i].udp_src_port, on[h][i], e.control.drained[h][i] ? 1 : 0);
      for (size_t k = 0; k < hc.paths[i].labels.size() && len > 0 && static_cast<size_t>(len) < sizeof(buf); ++k)
        len += std::snprintf(buf + len, sizeof(buf) - static_cast<size_t>(len), k ? ",%u" : "%u", hc.paths[i].labels[k]);
      char name[32];
      std::snprintf(name, sizeof(name), "path%zu", i);
      rte_tel_data_add_dict_string(c, name, buf);
    }
    rte_tel_data_add_dict_container(d, hc.name.c_str(), c, 0);
  }
}

// One pair's fields into c (on its worker's lcore).
void pair_fields(const EdgeState& s, uint32_t p, rte_tel_data* c, Nanos now) {
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
  rte_tel_data_add_dict_u64(c, "probes", vp.counters().probes);
  rte_tel_data_add_dict_u64(c, "responses", vp.counters().responses);
  rte_tel_data_add_dict_u64(c, "probe_losses", vp.counters().probe_losses);
  rte_tel_data_add_dict_u64(c, "finishes", vp.counters().finishes);
  rte_tel_data_add_dict_u64(c, "finish_acked", vp.counters().finish_acked);
  rte_tel_data_add_dict_u64(c, "migrations", vp.counters().migrations_violation + vp.counters().migrations_better);
}

void fill_pairs(Edge& e, const char* params, rte_tel_data* d, Nanos now) {
  rte_tel_data_start_dict(d);
  const size_t first = params != nullptr && *params != '\0' ? std::strtoull(params, nullptr, 10) : 0;
  e.on_workers([&](EdgeState& s) {
    for (uint32_t p = 0; p < s.pairs.size(); ++p) {
      const uint32_t g = s.meta[p].global;
      if (g < first || g >= first + 64) continue;
      rte_tel_data* c = rte_tel_data_alloc();
      if (c == nullptr) return;
      pair_fields(s, p, c, now);
      char name[32];
      std::snprintf(name, sizeof(name), "pair_0x%08" PRIx32, s.meta[p].wire_id);
      rte_tel_data_add_dict_container(d, name, c, 0);
    }
  });
}

void fill_pair(Edge& e, const char* params, rte_tel_data* d, Nanos now) {
  char* end = nullptr;
  const unsigned long long want = params != nullptr ? std::strtoull(params, &end, 10) : 0;
  if (params == nullptr || *params == '\0' || *end != '\0') return fail(d, "usage: /ufab/pair,INDEX");
  bool found = false;
  e.on_workers([&](EdgeState& s) {
    for (uint32_t p = 0; p < s.pairs.size() && !found; ++p) {
      if (s.meta[p].global != want) continue;
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

void fill_tenant_set(Edge& e, const char* params, rte_tel_data* d) {
  const std::vector<std::string> a = split(params);
  char* end = nullptr;
  if (a.size() != 2) return fail(d, "usage: /ufab/tenant_set,VNI,GBPS");
  const unsigned long vni = std::strtoul(a[0].c_str(), &end, 10);
  if (a[0].empty() || *end != '\0') return fail(d, "VNI '" + a[0] + "' is not a number");
  const double gbps = std::strtod(a[1].c_str(), &end);
  if (a[1].empty() || *end != '\0') return fail(d, "GBPS '" + a[1] + "' is not a number");
  if (const std::string err = e.control.set_guarantee(static_cast<uint32_t>(vni), gbps); !err.empty()) return fail(d, err);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data_add_dict_u64(d, "vni", vni);
  add_real(d, "guarantee_gbps", gbps);
}

void fill_drain(Edge& e, const char* params, rte_tel_data* d, bool on) {
  const std::vector<std::string> a = split(params);
  if (a.size() != 2) return fail(d, on ? "usage: /ufab/path_drain,HOST,PATH" : "usage: /ufab/path_undrain,HOST,PATH");
  size_t h = 0;
  if (const std::string err = e.control.set_drained(a[0], a[1], on, &h); !err.empty()) return fail(d, err);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data_add_dict_string(d, "host", e.cfg.hosts[h].name.c_str());
  rte_tel_data_add_dict_u64(d, "path", std::strtoull(a[1].c_str(), nullptr, 10));
  rte_tel_data_add_dict_int(d, "drained", on ? 1 : 0);
}

void fill_reload(Edge& e, rte_tel_data* d) {
  const Control::ReloadResult r = e.control.reload();
  if (!r.ok) return fail(d, r.error);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data* c = rte_tel_data_alloc();
  if (c == nullptr) return;
  rte_tel_data_start_array(c, RTE_TEL_STRING_VAL);
  for (const std::string& ch : r.changes) rte_tel_data_add_array_string(c, ch.c_str());
  rte_tel_data_add_dict_container(d, "changes", c, 0);
}

void fill_workers(Edge& e, rte_tel_data* d) {
  const EdgeTotals t = totals(e);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "control_lcore", e.layout.control_lcore);
  rte_tel_data_add_dict_int(d, "mixed", e.mixed() ? 1 : 0);
  for (size_t w = 0; w < e.shards.size(); ++w) {
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    rte_tel_data_add_dict_u64(c, "lcore", e.layout.worker_lcores[w]);
    rte_tel_data_add_dict_u64(c, "pairs", t.worker_pairs[w]);
    rte_tel_data_add_dict_u64(c, "rx", t.per_worker[w].rx());
    rte_tel_data_add_dict_u64(c, "tx", t.per_worker[w].tx());
    rte_tel_data_add_dict_u64(c, "queued", t.worker_queued[w]);
    rte_tel_data_add_dict_u64(c, "handed_off", t.per_worker[w].handed_off);
    rte_tel_data_add_dict_u64(c, "taken_over", t.per_worker[w].taken_over);
    add_real(c, "busy", t.worker_busy[w]);
    char name[32];
    std::snprintf(name, sizeof(name), "worker%zu", w);
    rte_tel_data_add_dict_container(d, name, c, 0);
  }
}

}  // namespace

Telemetry::Telemetry(Edge& e) : e_(e) {
  static const bool registered = [] {
    rte_telemetry_register_cmd("/ufab/stats", cb_stats, "ufab-edge counters, drops per reason, conservation. No parameters");
    rte_telemetry_register_cmd("/ufab/tenants", cb_tenants, "Tenants: guarantee, tokens, weight class, pairs. No parameters");
    rte_telemetry_register_cmd("/ufab/paths", cb_paths, "Remote hosts: base RTT, candidate paths, drained. No parameters");
    rte_telemetry_register_cmd("/ufab/pairs", cb_pairs, "VM-pairs (64 at a time). Parameter: first pair index");
    rte_telemetry_register_cmd("/ufab/pair", cb_pair, "One VM-pair with its last 64 samples. Parameter: pair index");
    rte_telemetry_register_cmd("/ufab/tenant_set", cb_tenant_set, "Set a tenant's guarantee. Parameters: VNI,GBPS");
    rte_telemetry_register_cmd("/ufab/path_drain", cb_path_drain, "Stop using a path. Parameters: HOST,PATH");
    rte_telemetry_register_cmd("/ufab/path_undrain", cb_path_undrain, "Use a drained path again. Parameters: HOST,PATH");
    rte_telemetry_register_cmd("/ufab/reload", cb_reload, "Re-read the configuration file (as SIGHUP). No parameters");
    rte_telemetry_register_cmd("/ufab/workers", cb_workers, "Per worker lcore: pairs, rx, tx, queued, busy. No parameters");
    return true;
  }();
  (void)registered;
  g_serving.store(true, std::memory_order_release);
}

Telemetry::~Telemetry() {
  g_serving.store(false, std::memory_order_release);
  serve(0);  // a request posted just before: answer it so its caller returns
}

void Telemetry::serve(Nanos now) {
  if (g_pending.load(std::memory_order_relaxed) == nullptr) return;
  Request* r = g_pending.exchange(nullptr, std::memory_order_acq_rel);
  if (r == nullptr) return;
  switch (r->cmd) {
    case kStats: fill_stats(e_, r->d); break;
    case kTenants: fill_tenants(e_, r->d); break;
    case kPaths: fill_paths(e_, r->d); break;
    case kPairs: fill_pairs(e_, r->params, r->d, now); break;
    case kPair: fill_pair(e_, r->params, r->d, now); break;
    case kTenantSet: fill_tenant_set(e_, r->params, r->d); break;
    case kPathDrain: fill_drain(e_, r->params, r->d, true); break;
    case kPathUndrain: fill_drain(e_, r->params, r->d, false); break;
    case kReload: fill_reload(e_, r->d); break;
    case kWorkers: fill_workers(e_, r->d); break;
    default: r->rc = -1;
  }
  r->done.store(true, std::memory_order_release);
}

}  // namespace ufab::pipeline
