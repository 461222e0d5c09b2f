#include "pipeline/telemetry.hpp"

#include <rte_telemetry.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace ufab::pipeline {

namespace {

enum Cmd : int { kStats, kTenants, kPaths, kPairs };

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

void fill_stats(const EdgeState& s, rte_tel_data* d) {
  rte_tel_data_start_dict(d);
  const uint64_t rx = s.stats.rx(), tx = s.stats.tx(), dropped = s.stats.dropped(), q = s.queued();
  rte_tel_data_add_dict_u64(d, "rx", rx);
  rte_tel_data_add_dict_u64(d, "tx", tx);
  rte_tel_data_add_dict_u64(d, "queued", q);
  rte_tel_data_add_dict_u64(d, "dropped", dropped);
  rte_tel_data_add_dict_u64(d, "absorbed", s.stats.absorbed);
  rte_tel_data_add_dict_u64(d, "generated", s.stats.generated);
  rte_tel_data_add_dict_u64(d, "conserved", rx + s.stats.generated == tx + q + dropped + s.stats.absorbed);
  rte_tel_data_add_dict_u64(d, "encapsulated", s.stats.encapsulated);
  rte_tel_data_add_dict_u64(d, "decapsulated", s.stats.decapsulated);
  rte_tel_data_add_dict_u64(d, "reflected", s.stats.reflected);
  rte_tel_data_add_dict_u64(d, "token_rounds", s.stats.token_rounds);
  rte_tel_data_add_dict_u64(d, "incoming_pairs", s.incoming.size());
  for (size_t r = 0; r < kDrops; ++r) {
    char name[64];
    std::snprintf(name, sizeof(name), "drop_%s", to_string(static_cast<Drop>(r)).data());
    rte_tel_data_add_dict_u64(d, name, s.stats.dropped(static_cast<Drop>(r)));
  }
  for (size_t p = 0; p < s.stats.ports.size(); ++p) {
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    const PortStats& ps = s.stats.ports[p];
    rte_tel_data_add_dict_u64(c, "rx", ps.rx);
    rte_tel_data_add_dict_u64(c, "tx", ps.tx);
    for (size_t r = 0; r < kDrops; ++r)
      if (ps.drops[r] != 0) rte_tel_data_add_dict_u64(c, to_string(static_cast<Drop>(r)).data(), ps.drops[r]);
    char name[32];
    std::snprintf(name, sizeof(name), "port%zu", p);
    rte_tel_data_add_dict_container(d, name, c, 0);
  }
}

void fill_tenants(const EdgeState& s, rte_tel_data* d) {
  rte_tel_data_start_dict(d);
  for (size_t t = 0; t < s.cfg.tenants.size() && t < RTE_TEL_MAX_DICT_ENTRIES; ++t) {
    const edge::TenantCfg& tc = s.cfg.tenants[t];
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    rte_tel_data_add_dict_u64(c, "vni", tc.vni);
    add_real(c, "guarantee_gbps", tc.guarantee_bps / 1e9);
    add_real(c, "tokens_per_vm", tc.tokens(s.cfg.params.unit_bw_Bps));
    rte_tel_data_add_dict_u64(c, "weight_class", tc.weight_class);
    uint64_t pairs = 0, backlog = 0, active = 0;
    for (uint32_t p = 0; p < s.pairs.size(); ++p) {
      if (s.meta[p].tenant != t) continue;
      ++pairs;
      backlog += s.sched.backlog_bytes(p);
      active += s.pairs[p].state() == VmPair::State::active;
    }
    rte_tel_data_add_dict_u64(c, "pairs", pairs);
    rte_tel_data_add_dict_u64(c, "active_pairs", active);
    rte_tel_data_add_dict_u64(c, "backlog_bytes", backlog);
    char name[32];
    std::snprintf(name, sizeof(name), "tenant%" PRIu32, tc.vni);
    rte_tel_data_add_dict_container(d, name, c, 0);
  }
}

void fill_paths(const EdgeState& s, rte_tel_data* d) {
  rte_tel_data_start_dict(d);
  for (size_t h = 0; h < s.cfg.hosts.size() && h < RTE_TEL_MAX_DICT_ENTRIES; ++h) {
    const edge::HostCfg& hc = s.cfg.hosts[h];
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    char buf[128];
    std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", hc.ip >> 24, (hc.ip >> 16) & 255, (hc.ip >> 8) & 255, hc.ip & 255);
    rte_tel_data_add_dict_string(c, "ip", buf);
    rte_tel_data_add_dict_u64(c, "base_rtt_ns", hc.base_rtt_ns);
    for (size_t i = 0; i < hc.paths.size(); ++i) {
      uint64_t on = 0;
      for (uint32_t p = 0; p < s.pairs.size(); ++p)
        on += s.meta[p].host == h && s.pairs[p].active_path() == static_cast<int>(i);
      int len = std::snprintf(buf, sizeof(buf), "udp_src=%u active_pairs=%" PRIu64 " labels=", hc.paths[i].udp_src_port, on);
      for (size_t k = 0; k < hc.paths[i].labels.size() && len > 0 && static_cast<size_t>(len) < sizeof(buf); ++k)
        len += std::snprintf(buf + len, sizeof(buf) - static_cast<size_t>(len), k ? ",%u" : "%u", hc.paths[i].labels[k]);
      char name[32];
      std::snprintf(name, sizeof(name), "path%zu", i);
      rte_tel_data_add_dict_string(c, name, buf);
    }
    rte_tel_data_add_dict_container(d, hc.name.c_str(), c, 0);
  }
}

void fill_pairs(const EdgeState& s, const char* params, rte_tel_data* d, Nanos now) {
  rte_tel_data_start_dict(d);
  const size_t first = params != nullptr && *params != '\0' ? std::strtoull(params, nullptr, 10) : 0;
  for (size_t p = first; p < s.pairs.size() && p < first + 64; ++p) {
    const VmPair& vp = s.pairs[p];
    const PairMeta& pm = s.meta[p];
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) break;
    rte_tel_data_start_dict(c);
    rte_tel_data_add_dict_u64(c, "index", p);
    rte_tel_data_add_dict_string(c, "local", s.cfg.vms[pm.local_vm].name.c_str());
    rte_tel_data_add_dict_string(c, "remote", s.cfg.remote_vms[pm.remote_vm].name.c_str());
    rte_tel_data_add_dict_u64(c, "vni", s.cfg.tenants[pm.tenant].vni);
    rte_tel_data_add_dict_string(c, "state", state_name(vp.state()));
    rte_tel_data_add_dict_int(c, "path", vp.active_path());
    add_real(c, "window_bytes", vp.window(now));
    rte_tel_data_add_dict_u64(c, "inflight_bytes", vp.inflight());
    rte_tel_data_add_dict_u64(c, "backlog_bytes", s.sched.backlog_bytes(static_cast<uint32_t>(p)));
    add_real(c, "token", vp.token());
    add_real(c, "assigned_token", vp.assigned_token());
    add_real(c, "rate_gbps", vp.rate_Bps() * 8 / 1e9);
    rte_tel_data_add_dict_u64(c, "bytes_sent", vp.bytes_sent());
    rte_tel_data_add_dict_u64(c, "probes", vp.counters().probes);
    rte_tel_data_add_dict_u64(c, "responses", vp.counters().responses);
    rte_tel_data_add_dict_u64(c, "probe_losses", vp.counters().probe_losses);
    rte_tel_data_add_dict_u64(c, "migrations", vp.counters().migrations_violation + vp.counters().migrations_better);
    char name[32];
    std::snprintf(name, sizeof(name), "pair_0x%08" PRIx32, pm.wire_id);
    rte_tel_data_add_dict_container(d, name, c, 0);
  }
}

}  // namespace

Telemetry::Telemetry(EdgeState& s) : s_(s) {
  static const bool registered = [] {
    rte_telemetry_register_cmd("/ufab/stats", cb_stats, "ufab-edge counters, drops per reason, conservation. No parameters");
    rte_telemetry_register_cmd("/ufab/tenants", cb_tenants, "Tenants: guarantee, tokens, weight class, pairs. No parameters");
    rte_telemetry_register_cmd("/ufab/paths", cb_paths, "Remote hosts: base RTT, candidate paths. No parameters");
    rte_telemetry_register_cmd("/ufab/pairs", cb_pairs, "VM-pairs (64 at a time). Parameter: first pair index");
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
    case kStats: fill_stats(s_, r->d); break;
    case kTenants: fill_tenants(s_, r->d); break;
    case kPaths: fill_paths(s_, r->d); break;
    case kPairs: fill_pairs(s_, r->params, r->d, now); break;
    default: r->rc = -1;
  }
  r->done.store(true, std::memory_order_release);
}

}  // namespace ufab::pipeline
