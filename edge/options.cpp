#include "edge/options.hpp"

#include <getopt.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace ufab::edge {

namespace {

enum Opt : int { kConfig = 256, kStats, kExitIdle, kHelp, kWorkers, kLcoreMap, kStopTimeout, kRxQueues, kIdleNap, kQueuedNap, kSparePorts };

uint64_t positive(const std::string& opt, const std::string& v, uint64_t max) {
  uint64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x == 0 || x > max)
    throw OptionError(opt + ": '" + v + "' is not an integer in [1, " + std::to_string(max) + "]");
  return x;
}

// An integer in [0, max] (a nap of 0 us: busy-poll).
uint64_t at_most(const std::string& opt, const std::string& v, uint64_t max) {
  uint64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x > max)
    throw OptionError(opt + ": '" + v + "' is not an integer in [0, " + std::to_string(max) + "]");
  return x;
}

}  // namespace

std::span<char*> app_args_of(int argc, char** argv, char** scratch) {
  scratch[0] = argv[0];
  int n = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--") continue;
    for (int k = i + 1; k < argc; ++k) scratch[n++] = argv[k];
    break;
  }
  scratch[n] = nullptr;
  return {scratch, static_cast<size_t>(n)};
}

EdgeOptions parse_options(std::span<char*> args) {
  static const option longopts[] = {
      {"config", required_argument, nullptr, kConfig},
      {"stats-interval", required_argument, nullptr, kStats},
      {"exit-after-idle-ms", required_argument, nullptr, kExitIdle},
      {"workers", required_argument, nullptr, kWorkers},
      {"lcore-map", required_argument, nullptr, kLcoreMap},
      {"stop-timeout-ms", required_argument, nullptr, kStopTimeout},
      {"rx-queues", required_argument, nullptr, kRxQueues},
      {"idle-nap-us", required_argument, nullptr, kIdleNap},
      {"queued-nap-us", required_argument, nullptr, kQueuedNap},
      {"spare-ports", required_argument, nullptr, kSparePorts},
      {"help", no_argument, nullptr, kHelp},
      {nullptr, 0, nullptr, 0},
  };
  EdgeOptions o;
  optind = 1;
  opterr = 0;
  const int argc = static_cast<int>(args.size());
  for (;;) {
    const int c = getopt_long(argc, args.data(), ":h", longopts, nullptr);
    if (c == -1) break;
    const std::string v = optarg != nullptr ? optarg : "";
    switch (c) {
      case kConfig: o.config = v; break;
      case kStats: {
        char* end = nullptr;
        o.stats_interval_s = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(o.stats_interval_s >= 0) || o.stats_interval_s > 86400)
          throw OptionError("--stats-interval: '" + v + "' is not a number of seconds in [0, 86400]");
        break;
      }
      case kExitIdle: {
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), o.exit_after_idle_ms);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size() || o.exit_after_idle_ms == 0)
          throw OptionError("--exit-after-idle-ms: '" + v + "' is not a positive integer");
        break;
      }
      case kWorkers: o.workers = static_cast<unsigned>(positive("--workers", v, 127)); break;
      case kLcoreMap: o.lcore_map = v; break;
      case kStopTimeout: o.stop_timeout_ms = positive("--stop-timeout-ms", v, 600'000); break;
      case kRxQueues:
        if (v != "auto" && v != "one") throw OptionError("--rx-queues: '" + v + "' is not auto or one");
        o.rx_queue_per_worker = v == "auto";
        break;
      case kIdleNap: o.idle_nap_us = at_most("--idle-nap-us", v, kMaxNapUs); break;
      case kQueuedNap: o.queued_nap_us = at_most("--queued-nap-us", v, kMaxNapUs); break;
      case kSparePorts: o.spare_ports = static_cast<uint16_t>(at_most("--spare-ports", v, kMaxSparePorts)); break;
      case kHelp: case 'h': o.help = true; break;
      case ':': throw OptionError(std::string(args[static_cast<size_t>(optind) - 1]) + ": needs a value");
      default: throw OptionError(std::string("unknown option '") + args[static_cast<size_t>(optind) - 1] + "' (see --help)");
    }
  }
  if (optind < argc) throw OptionError(std::string("unexpected argument '") + args[static_cast<size_t>(optind)] + "'");
  if (!o.help && o.config.empty()) throw OptionError("--config FILE is required (see --help)");
  if (o.workers != 0 && !o.lcore_map.empty()) throw OptionError("--workers and --lcore-map: give one of them");
  return o;
}

