#include "p4/softswitch/options.hpp"

#include <getopt.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "probe/units.hpp"

namespace ufab::core {

namespace {

[[noreturn]] void bad(const char* opt, std::string_view value, const char* what) {
  throw OptionError(std::string(opt) + ": '" + std::string(value) + "' " + what);
}

uint64_t parse_u64(const char* opt, std::string_view s, uint64_t lo, uint64_t hi) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) bad(opt, s, "is not a non-negative integer");
  if (v < lo || v > hi) bad(opt, s, ("is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]").c_str());
  return v;
}

// "10G", "2.5G", "100M", "1000000000" (bit/s, SI suffixes K M G T).
uint64_t parse_rate(const char* opt, std::string_view s) {
  const std::string str(s);
  char* end = nullptr;
  const double base = std::strtod(str.c_str(), &end);
  double mult = 1;
  const std::string_view rest(end);
  if (rest == "K" || rest == "k") mult = 1e3;
  else if (rest == "M" || rest == "m") mult = 1e6;
  else if (rest == "G" || rest == "g") mult = 1e9;
  else if (rest == "T" || rest == "t") mult = 1e12;
  else if (!rest.empty()) bad(opt, s, "is not a rate (bit/s, e.g. 10G, 100M, 2.5G, 1000000000)");
  if (end == str.c_str() || !(base > 0) || !std::isfinite(base)) bad(opt, s, "is not a positive rate");
  return static_cast<uint64_t>(std::llround(base * mult));
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t b = 0;;) {
    const size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

uint32_t parse_ipv4(const char* opt, std::string_view s) {
  const auto parts = split(s, '.');
  if (parts.size() != 4) bad(opt, s, "is not an IPv4 address");
  uint32_t ip = 0;
  for (const auto p : parts) ip = (ip << 8) | static_cast<uint32_t>(parse_u64(opt, p, 0, 255));
  return ip;
}

// A.B.C.D=P[+P...]
HostRoute parse_route(std::string_view s) {
  const size_t eq = s.find('=');
  if (eq == std::string_view::npos) bad("--route", s, "must be A.B.C.D=PORT[+PORT...]");
  HostRoute r{parse_ipv4("--route", s.substr(0, eq)), {}};
  for (const auto p : split(s.substr(eq + 1), '+'))
    r.ports.push_back(static_cast<uint16_t>(parse_u64("--route", p, 0, 255)));
  return r;
}

// MS:PORT:down|up
PortEvent parse_event(std::string_view s) {
  const auto parts = split(s, ':');
  if (parts.size() != 3 || (parts[2] != "down" && parts[2] != "up")) bad("--event", s, "must be MS:PORT:down|up");
  return PortEvent{parse_u64("--event", parts[0], 0, 86'400'000) * kMs,
                   static_cast<uint16_t>(parse_u64("--event", parts[1], 0, 255)), parts[2] == "up"};
}

template <typename F>
auto parse_list(std::string_view s, F&& one) {
  std::vector<decltype(one(s))> out;
  for (const auto item : split(s, ',')) out.push_back(one(item));
  return out;
}

enum Opt : int {
  kPortCaps = 256, kDelayUs, kQueueBytes, kAgingS, kTxShift, kStatsInterval, kBurst, kMbufs, kMtu,
  kFakeClock, kExitIdle, kRoute, kDownPorts, kEvent, kT0, kWatchLinks, kQueueLog, kCapture, kSampleMs, kBurstUs, kLinkWait,
  kIdleNap, kMinNap, kHelp,
};

}  // namespace

