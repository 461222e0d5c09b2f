#include "pipeline/telemetry.hpp"

#include <rte_telemetry.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/telemetry_fill.hpp"

namespace ufab::pipeline {

namespace {

enum Cmd : int { kStats, kTenants, kPaths, kPairs, kPair, kTenantSet, kTenantClass, kPathDrain, kPathUndrain, kReload, kWorkers, kPortAdd, kPortRemove };

std::atomic<Telemetry::Request*> g_pending{nullptr};
std::atomic<bool> g_serving{false};

// The commands that change the running edge (refused once it stops).
bool changes_edge(int cmd) {
  return cmd == kTenantSet || cmd == kTenantClass || cmd == kPathDrain || cmd == kPathUndrain || cmd == kReload ||
         cmd == kPortAdd || cmd == kPortRemove;
}

// Telemetry thread: post the request and wait for the control lcore. A
// request nobody takes is answered {"ok": 0, "error": ...} here (the
// telemetry library would send a bare null for an error code).
int ask(int cmd, const char* params, rte_tel_data* d) {
  if (!g_serving.load(std::memory_order_acquire)) {
    tel::fail(d, "ufab-edge is not serving commands: it is starting or exiting");
    return 0;
  }
  Telemetry::Request r;
  r.cmd = cmd;
  r.params = params;
  r.d = d;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (Telemetry::Request* expected = nullptr; !g_pending.compare_exchange_weak(expected, &r); expected = nullptr) {
    if (std::chrono::steady_clock::now() > deadline) {  // another client's request is being served
      tel::fail(d, "busy: another telemetry request held the control lcore for 1 s; try again");
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  while (!r.done.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > deadline) {
      Telemetry::Request* mine = &r;
      if (g_pending.compare_exchange_strong(mine, nullptr)) {  // never taken: safe to leave
        tel::fail(d, "the control lcore did not take the request within 1 s (a long reload, or the edge is exiting)");
        return 0;
      }
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
int cb_tenant_class(const char*, const char* p, rte_tel_data* d) { return ask(kTenantClass, p, d); }
int cb_path_drain(const char*, const char* p, rte_tel_data* d) { return ask(kPathDrain, p, d); }
int cb_path_undrain(const char*, const char* p, rte_tel_data* d) { return ask(kPathUndrain, p, d); }
int cb_reload(const char*, const char* p, rte_tel_data* d) { return ask(kReload, p, d); }
int cb_workers(const char*, const char* p, rte_tel_data* d) { return ask(kWorkers, p, d); }
int cb_port_add(const char*, const char* p, rte_tel_data* d) { return ask(kPortAdd, p, d); }
int cb_port_remove(const char*, const char* p, rte_tel_data* d) { return ask(kPortRemove, p, d); }

}  // namespace

using namespace tel;

Telemetry::Telemetry(Edge& e) : e_(e) {
  static const bool registered = [] {
    rte_telemetry_register_cmd("/ufab/stats", cb_stats, "ufab-edge counters, drops per reason, conservation. No parameters");
    rte_telemetry_register_cmd("/ufab/tenants", cb_tenants, "Tenants: guarantee, tokens, weight class, pairs. No parameters");
    rte_telemetry_register_cmd("/ufab/paths", cb_paths, "Remote hosts: base RTT, candidate paths, drained. No parameters");
    rte_telemetry_register_cmd("/ufab/pairs", cb_pairs, "VM-pairs, 32 at a time, and next_first when more follow. Parameter: first pair index");
    rte_telemetry_register_cmd("/ufab/pair", cb_pair, "One VM-pair with its last 64 samples. Parameter: pair index");
    rte_telemetry_register_cmd("/ufab/tenant_set", cb_tenant_set, "Set a tenant's guarantee. Parameters: VNI,GBPS");
    rte_telemetry_register_cmd("/ufab/tenant_class", cb_tenant_class,
                               "Set a tenant's WFQ weight class, or auto (from its guarantee). Parameters: VNI,CLASS");
    rte_telemetry_register_cmd("/ufab/path_drain", cb_path_drain, "Stop using a path. Parameters: HOST,PATH");
    rte_telemetry_register_cmd("/ufab/path_undrain", cb_path_undrain, "Use a drained path again. Parameters: HOST,PATH");
    rte_telemetry_register_cmd("/ufab/reload", cb_reload, "Re-read the configuration file (as SIGHUP). No parameters");
    rte_telemetry_register_cmd("/ufab/workers", cb_workers, "Per worker lcore: pairs, rx, tx, queued, busy. No parameters");
    rte_telemetry_register_cmd("/ufab/port_add", cb_port_add,
                               "Attach a VM-side port (--spare-ports). Parameter: DEVARGS, e.g. net_vhost3,iface=/run/vm3.sock");
    rte_telemetry_register_cmd("/ufab/port_remove", cb_port_remove,
                               "Detach a VM-side port no VM names. Parameter: PORT");
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
  // Once SIGINT/SIGTERM began the stop sequence (stop.hpp: drain, finish
  // every active pair, exit), the configuration stays as it is.
  if (changes_edge(r->cmd) && e_.phase.load(std::memory_order_acquire) != Phase::running) {
    fail(r->d, "the edge is stopping: no runtime change is applied");
    r->done.store(true, std::memory_order_release);
    return;
  }
  switch (r->cmd) {
    case kStats: fill_stats(e_, r->d); break;
    case kTenants: fill_tenants(e_, r->d); break;
    case kPaths: fill_paths(e_, r->d); break;
    case kPairs: fill_pairs(e_, r->params, r->d, now); break;
    case kPair: fill_pair(e_, r->params, r->d, now); break;
    case kTenantSet: fill_tenant_set(e_, r->params, r->d); break;
    case kTenantClass: fill_tenant_class(e_, r->params, r->d); break;
    case kPathDrain: fill_drain(e_, r->params, r->d, true); break;
    case kPathUndrain: fill_drain(e_, r->params, r->d, false); break;
    case kReload: fill_reload(e_, r->d, now); break;
    case kWorkers: fill_workers(e_, r->d); break;
    case kPortAdd: fill_port_add(e_, r->params, r->d); break;
    case kPortRemove: fill_port_remove(e_, r->params, r->d); break;
    default: r->rc = -1;
  }
  r->done.store(true, std::memory_order_release);
}

}  // namespace ufab::pipeline
