#include "edge/options.hpp"

#include <getopt.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace ufab::edge {

namespace {

enum Opt : int { kConfig = 256, kStats, kExitIdle, kHelp };

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
      case kHelp: case 'h': o.help = true; break;
      case ':': throw OptionError(std::string(args[static_cast<size_t>(optind) - 1]) + ": needs a value");
      default: throw OptionError(std::string("unknown option '") + args[static_cast<size_t>(optind) - 1] + "' (see --help)");
    }
  }
  if (optind < argc) throw OptionError(std::string("unexpected argument '") + args[static_cast<size_t>(optind)] + "'");
  if (!o.help && o.config.empty()) throw OptionError("--config FILE is required (see --help)");
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
  --help                   this text.

Telemetry (dpdk-telemetry.py, socket of the EAL's --file-prefix):
  /ufab/stats  /ufab/tenants  /ufab/paths  /ufab/pairs[,FIRST]

Example: two VM ports on memif, the fabric on a third:
  ufab-edge --no-huge -m 256 --file-prefix edgeA \
    --vdev net_memif0,role=server,socket=/run/ufab/vm0.sock \
    --vdev net_memif1,role=server,socket=/run/ufab/vm1.sock \
    --vdev net_memif2,role=client,socket=/run/ufab/fabric.sock \
    -- --config edge.yaml
)";
}

}  // namespace ufab::edge
