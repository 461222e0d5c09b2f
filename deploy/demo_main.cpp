// ufab-demo: the algorithm core on a scripted scenario (sim/minisim).
//
// Three VM-pairs with tokens 1, 2 and 4 (B_u = 1 Gb/s) share one 10 Gb/s
// link; a fourth pair with token 1 joins at --join-ms. Every pair runs
// ufab::VmPair (Eqns 1-3, two-stage admission, scalable probing); the link is
// a port of the uFAB-C reference model that stamps real wire-format probes.
// The table shows how windows and rates converge to token-proportional
// shares of the 9.5 Gb/s target (eta = 0.95).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sim/minisim/mini_fabric.hpp"

using namespace ufab;
using namespace ufab::sim;

namespace {

struct Options {
  double duration_ms = 40;
  double join_ms = 20;
  double step_ms = 2;
  std::string json, csv;
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: ufab-demo [--duration-ms N] [--join-ms N] [--step-ms N] [--csv FILE] [--json FILE]\n"
               "\n"
               "Runs the uFAB algorithm core on a scripted scenario: pairs with tokens 1, 2, 4\n"
               "share a 10 Gb/s link (base RTT 24 us); a pair with token 1 joins at --join-ms.\n"
               "  --duration-ms N  simulated time (default 40)\n"
               "  --join-ms N      when the fourth pair joins (default 20)\n"
               "  --step-ms N      table row interval (default 2)\n"
               "  --csv FILE       per-row time series (time_ms, pair, rate_gbps, window_bytes, queue_bytes)\n"
               "  --json FILE      summary for scripts\n");
}

bool parse_double(const char* s, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s, &end);
  return errno == 0 && end != s && *end == '\0' && out > 0;
}

int parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    }
    const bool known = a == "--json" || a == "--csv" || a == "--duration-ms" || a == "--join-ms" || a == "--step-ms";
    if (!known) {
      std::fprintf(stderr, "ufab-demo: unknown option '%s' (try --help)\n", a.c_str());
      return 2;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "ufab-demo: %s needs a value (try --help)\n", a.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--json") {
      o.json = v;
    } else if (a == "--csv") {
      o.csv = v;
    } else if (a == "--duration-ms" || a == "--join-ms" || a == "--step-ms") {
      double d = 0;
      if (!parse_double(v, d)) {
        std::fprintf(stderr, "ufab-demo: %s: '%s' is not a positive number\n", a.c_str(), v);
        return 2;
      }
      (a == "--duration-ms" ? o.duration_ms : a == "--join-ms" ? o.join_ms : o.step_ms) = d;
    }
  }
  return 0;
}

