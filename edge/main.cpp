// ufab-edge: μFAB-E on DPDK (SIGCOMM'22 §3, §4.1). VM frames are classified
// into VM-pairs, scheduled per tenant and per pair under each pair's window,
// encapsulated with the pair's source route and sent to the fabric; probes
// every L_w bytes bring back the per-hop telemetry the windows are computed
// from (Eqn 3). edge/README.md documents the configuration and counters.
//
// main: options and configuration (before the EAL, so a bad file fails
// fast), EAL, pool and ports, the edge state, the worker loop, the report.
#include <rte_ethdev.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "edge/config.hpp"
#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "edge/options.hpp"
#include "pipeline/edge_state.hpp"
#include "pipeline/telemetry.hpp"
#include "pipeline/worker.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

int run(int argc, char** argv, const ufab::edge::EdgeOptions& opt, const ufab::edge::EdgeConfig& cfg) {
  using namespace ufab;
  dpdk::Eal eal(argc, argv);
  const uint16_t n_ports = rte_eth_dev_count_avail();
  if (n_ports == 0) throw edge::OptionError("no DPDK ports: add --vdev (e.g. net_memif0,... or net_pcap0,...)");

  dpdk::PoolConfig pc;
  pc.n_mbufs = cfg.mbufs;
  rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
  // The edge state checks the configured ports against what the EAL found
  // before any port is started.
  pipeline::EdgeState state(cfg, pool, n_ports);
  for (uint16_t p = 0; p < n_ports; ++p) {
    pipeline::negotiate_rx_mark(p);
    const dpdk::PortInfo info = dpdk::setup_port(p, pool, dpdk::PortConfig{});
    std::printf("ufab-edge port %u %s (%s) link %s, %s\n", p, info.name.c_str(), info.driver.c_str(),
                info.link_up ? "up" : "down", p == cfg.fabric_port ? "fabric" : "VM side");
  }
  pipeline::install_offload(state);
  std::printf("ufab-edge %zu tenants, %zu local VMs, %zu remote VMs, %zu VM-pairs\n", cfg.tenants.size(), cfg.vms.size(),
              cfg.remote_vms.size(), state.pairs.size());
  std::fflush(stdout);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const dpdk::TscClock clock;
  {
    pipeline::Telemetry tel(state);
    pipeline::LoopConfig lc;
    lc.stats_interval = static_cast<Nanos>(opt.stats_interval_s * 1e9);
    lc.exit_after_idle = opt.exit_after_idle_ms * kMs;
    pipeline::run(state, tel, lc, clock, &g_stop);
  }
  pipeline::print_report(state, clock.now());
  pipeline::remove_offload(state);
  for (uint16_t p = 0; p < n_ports; ++p) dpdk::close_port(p);
  return 0;
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ufab::edge;
  if (wants_help(argc, argv)) {
    std::fputs(usage(), stdout);
    return 0;
  }
  std::vector<char*> scratch(static_cast<size_t>(argc) + 1);
  EdgeOptions opt;
  EdgeConfig cfg;
  try {
    opt = parse_options(app_args_of(argc, argv, scratch.data()));
    if (opt.help) {
      std::fputs(usage(), stdout);
      return 0;
    }
    cfg = load_config(opt.config);
  } catch (const OptionError& e) {
    std::fprintf(stderr, "ufab-edge: %s\n", e.what());
    return 2;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "ufab-edge: invalid configuration: %s\n", e.what());
    return 2;
  }
  try {
    return run(argc, argv, opt, cfg);
  } catch (const OptionError& e) {
    std::fprintf(stderr, "ufab-edge: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ufab-edge: %s\n", e.what());
    return 1;
  }
}
