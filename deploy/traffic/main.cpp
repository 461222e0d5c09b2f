// ufab-traffic: the VMs of an on-host fabric. Sends per-tenant flows
// (constant, on-off, incast) at paced rates with a sequence number and a
// timestamp in every payload, and counts what arrives per tenant: bytes,
// loss, reordering, one-way latency percentiles, a time series.
#include <rte_ethdev.h>

#include <csignal>
#include <cstdio>
#include <exception>

#include "deploy/traffic/engine.hpp"
#include "deploy/traffic/options.hpp"
#include "deploy/traffic/report.hpp"
#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/early_flags.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

int run(int argc, char** argv) {
  using namespace ufab;
  dpdk::Eal eal(argc, argv);
  const traffic::Options opt = traffic::parse_options(eal.app_args());
  const uint16_t n_ports = rte_eth_dev_count_avail();
  if (n_ports == 0) throw traffic::OptionError("no DPDK ports: add --vdev (e.g. net_memif0,...)");
  for (const traffic::FlowSpec& f : opt.flows)
    if (f.port >= n_ports)
      throw traffic::OptionError("--flow port=" + std::to_string(f.port) + ": only " + std::to_string(n_ports) +
                                 " ports");
  dpdk::PoolConfig pc;
  pc.name = "ufab_traffic";
  pc.n_mbufs = opt.mbufs;
  rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
  for (uint16_t p = 0; p < n_ports; ++p) {
    dpdk::PortConfig port_cfg;
    port_cfg.link_wait_ms = opt.link_wait_ms;
    const dpdk::PortInfo info = dpdk::setup_port(p, pool, port_cfg);
    if (!opt.quiet)
      std::printf("ufab-traffic port %u %s (%s) link %s\n", p, info.name.c_str(), info.driver.c_str(),
                  info.link_up ? "up" : "down");
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const uint64_t t0 = opt.t0_ns != 0 ? opt.t0_ns : traffic::mono_ns();
  std::printf("ufab-traffic running %zu flows, t0=%llu\n", opt.flows.size(), static_cast<unsigned long long>(t0));
  std::fflush(stdout);
  {
    traffic::Engine e(opt, pool, n_ports);
    e.run(t0, &g_stop);
    traffic::print_report(e, opt.gen);
    if (!opt.json.empty()) traffic::write_json(e, opt.gen, opt.json);
    if (!opt.csv.empty()) traffic::write_csv(e, opt.csv);
  }
  for (uint16_t p = 0; p < n_ports; ++p) dpdk::close_port(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  switch (ufab::dpdk::early_flag(argc, argv)) {  // before the EAL
    case ufab::dpdk::EarlyFlag::help: std::fputs(ufab::traffic::usage(), stdout); return 0;
    case ufab::dpdk::EarlyFlag::version: std::puts(ufab::dpdk::version_line("ufab-traffic").c_str()); return 0;
    case ufab::dpdk::EarlyFlag::none: break;
  }
  try {
    return run(argc, argv);
  } catch (const ufab::traffic::OptionError& e) {
    std::fprintf(stderr, "ufab-traffic: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ufab-traffic: %s\n", e.what());
    return 1;
  }
}
