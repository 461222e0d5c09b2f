// ufab-core: a software μFAB-C switch for on-host fabrics (SIGCOMM'22 §3.6,
// §4.2, App. G). It runs the reference model (p4/model) on DPDK ports of any
// PMD, forwards by source route, and gives every egress port a queue, a
// shaper at the configured capacity and a delay line. README.md in this
// directory documents the options and counters.
//
// main: init (EAL, options, pool, ports), config (model, queues), the loop.
#include <rte_ethdev.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/early_flags.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "p4/model/switch_model.hpp"
#include "p4/softswitch/dataplane.hpp"
#include "p4/softswitch/options.hpp"
#include "probe/units.hpp"

namespace {

void write_queue_log(const std::string& path, const std::vector<ufab::core::QueueSample>& samples, ufab::Nanos interval) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "ufab-core: --queue-log: cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "t_s,port,queue_peak_bytes,tx_bytes,tx_mbps\n");
  for (const ufab::core::QueueSample& q : samples)
    std::fprintf(f, "%.6f,%u,%llu,%llu,%.3f\n", static_cast<double>(q.t) / 1e9, q.port,
                 static_cast<unsigned long long>(q.queue_peak_bytes), static_cast<unsigned long long>(q.tx_bytes),
                 static_cast<double>(q.tx_bytes) * 8e3 / static_cast<double>(interval));
  std::fclose(f);
}

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

ufab::swmodel::SwitchConfig model_config(const ufab::core::CoreOptions& o, uint16_t n_ports) {
  ufab::swmodel::SwitchConfig c;
  c.n_ports = n_ports;
  for (uint16_t p = 0; p < n_ports; ++p)
    c.cap_codes.push_back(ufab::wire::capacity_code_of(ufab::core::per_port(o.port_caps_bps, p)));
  c.aging_period = o.aging_s * ufab::kSec;
  c.tx_shift = o.tx_shift;
  return c;
}

int run(int argc, char** argv) {
  using namespace ufab;
  dpdk::Eal eal(argc, argv);
  const core::CoreOptions opt = core::parse_options(eal.app_args());
  const uint16_t n_ports = rte_eth_dev_count_avail();
  if (n_ports == 0) throw core::OptionError("no DPDK ports: add --vdev (e.g. net_memif0,... or net_pcap0,...)");
  core::validate_for_ports(opt, n_ports);

  dpdk::PoolConfig pc;
  pc.n_mbufs = opt.mbufs;
  pc.data_room = dpdk::data_room_for_mtu(opt.mtu);
  rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
  for (uint16_t p = 0; p < n_ports; ++p) {
    dpdk::PortConfig port_cfg;
    port_cfg.link_wait_ms = opt.link_wait_ms;
    port_cfg.mtu = opt.mtu;
    port_cfg.mtu_from = "--mtu";
    const dpdk::PortInfo info = dpdk::setup_port(p, pool, port_cfg);
    const std::string mtu_note = info.mtu_note.empty() ? "" : " (" + info.mtu_note + ")";
    std::printf("ufab-core port %u %s (%s) link %s, MTU %u%s, capacity %.3g Gb/s, delay %llu us, queue %llu B\n", p,
                info.name.c_str(), info.driver.c_str(), info.link_up ? "up" : "down", info.mtu,
                mtu_note.c_str(),
                static_cast<double>(core::per_port(opt.port_caps_bps, p)) / 1e9,
                static_cast<unsigned long long>(core::per_port(opt.delay_ns, p) / kUs),
                static_cast<unsigned long long>(core::per_port(opt.queue_bytes, p)));
  }

  swmodel::SwitchModel model(model_config(opt, n_ports));
  for (const core::HostRoute& r : opt.routes) model.l3().add_host_route(r.dst_ip, r.ports);
  for (const uint16_t p : opt.down_ports) model.set_port_up(p, false);
  std::vector<core::EgressPort> ports;
  ports.reserve(n_ports);
  for (uint16_t p = 0; p < n_ports; ++p)
    ports.emplace_back(core::per_port(opt.port_caps_bps, p), core::per_port(opt.delay_ns, p),
                       core::per_port(opt.queue_bytes, p), opt.mbufs, opt.burst_ns);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  core::Dataplane dp(model, ports, opt.burst, opt.mtu);
  core::LoopConfig lc;
  lc.burst = opt.burst;
  lc.fake_clock_ns = opt.fake_clock_ns;
  lc.stats_interval = static_cast<Nanos>(opt.stats_interval_s * 1e9);
  lc.exit_after_idle = opt.exit_after_idle_ms * kMs;
  lc.events = opt.events;
  std::sort(lc.events.begin(), lc.events.end(), [](const core::PortEvent& a, const core::PortEvent& b) { return a.at < b.at; });
  lc.watch_links = opt.watch_links;
  lc.sample_ns = opt.queue_log.empty() ? 0 : opt.sample_ns;
  lc.idle_nap = Nanos{opt.idle_nap_us} * kUs;
  lc.min_nap = Nanos{opt.min_nap_us} * kUs;
  if (opt.idle_nap_us == 0)
    std::printf("ufab-core naps: busy-poll\n");
  else
    std::printf("ufab-core naps: idle %u us, min %u us\n",
                opt.idle_nap_us, opt.min_nap_us);
  const dpdk::TscClock clock;
  std::vector<std::unique_ptr<core::PortCapture>> captures;
  if (!opt.captures.empty()) {  // pcap timestamps: wall time = clock + (realtime0 - clock0)
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    const int64_t wall_offset =
        static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec - static_cast<int64_t>(clock.now());
    for (const auto& [port, path] : opt.captures) {
      captures.push_back(std::make_unique<core::PortCapture>(path, wall_offset));
      dp.set_capture(port, captures.back().get());
    }
  }
  if (opt.t0_ns != 0) {  // scenario time = monotonic - t0 = clock + (mono0 - clock0 - t0)
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const auto mono = static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    lc.scenario_offset = mono - static_cast<int64_t>(clock.now()) - static_cast<int64_t>(opt.t0_ns);
  }
  dp.run(lc, clock, &g_stop);
  if (!opt.queue_log.empty()) write_queue_log(opt.queue_log, dp.samples(), opt.sample_ns);
  dp.flush();
  int rc = 0;
  for (size_t i = 0; i < captures.size(); ++i) {
    std::string error;
    const bool ok = captures[i]->close(error);
    std::printf("ufab-core capture port %u: %llu frames to %s%s\n", opt.captures[i].first,
                static_cast<unsigned long long>(captures[i]->frames()), opt.captures[i].second.c_str(),
                ok ? "" : " (write failed)");
    if (!ok) {
      std::fprintf(stderr, "ufab-core: %s\n", error.c_str());
      rc = 1;
    }
  }
  for (uint16_t p = 0; p < n_ports; ++p) dpdk::close_port(p);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  switch (ufab::dpdk::early_flag(argc, argv)) {  // before the EAL
    case ufab::dpdk::EarlyFlag::help: std::fputs(ufab::core::usage(), stdout); return 0;
    case ufab::dpdk::EarlyFlag::version: std::puts(ufab::dpdk::version_line("ufab-core").c_str()); return 0;
    case ufab::dpdk::EarlyFlag::none: break;
  }
  try {
    return run(argc, argv);
  } catch (const ufab::core::OptionError& e) {
    std::fprintf(stderr, "ufab-core: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ufab-core: %s\n", e.what());
    return 1;
  }
}
