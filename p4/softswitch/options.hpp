// ufab-core's application options (after the EAL's "--"). Plain C++: parsed
// and validated here, applied in main.cpp. Every error names its option.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "control/clock.hpp"

namespace ufab::core {

struct HostRoute {
  uint32_t dst_ip = 0;          // host order
  std::vector<uint16_t> ports;  // ECMP set (p4/model/l3_table.hpp)
};

// A port going down or up at a scenario time (a link or switch failure the
// neighbour detects, App. G).
struct PortEvent {
  Nanos at = 0;  // ns since t0
  uint16_t port = 0;
  bool up = false;
};

struct CoreOptions {
  // Per-port values: one entry applies to every port, otherwise one per port.
  std::vector<uint64_t> port_caps_bps{10'000'000'000ull};  // shaped capacity C'_l, bit/s
  std::vector<Nanos> delay_ns{0};                           // one-way delay after the queue
  std::vector<uint64_t> queue_bytes{1ull << 20};            // egress queue limit
  uint32_t aging_s = 10;                                    // §4.2: 10 s aging period
  uint32_t tx_shift = 2;                                    // tx_l window = 8 µs << shift
  double stats_interval_s = 1.0;                            // 0: only the final line
  uint32_t burst = 32;                                      // rx/tx burst size, 1..64
  uint32_t mbufs = 8191;                                    // mbuf pool size
  uint16_t mtu = 1600;                                      // the ports' MTU (--mtu), and the mbufs' room
  Nanos fake_clock_ns = 0;                                  // >0: clock = poll count x this
  uint64_t exit_after_idle_ms = 0;                          // 0: run until SIGINT/SIGTERM
  std::vector<HostRoute> routes;                            // L3 routes for non-uFAB traffic
  std::vector<uint16_t> down_ports;                         // set down in the model (failure notices)
  std::vector<PortEvent> events;                            // --event: timed port down/up (scenario time)
  uint64_t t0_ns = 0;                                       // --t0-ns: scenario time 0 (CLOCK_MONOTONIC); 0: start
  bool watch_links = false;                                 // --watch-links: follow the PMD's link status
  std::string queue_log;                                    // --queue-log FILE: per-port queue/tx samples (CSV)
  std::vector<std::pair<uint16_t, std::string>> captures;   // --capture P=FILE: frames received on P (pcap)
  Nanos sample_ns = 10 * kMs;                               // --sample-ms
  Nanos burst_ns = 20 * kUs;                                // --burst-us: shaper depth at the line rate
  uint32_t link_wait_ms = 2000;                             // --link-wait-ms: wait for link up per port at start
  // The idle loop (dataplane.cpp): after 256 empty polls, sleep idle_nap_us
  // (0: never sleep, busy-poll); with frames queued, sleep until the first
  // can leave (at most idle_nap_us) when that is more than min_nap_us away.
  uint32_t idle_nap_us = 50;                                // --idle-nap-us
  uint32_t min_nap_us = 20;                                 // --min-nap-us
  static constexpr uint32_t kMaxNapUs = 100'000;
  bool help = false;
};

struct OptionError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Parses args (args[0] is the program name). Throws OptionError.
CoreOptions parse_options(std::span<char*> args);

// Checks the per-port lists against the number of ports the EAL found and
// that each capacity has a wire code (units.hpp). Throws OptionError.
void validate_for_ports(const CoreOptions& o, uint16_t n_ports);

// The value of a per-port list for port p (a single entry applies to all).
template <typename T>
T per_port(const std::vector<T>& v, uint16_t p) {
  return v.size() == 1 ? v[0] : v.at(p);
}

const char* usage();

}  // namespace ufab::core
