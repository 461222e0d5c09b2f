// ufab-edge: μFAB-E on DPDK (SIGCOMM'22 §3, §4.1). VM frames are classified
// into VM-pairs, scheduled per tenant and per pair under each pair's window,
// encapsulated with the pair's source route and sent to the fabric; probes
// every L_w bytes bring back the per-hop telemetry the windows are computed
// from (Eqn 3). edge/README.md documents the configuration and counters.
//
// main: options and configuration (before the EAL, so a bad file fails
// fast), EAL, lcore layout, pool and ports, the edge (one shard per worker),
// signals, the loops (pipeline/worker.hpp), the report.
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/early_flags.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "edge/options.hpp"
#include "pipeline/dispatch.hpp"
#include "pipeline/edge.hpp"
#include "pipeline/layout.hpp"
#include "pipeline/ports.hpp"
#include "pipeline/reload.hpp"
#include "pipeline/rss_reta.hpp"
#include "pipeline/telemetry.hpp"
#include "pipeline/worker.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;    // SIGINT/SIGTERM received (a second one: exit at once)
volatile std::sig_atomic_t g_reload = 0;  // SIGHUP pending
extern "C" void on_stop(int) { g_stop = g_stop + 1; }
extern "C" void on_hup(int) { g_reload = 1; }

