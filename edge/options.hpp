// ufab-edge's application options (after the EAL's "--"). Parsed before the
// EAL starts, so --help and a bad configuration need no DPDK resources.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace ufab::edge {

// --idle-nap-us and --queued-nap-us: at most 0.1 s.
inline constexpr uint64_t kMaxNapUs = 100'000;
// --spare-ports: at most DPDK's RTE_MAX_ETHPORTS of Debian's build (32).
inline constexpr uint64_t kMaxSparePorts = 31;

struct EdgeOptions {
  std::string config;                 // --config FILE (required)
  double stats_interval_s = 1.0;      // 0: only the final report
  uint64_t exit_after_idle_ms = 0;    // 0: run until SIGINT/SIGTERM
  unsigned workers = 0;               // 0: one per EAL lcore besides the control lcore
  std::string lcore_map;              // "C:W1,W2,..": control and worker lcores ("" = EAL order)
  uint64_t stop_timeout_ms = 1000;    // graceful stop: bound of the drain and of the finish-ack wait
  bool rx_queue_per_worker = true;    // --rx-queues auto: a worker's own RX queue where the port has enough; one: dispatch only
  uint64_t idle_nap_us = 50;          // --idle-nap-us: an idle lcore's sleep, nothing queued (0: busy-poll)
  uint64_t queued_nap_us = 5;         // --queued-nap-us: the same with frames queued behind windows (0: busy-poll)
  uint16_t spare_ports = 4;           // --spare-ports: room for VM-side ports /ufab/port_add attaches at runtime
  bool help = false;
};

struct OptionError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// args[0] is the program name. Throws OptionError.
EdgeOptions parse_options(std::span<char*> args);

// The application arguments of a full command line: argv[0] followed by what
// comes after the first "--" (or argv[0] alone when there is none).
std::span<char*> app_args_of(int argc, char** argv, char** scratch);

const char* usage();

}  // namespace ufab::edge
