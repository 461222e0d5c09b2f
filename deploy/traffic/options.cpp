#include "deploy/traffic/options.hpp"

#include <cmath>
#include <cstdlib>
#include <string_view>

namespace ufab::traffic {

const char* usage() {
  return R"(ufab-traffic: VM-side traffic source and sink for on-host fabrics (DPDK)

  ufab-traffic [EAL options] -- gen --flow SPEC [--flow SPEC ...] [options]
  ufab-traffic [EAL options] -- sink [options]

Every DPDK port is a VM's vNIC (memif, virtio-user, pcap, ...). In gen mode the
flows are sent and every port is also a sink; in sink mode only frames are
counted. Frames are Ethernet/IPv4/UDP; the payload starts with magic, tenant,
flow, sequence number and the CLOCK_MONOTONIC send time, so a sink on the same
host measures one-way latency. uFAB-encapsulated frames are looked into.

--flow key=value,...   one flow; keys:
    port=N (0)  tenant=VNI  flow=ID (auto)  src=A.B.C.D  dst=A.B.C.D (required)
    smac=/dmac=aa:bb:cc:dd:ee:ff  sport=N (10000+flow) dport=N (9)  size=BYTES frame (1000)
    rate=BPS (required, K/M/G suffixes; the rate while on)
    pattern=constant|onoff|incast  start_ms= stop_ms= (scenario time)
    on_ms= off_ms= (onoff)   period_ms= burst_bytes= (incast: burst_bytes at rate every period)
--duration-ms N        stop N ms after t0 (default: until SIGINT/SIGTERM)
--t0-ns N              scenario time 0 as CLOCK_MONOTONIC ns (default: when the ports are up)
--exit-after-idle-ms N exit once nothing was received for N ms after t0 (and no flow is left)
--interval-ms N        time-series bin (10)
--csv FILE             time series: t_s,tenant,tx_bytes,rx_bytes,rx_pkts,lat_mean_us,lat_max_us
--json FILE            summary (per tenant, per flow, per port)
--link-wait-ms N       wait up to N ms per port for its link at start (2000)
--burst N (32)  --mbufs N (8191)  --quiet  --help  --version (ufab, its git commit, DPDK)
)";
}

namespace {

uint64_t num(const std::string& opt, const char* v, double lo, double hi, double scale = 1) {
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(x) || x < lo || x > hi)
    throw OptionError(opt + ": '" + v + "' is not a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<uint64_t>(std::llround(x * scale));
}

}  // namespace

Options parse_options(std::span<char*> args) {
  Options o;
  if (args.size() < 2) throw OptionError("missing mode: gen or sink (see --help)");
  const std::string_view mode = args[1];
  if (mode == "gen") o.gen = true;
  else if (mode != "sink") throw OptionError("unknown mode '" + std::string(mode) + "' (gen or sink)");
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string a = args[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= args.size()) throw OptionError(a + " needs a value");
      return args[++i];
    };
    if (a == "--flow") {
      const char* v = value();
      try {
        o.flows.push_back(parse_flow(v));
      } catch (const std::invalid_argument& e) {
        throw OptionError(e.what());
      }
    } else if (a == "--duration-ms") o.duration_ns = num(a, value(), 1, 1e9, 1e6);
    else if (a == "--t0-ns") o.t0_ns = num(a, value(), 0, 1.8e19);
    else if (a == "--exit-after-idle-ms") o.exit_after_idle_ns = num(a, value(), 1, 1e9, 1e6);
    else if (a == "--interval-ms") o.interval_ns = num(a, value(), 0.01, 1e6, 1e6);
    else if (a == "--csv") o.csv = value();
    else if (a == "--json") o.json = value();
    else if (a == "--burst") o.burst = static_cast<uint32_t>(num(a, value(), 1, 64));
    else if (a == "--mbufs") o.mbufs = static_cast<uint32_t>(num(a, value(), 511, 1 << 22));
    else if (a == "--quiet") o.quiet = true;
    else if (a == "--link-wait-ms") o.link_wait_ms = static_cast<uint32_t>(num(a, value(), 0, 60000));
    else throw OptionError("unknown option '" + a + "' (see --help)");
  }
  if (o.gen && o.flows.empty()) throw OptionError("gen needs at least one --flow");
  if (!o.gen && !o.flows.empty()) throw OptionError("--flow is for gen mode");
  // Auto-number flows per tenant and give each its own UDP source port (the
  // edge hashes 5-tuples into a pair's flows).
  uint32_t next = 0;
  for (FlowSpec& f : o.flows) {
    if (f.flow == 0) f.flow = ++next;
    if (f.src_port == 10000) f.src_port = static_cast<uint16_t>(10000 + f.flow % 50000);
  }
  return o;
}

}  // namespace ufab::traffic