void install(int sig, void (*fn)(int)) {
  struct sigaction sa {};
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

std::vector<unsigned> eal_lcores() {
  std::vector<unsigned> l = {rte_get_main_lcore()};
  unsigned id = 0;
  RTE_LCORE_FOREACH_WORKER(id) l.push_back(id);
  return l;
}

int run(int argc, char** argv, const ufab::edge::EdgeOptions& opt, ufab::edge::EdgeConfig& cfg,
        const std::string& cfg_text) {
  using namespace ufab;
  dpdk::Eal eal(argc, argv);
  const uint16_t n_ports = rte_eth_dev_count_avail();
  if (n_ports == 0) throw edge::OptionError("no DPDK ports: add --vdev (e.g. net_memif0,... or net_pcap0,...)");
  edge::resolve_ports(cfg, pipeline::port_by_name);  // VMs whose port: names a device (throws ConfigError)
  pipeline::Layout layout;
  try {
    layout = pipeline::make_layout(cfg, n_ports, eal_lcores(), opt.workers, opt.lcore_map);
  } catch (const pipeline::LayoutError& e) {
    throw edge::OptionError(e.what());
  }

  dpdk::PoolConfig pc;
  pc.n_mbufs = cfg.mbufs;
  pc.data_room = dpdk::data_room_for_mtu(cfg.fabric_mtu);  // a fabric frame in one segment
  rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
  // The edge state checks the configured ports against what the EAL found
  // before any port is started.
  pipeline::Edge edge(cfg, cfg_text, pool, n_ports, std::move(layout), opt.spare_ports);
  edge.rx_queue_per_worker = opt.rx_queue_per_worker;
  edge.rss_hf.assign(edge.port_capacity(), 0);  // per port, what setup_port enabled
  const size_t workers = edge.layout.workers();
  for (uint16_t p = 0; p < n_ports; ++p) {
    pipeline::negotiate_rx_mark(p);  // before the port is configured (flow_offload.hpp)
    const pipeline::PortOpened o = pipeline::open_port(edge, p, dpdk::PortConfig{}.link_wait_ms);
    std::printf("%s\n", o.line.c_str());
    if (!o.info.note.empty()) std::fprintf(stderr, "ufab-edge: port %u: %s\n", p, o.info.note.c_str());
  }
  size_t pairs = 0;
  for (const auto& s : edge.shards) pairs += s->pairs.size();
  if (edge.mixed()) {
    std::printf("ufab-edge lcore %u: control and worker (one lcore)\n", edge.layout.control_lcore);
  } else {
    std::printf("ufab-edge lcores: control %u, workers", edge.layout.control_lcore);
    for (size_t w = 0; w < workers; ++w)
      std::printf(" %u(%zu pairs)", edge.layout.worker_lcores[w], edge.shards[w]->pairs.size());
    std::printf("\n");
  }
  const auto nap_text = [](uint64_t us) { return us == 0 ? std::string("busy-poll") : std::to_string(us) + " us"; };
  std::printf("ufab-edge naps: idle %s, queued %s\n", nap_text(opt.idle_nap_us).c_str(),
              nap_text(opt.queued_nap_us).c_str());
  // rte_flow MARK names a pair by (worker, index in its shard): the RX lcore
  // dispatches by the mark, the owner classifies by it.
  {
    std::vector<pipeline::EdgeState*> shards;
    for (auto& s : edge.shards) shards.push_back(s.get());
    pipeline::install_offload(shards);
  }
  // A VM port whose per-pair rules are in place steers each pair to its owner's queue.
  for (uint16_t p = 0; p < n_ports; ++p)
    if (edge.layout.rx_mode[p] == pipeline::RxMode::spread && !cfg.is_fabric_port(p) &&
        edge.shards[0]->offload.ports[p].mode != pipeline::OffloadMode::software)
      edge.layout.rx_mode[p] = pipeline::RxMode::steered;
  pipeline::steer_vm_ports_by_reta(cfg, edge.rss_hf, edge.layout);
  pipeline::print_rx_modes(stdout, edge.layout);
  std::printf("ufab-edge %zu tenants, %zu local VMs, %zu remote VMs, %zu VM-pairs\n", cfg.tenants.size(), cfg.vms.size(),
              cfg.remote_vms.size(), pairs);
  std::printf("ufab-edge %s\n", edge::weight_classes_line(cfg).c_str());
  std::fflush(stdout);

  install(SIGINT, on_stop);
  install(SIGTERM, on_stop);
  install(SIGHUP, on_hup);
  const dpdk::TscClock clock;
  {
    pipeline::Telemetry tel(edge);
    pipeline::LoopConfig lc;
    lc.stats_interval = static_cast<Nanos>(opt.stats_interval_s * 1e9);
    lc.exit_after_idle = opt.exit_after_idle_ms * kMs;
    lc.stop_timeout = opt.stop_timeout_ms * kMs;
    lc.idle_nap = opt.idle_nap_us * kUs;
    lc.queued_nap = opt.queued_nap_us * kUs;
    lc.stop = &g_stop;
    lc.reload = &g_reload;
    pipeline::run(edge, tel, lc, clock);
  }
  pipeline::print_report(edge, clock.now());
  pipeline::remove_offload(*edge.shards[0]);
  edge.links.unwatch();
  for (uint16_t p = 0; p < edge.port_capacity(); ++p)
    if (edge.port_present(p)) dpdk::close_port(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ufab::edge;
  switch (ufab::dpdk::early_flag(argc, argv)) {  // before the EAL
    case ufab::dpdk::EarlyFlag::help: std::fputs(usage(), stdout); return 0;
    case ufab::dpdk::EarlyFlag::version: std::puts(ufab::dpdk::version_line("ufab-edge").c_str()); return 0;
    case ufab::dpdk::EarlyFlag::none: break;
  }
  std::vector<char*> scratch(static_cast<size_t>(argc) + 1);
  EdgeOptions opt;
  EdgeConfig cfg;
  std::string cfg_text;
  try {
    opt = parse_options(app_args_of(argc, argv, scratch.data()));
    if (opt.help) {
      std::fputs(usage(), stdout);
      return 0;
    }
    cfg = load_config(opt.config);
    cfg_text = ufab::pipeline::read_text(opt.config);
  } catch (const OptionError& e) {
    std::fprintf(stderr, "ufab-edge: %s\n", e.what());
    return 2;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "ufab-edge: invalid configuration: %s\n", e.what());
    return 2;
  }
  try {
    return run(argc, argv, opt, cfg, cfg_text);
  } catch (const OptionError& e) {
    std::fprintf(stderr, "ufab-edge: %s\n", e.what());
    return 2;
  } catch (const ConfigError& e) {  // a VM's port named by a device the EAL does not have
    std::fprintf(stderr, "ufab-edge: invalid configuration: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ufab-edge: %s\n", e.what());
    return 1;
  }
}