CoreOptions parse_options(std::span<char*> args) {
  static const option longopts[] = {
      {"port-caps", required_argument, nullptr, kPortCaps},
      {"delay-us", required_argument, nullptr, kDelayUs},
      {"queue-bytes", required_argument, nullptr, kQueueBytes},
      {"aging-s", required_argument, nullptr, kAgingS},
      {"tx-shift", required_argument, nullptr, kTxShift},
      {"stats-interval", required_argument, nullptr, kStatsInterval},
      {"burst", required_argument, nullptr, kBurst},
      {"mbufs", required_argument, nullptr, kMbufs},
      {"mtu", required_argument, nullptr, kMtu},
      {"fake-clock", required_argument, nullptr, kFakeClock},
      {"exit-after-idle-ms", required_argument, nullptr, kExitIdle},
      {"route", required_argument, nullptr, kRoute},
      {"down-ports", required_argument, nullptr, kDownPorts},
      {"event", required_argument, nullptr, kEvent},
      {"t0-ns", required_argument, nullptr, kT0},
      {"watch-links", no_argument, nullptr, kWatchLinks},
      {"queue-log", required_argument, nullptr, kQueueLog},
      {"capture", required_argument, nullptr, kCapture},
      {"sample-ms", required_argument, nullptr, kSampleMs},
      {"burst-us", required_argument, nullptr, kBurstUs},
      {"link-wait-ms", required_argument, nullptr, kLinkWait},
      {"idle-nap-us", required_argument, nullptr, kIdleNap},
      {"min-nap-us", required_argument, nullptr, kMinNap},
      {"help", no_argument, nullptr, kHelp},
      {nullptr, 0, nullptr, 0},
  };
  CoreOptions o;
  optind = 1;  // the EAL ran getopt on the same process before us
  opterr = 0;
  const int argc = static_cast<int>(args.size());
  for (;;) {
    const int c = getopt_long(argc, args.data(), ":h", longopts, nullptr);
    if (c == -1) break;
    const std::string_view v = optarg != nullptr ? optarg : "";
    switch (c) {
      case kPortCaps: o.port_caps_bps = parse_list(v, [](std::string_view s) { return parse_rate("--port-caps", s); }); break;
      case kDelayUs:
        o.delay_ns = parse_list(v, [](std::string_view s) { return parse_u64("--delay-us", s, 0, 10'000'000) * kUs; });
        break;
      case kQueueBytes:
        o.queue_bytes = parse_list(v, [](std::string_view s) { return parse_u64("--queue-bytes", s, 64, 1ull << 34); });
        break;
      case kAgingS: o.aging_s = static_cast<uint32_t>(parse_u64("--aging-s", v, 1, 86400)); break;
      case kTxShift: o.tx_shift = static_cast<uint32_t>(parse_u64("--tx-shift", v, 0, 20)); break;
      case kStatsInterval: {
        char* end = nullptr;
        const std::string s(v);
        o.stats_interval_s = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !(o.stats_interval_s >= 0) || o.stats_interval_s > 86400)
          bad("--stats-interval", v, "is not a number of seconds in [0, 86400]");
        break;
      }
      case kBurst: o.burst = static_cast<uint32_t>(parse_u64("--burst", v, 1, 64)); break;
      case kMbufs: o.mbufs = static_cast<uint32_t>(parse_u64("--mbufs", v, 255, 1u << 20)); break;
      case kMtu: o.mtu = static_cast<uint16_t>(parse_u64("--mtu", v, 1280, 9200)); break;
      case kFakeClock: o.fake_clock_ns = parse_u64("--fake-clock", v, 1, kSec); break;
      case kExitIdle: o.exit_after_idle_ms = parse_u64("--exit-after-idle-ms", v, 1, 86'400'000); break;
      case kRoute: o.routes.push_back(parse_route(v)); break;
      case kDownPorts:
        o.down_ports = parse_list(v, [](std::string_view s) { return static_cast<uint16_t>(parse_u64("--down-ports", s, 0, 255)); });
        break;
      case kEvent: o.events.push_back(parse_event(v)); break;
      case kT0: o.t0_ns = parse_u64("--t0-ns", v, 1, UINT64_MAX); break;
      case kWatchLinks: o.watch_links = true; break;
      case kQueueLog: o.queue_log = std::string(v); break;
      case kCapture: {
        const size_t eq = v.find('=');
        if (eq == std::string_view::npos || eq + 1 == v.size()) bad("--capture", v, "is not PORT=FILE");
        o.captures.emplace_back(static_cast<uint16_t>(parse_u64("--capture", v.substr(0, eq), 0, 255)),
                                std::string(v.substr(eq + 1)));
        break;
      }
      case kLinkWait: o.link_wait_ms = static_cast<uint32_t>(parse_u64("--link-wait-ms", v, 0, 60'000)); break;
      case kIdleNap: o.idle_nap_us = static_cast<uint32_t>(parse_u64("--idle-nap-us", v, 0, CoreOptions::kMaxNapUs)); break;
      case kMinNap: o.min_nap_us = static_cast<uint32_t>(parse_u64("--min-nap-us", v, 0, CoreOptions::kMaxNapUs)); break;
      case kBurstUs: o.burst_ns = parse_u64("--burst-us", v, 1, 1'000'000) * kUs; break;
      case kSampleMs: o.sample_ns = parse_u64("--sample-ms", v, 1, 60'000) * kMs; break;
      case kHelp: case 'h': o.help = true; break;
      case ':': throw OptionError(std::string(args[static_cast<size_t>(optind) - 1]) + ": needs a value");
      default: throw OptionError(std::string("unknown option '") + args[static_cast<size_t>(optind) - 1] + "' (see --help)");
    }
  }
  if (optind < argc) throw OptionError(std::string("unexpected argument '") + args[static_cast<size_t>(optind)] + "'");
  return o;
}

void validate_for_ports(const CoreOptions& o, uint16_t n_ports) {
  auto check_len = [n_ports](const char* opt, size_t n) {
    if (n != 1 && n != n_ports)
      throw OptionError(std::string(opt) + ": " + std::to_string(n) + " values for " + std::to_string(n_ports) +
                        " ports (give one value for all ports, or one per port)");
  };
  check_len("--port-caps", o.port_caps_bps.size());
  check_len("--delay-us", o.delay_ns.size());
  check_len("--queue-bytes", o.queue_bytes.size());
  for (const uint64_t bps : o.port_caps_bps)
    if (wire::capacity_code_of(bps) == 0)
      throw OptionError("--port-caps: " + std::to_string(bps) +
                        " bit/s has no capacity code (probes announce C'_l as a code): use one of "
                        "10M 100M 1G 2.5G 10G 25G 40G 50G 100G 200G 400G 800G");
  for (const HostRoute& r : o.routes)
    for (const uint16_t p : r.ports)
      if (p >= n_ports)
        throw OptionError("--route: port " + std::to_string(p) + " does not exist (" + std::to_string(n_ports) +
                          " ports)");
  for (const uint16_t p : o.down_ports)
    if (p >= n_ports)
      throw OptionError("--down-ports: port " + std::to_string(p) + " does not exist (" + std::to_string(n_ports) +
                        " ports)");
  for (const PortEvent& e : o.events)
    if (e.port >= n_ports)
      throw OptionError("--event: port " + std::to_string(e.port) + " does not exist (" + std::to_string(n_ports) +
                        " ports)");
  for (size_t i = 0; i < o.captures.size(); ++i) {
    const uint16_t p = o.captures[i].first;
    if (p >= n_ports)
      throw OptionError("--capture: port " + std::to_string(p) + " does not exist (" + std::to_string(n_ports) +
                        " ports)");
    for (size_t j = 0; j < i; ++j)
      if (o.captures[j].first == p) throw OptionError("--capture: port " + std::to_string(p) + " is captured twice");
  }
  if (n_ports > 256) throw OptionError("ufab-core handles at most 256 ports (a hop record's port is 8 bits)");
}

const char* usage() {
  return R"(usage: ufab-core [EAL options] -- [options]

A software uFAB-C switch (SIGCOMM'22 §3.6, §4.2, App. G) on DPDK ports. Port i
is DPDK port i; a uFAB frame leaves on the port its source route names. Every
frame goes through the uFAB-C reference model (p4/model): ingress at receive,
egress (probe stamping, finish ACK) when it leaves the port's queue.

Options (per-port lists: one value for every port, or one value per port):
  --port-caps R[,R...]     shaped capacity C'_l in bit/s, suffix K M G T
                           (10M 100M 1G 2.5G 10G 25G 40G 50G 100G 200G 400G 800G:
                           the rates a probe can announce). Default 10G.
  --delay-us N[,N...]      one-way delay added after the queue, µs. Default 0.
  --queue-bytes N[,N...]   egress queue limit in bytes; a frame that does not
                           fit is dropped (queue_full). Default 1048576.
  --aging-s N              aging period of idle VM-pairs, s (§4.2). Default 10.
  --tx-shift N             tx_l window = 8 µs << N (0..20). Default 2 (32 µs).
  --stats-interval S       print counters every S seconds; 0 prints only the
                           final line. Default 1.
  --burst N                rx/tx burst size, 1..64. Default 32.
  --mbufs N                mbuf pool size. Default 8191.
  --mtu N                  the ports' MTU, 1280..9200, set where the driver
                           takes it (an error on a NIC that does not; a
                           virtual device keeps its own), and the mbufs sized
                           so a frame of it is one segment; a frame above
                           it is dropped on arrival (drop.too_big). Default
                           1600, as ufab-edge's edge.fabric_mtu.
  --route A.B.C.D=P[+P...] /32 route for non-uFAB IPv4 traffic (ECMP over the
                           listed ports); repeatable. Without one it is dropped.
  --down-ports P[,P...]    mark ports down in the switch (the link stays open):
                           probes routed to one become failure notices back to
                           their sender (App. G), other traffic is dropped
                           (port_down).
  --event MS:PORT:down|up  at scenario time MS, mark PORT down (or up again)
                           as --down-ports does; repeatable.
  --t0-ns N                scenario time 0 as CLOCK_MONOTONIC ns, for --event
                           and --queue-log (default: start of the loop).
  --watch-links            follow each port's link status (every 1 ms): a port
                           whose link goes down (e.g. the memif peer, a
                           neighbour switch, died) is marked down in the
                           switch, and up again when the link returns.
  --queue-log FILE         at exit, write per port and sample: the peak queue
                           bytes and the bytes sent (CSV t_s,port,queue_peak_bytes,
                           tx_bytes,tx_mbps).
  --capture P=FILE         write every frame received on port P to FILE (pcap,
                           as it arrived, dated when its burst was taken), in
                           the order its peer sent them; repeatable, one file
                           per port. For tests and debugging: a copy per frame.
  --burst-us N             shaper depth: the burst a port may send back to back
                           after idling, in µs at its rate (at least one 1518 B
                           frame). Default 20.
  --link-wait-ms N         at start, wait up to N ms per port for its link
                           (a memif server's peer may come later). Default 2000.
  --sample-ms N            sample interval of --queue-log. Default 10.
  --idle-nap-us N          after 256 empty polls, sleep N µs per poll (0..100000;
                           0: never sleep, busy-poll a dedicated core). With
                           frames queued, sleep only until the first can leave,
                           at most N µs. Default 50 (several switches and edges
                           sharing cores).
  --min-nap-us N           with frames queued, sleep only when the first can
                           leave in more than N µs, else spin (0..100000; a
                           late wake-up within the shaper's --burst-us costs no
                           capacity). Default 20.
  --fake-clock NS          deterministic time: the clock reads k*NS in the k-th
                           poll of the ports instead of the TSC (tests).
  --exit-after-idle-ms N   exit when nothing arrived for N ms and every queue is
                           empty (tests). Default: run until SIGINT/SIGTERM.
  --help                   this text.
  --version                ufab's version, the git commit it was built from
                           and the DPDK version (before the EAL starts).

Example, two memif ports at 10 Gb/s with 20 µs delay:
  ufab-core --no-huge -m 256 --file-prefix core \
    --vdev net_memif0,role=server,socket=/run/ufab/h0.sock \
    --vdev net_memif1,role=server,socket=/run/ufab/h1.sock \
    -- --port-caps 10G --delay-us 20
)";
}

}  // namespace ufab::core