const char* usage() {
  return R"(usage: ufab-edge [EAL options] -- --config FILE [options]

The uFAB-E edge (SIGCOMM'22 §3, §4.1) on DPDK ports of any PMD. Frames from
the VMs' ports are classified into VM-pairs, scheduled per tenant and per
VM-pair under each pair's window (two-stage admission, Eqn 3), encapsulated
with the pair's source route and sent on the fabric port; probes go out
every L_w bytes and their responses drive the windows. Frames from the
fabric are decapsulated and delivered to the VM's port, probes are answered
with the receiver's admitted token (Alg. 1 TokenAdmission).

Options:
  --config FILE            YAML configuration (edge/README.md documents every
                           key). Errors name the file, line and field; the
                           edge does not start with an invalid file.
  --stats-interval S       print counters every S seconds; 0 prints only the
                           final report. Default 1.
  --exit-after-idle-ms N   exit when no frame arrived on any port for N ms
                           (tests). Default: run until SIGINT/SIGTERM.
  --workers N              N worker lcores besides the control lcore (the
                           EAL's main lcore); needs N+1 lcores in -l. Default:
                           one worker per lcore besides the main one; with a
                           single lcore (-l 0) control and the one worker share
                           it. Pairs are sharded by local VM.
  --lcore-map C:W1,W2,...  the control lcore C (must be the EAL's main lcore)
                           and the worker lcores, instead of --workers.
  --stop-timeout-ms N      on SIGINT/SIGTERM: stop VM RX, drain the queues for
                           at most N ms, send finish for every active pair and
                           wait at most N ms for the finish-acks, report, exit
                           0. A second signal exits at once. Default 1000.
  --rx-queues auto|one     auto: with several workers, a port with an RX queue
                           per worker (and no memif) is polled by every worker
                           on its own queue; rte_flow QUEUE rules steer each
                           VM-pair to its owner's queue where the PMD takes
                           them, and frames on another worker's queue are
                           handed over through its ring. one: every port has
                           one RX queue polled by one worker, which dispatches
                           (the mode of each port is printed at start-up and
                           shown in /ufab/workers). Default auto.
  --idle-nap-us N          after 256 empty polls an lcore sleeps N us per empty
                           poll while nothing is queued, and
  --queued-nap-us N        N us while frames wait behind windows (a response
                           may open one). 0 busy-polls (dedicated cores, the
                           lowest latency); a nap adds up to N us to the
                           handling of a frame that arrives during it.
                           Longer naps suit cores shared with other processes
                           (the emulated fabric runs seven on two vCPUs, where
                           a 5 us nap costs more CPU in the kernel than the
                           poll it saves). At most 100000. Defaults 50 and 5.
  --spare-ports N          room for N VM-side ports attached while the edge
                           runs (/ufab/port_add,DEVARGS, e.g. a vhost-user
                           socket for a VM that boots; /ufab/port_remove,PORT
                           detaches one no VM names). Port ids go up to the
                           start-up ports + N, at most 32 in all. 0: none.
                           Default 4.
  --help                   this text.
  --version                ufab's version, the git commit it was built from
                           and the DPDK version (before the EAL starts).

Signals: SIGHUP re-reads --config (tenants' guarantee_gbps and weight_class,
remote_vms and vms added, removed or moved, and hosts added, removed or
changed, may change; a local VM goes on a port the edge has: every port that
is not a fabric port is polled as a VM-side port, including those attached
with /ufab/port_add; anything else is rejected and nothing is applied).
Logging: rte_log type ufab.edge (--log-level=ufab.edge:debug).

Telemetry (dpdk-telemetry.py, socket of the EAL's --file-prefix):
  /ufab/stats  /ufab/tenants  /ufab/paths  /ufab/pairs[,FIRST]  /ufab/pair,INDEX
  /ufab/workers  /ufab/tenant_set,VNI,GBPS  /ufab/tenant_class,VNI,CLASS|auto
  /ufab/path_drain,HOST,PATH  /ufab/path_undrain,HOST,PATH  /ufab/reload
  /ufab/port_add,DEVARGS  /ufab/port_remove,PORT

Example: two VM ports on memif, the fabric on a third (add -l 0-2 for a
control lcore and two workers):
  ufab-edge --no-huge -m 256 --file-prefix edgeA \
    --vdev net_memif0,role=server,socket=/run/ufab/vm0.sock \
    --vdev net_memif1,role=server,socket=/run/ufab/vm1.sock \
    --vdev net_memif2,role=client,socket=/run/ufab/fabric.sock \
    -- --config edge.yaml
)";
}

}  // namespace ufab::edge