Nanos ms(double v) { return static_cast<Nanos>(v * 1e6); }

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int rc = parse(argc, argv, o)) return rc;

  const std::vector<double> tokens{1, 2, 4, 1};
  FabricSpec f;
  f.n_hosts = 4;
  for (int i = 0; i <= 4; ++i) f.links.push_back(LinkSpec{10'000'000'000ull, 5 * kUs});
  for (size_t i = 0; i < tokens.size(); ++i) {
    PairSpec p;
    p.name = std::string("pair") + static_cast<char>('A' + i);
    p.host = static_cast<uint32_t>(i);
    p.token = tokens[i];
    p.paths = {{static_cast<uint16_t>(i), 4}};
    p.start = i == 3 ? ms(o.join_ms) : 0;
    f.pairs.push_back(p);
  }
  MiniFabric m(f);
  const double target = 9.5;

  FILE* csv = nullptr;
  if (!o.csv.empty() && !(csv = std::fopen(o.csv.c_str(), "w"))) {
    std::fprintf(stderr, "ufab-demo: cannot write %s: %s\n", o.csv.c_str(), std::strerror(errno));
    return 1;
  }
  if (csv) std::fprintf(csv, "time_ms,pair,token,rate_gbps,window_bytes,queue_bytes\n");

  std::printf("uFAB core demo: tokens 1:2:4 share a 10 Gb/s link (target 9.5 Gb/s, base RTT 24 us);\n"
              "pairD (token 1) joins at %.1f ms. rate in Gb/s, window in KB.\n\n",
              o.join_ms);
  std::printf("%7s |", "t (ms)");
  for (const auto& p : f.pairs) std::printf(" %-6s rate  win |", p.name.c_str());
  std::printf(" queue KB\n");

  std::vector<uint64_t> last(m.n_pairs(), 0);
  std::vector<double> final_rate(m.n_pairs(), 0);
  for (double t = o.step_ms; t <= o.duration_ms + 1e-9; t += o.step_ms) {
    m.run_until(ms(t));
    std::printf("%7.1f |", t);
    for (size_t i = 0; i < m.n_pairs(); ++i) {
      const double rate = static_cast<double>(m.delivered_bytes(i) - last[i]) * 8 / (o.step_ms * 1e6);
      last[i] = m.delivered_bytes(i);
      final_rate[i] = rate;
      const double w = m.pair(i).window(m.now());
      std::printf("     %6.2f %5.1f |", rate, w / 1000);
      if (csv)
        std::fprintf(csv, "%.3f,%s,%.0f,%.4f,%.0f,%llu\n", t, f.pairs[i].name.c_str(), tokens[i], rate, w,
                     static_cast<unsigned long long>(m.link(4).queue_bytes));
    }
    std::printf(" %8.1f\n", static_cast<double>(m.link(4).queue_bytes) / 1000);
  }
  if (csv) std::fclose(csv);

  // Summary: the last row against the token-proportional split.
  const bool joined = o.join_ms < o.duration_ms;
  double tok_sum = 0, total = 0;
  for (size_t i = 0; i < m.n_pairs(); ++i) {
    if (i < 3 || joined) tok_sum += tokens[i];
    total += final_rate[i];
  }
  std::printf("\n%-6s %6s %12s %12s %10s %8s %8s\n", "pair", "token", "expect Gb/s", "got Gb/s", "share err", "probes",
              "resp");
  for (size_t i = 0; i < m.n_pairs(); ++i) {
    const bool active = i < 3 || joined;
    const double expect = active ? target * tokens[i] / tok_sum : 0;
    const double err = active && total > 0 ? (final_rate[i] / total) / (tokens[i] / tok_sum) - 1 : 0;
    std::printf("%-6s %6.0f %12.3f %12.3f %9.1f%% %8llu %8llu\n", f.pairs[i].name.c_str(), tokens[i], expect,
                final_rate[i], err * 100, static_cast<unsigned long long>(m.pair(i).counters().probes),
                static_cast<unsigned long long>(m.pair(i).counters().responses));
  }
  std::printf("link: %.3f Gb/s of the %.1f Gb/s target (%.1f%%), peak queue %.1f KB, peak in-flight %.1f KB "
              "(3 BDP = 85.5 KB)\n",
              total, target, total / target * 100, static_cast<double>(m.link(4).max_queue_bytes) / 1000,
              static_cast<double>(m.max_inflight_on_link(4)) / 1000);
  uint64_t ctl = 0, data = 0;
  for (size_t i = 0; i < m.n_pairs(); ++i) {
    ctl += m.control_bytes(i);
    data += m.delivered_bytes(i);
  }
  const double overhead = data + ctl ? static_cast<double>(ctl) / static_cast<double>(data + ctl) : 0;
  std::printf("probe overhead: %.2f%% of the bytes sent (probes, queries and finishes; L_w = %llu B)\n",
              overhead * 100, static_cast<unsigned long long>(f.edge.probe_every_bytes));

  if (!o.json.empty()) {
    FILE* j = std::fopen(o.json.c_str(), "w");
    if (!j) {
      std::fprintf(stderr, "ufab-demo: cannot write %s: %s\n", o.json.c_str(), std::strerror(errno));
      return 1;
    }
    std::fprintf(j, "{\n  \"target_gbps\": %.3f,\n  \"link_gbps\": %.4f,\n  \"peak_queue_bytes\": %llu,\n"
                 "  \"peak_inflight_bytes\": %llu,\n  \"probe_overhead\": %.5f,\n  \"pairs\": [\n",
                 target, total, static_cast<unsigned long long>(m.link(4).max_queue_bytes),
                 static_cast<unsigned long long>(m.max_inflight_on_link(4)), overhead);
    for (size_t i = 0; i < m.n_pairs(); ++i)
      std::fprintf(j, "    {\"name\": \"%s\", \"token\": %.3f, \"rate_gbps\": %.4f, \"probes\": %llu}%s\n",
                   f.pairs[i].name.c_str(), tokens[i], final_rate[i],
                   static_cast<unsigned long long>(m.pair(i).counters().probes), i + 1 < m.n_pairs() ? "," : "");
    std::fprintf(j, "  ]\n}\n");
    std::fclose(j);
  }
  return 0;
}
