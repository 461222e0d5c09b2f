#include "deploy/traffic/report.hpp"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ufab::traffic {

namespace {

// Mean receive rate between the first and the last frame of the tenant.
double rx_rate_bps(const TenantTally& t) {
  if (t.rx_pkts < 2 || t.last_rx_ns <= t.first_rx_ns) return 0;
  return static_cast<double>(t.rx_bytes) * 8e9 / static_cast<double>(t.last_rx_ns - t.first_rx_ns);
}

}  // namespace

void print_report(const Engine& e, bool gen) {
  const double secs = static_cast<double>(e.elapsed_ns()) / 1e9;
  std::printf("ufab-traffic final mode=%s t=%.3fs foreign=%" PRIu64 "\n", gen ? "gen" : "sink", secs,
              e.tally().foreign());
  for (const TenantTally& t : e.tally().tenants())
    std::printf("ufab-traffic tenant=%u tx_pkts=%" PRIu64 " tx_bytes=%" PRIu64 " rx_pkts=%" PRIu64
                " rx_bytes=%" PRIu64 " lost=%" PRIu64 " late=%" PRIu64
                " rx_mbps=%.3f lat_p50_us=%.1f lat_p99_us=%.1f lat_p999_us=%.1f lat_max_us=%.1f\n",
                t.tenant, t.tx_pkts, t.tx_bytes, t.rx_pkts, t.rx_bytes, t.lost, t.late, rx_rate_bps(t) / 1e6,
                static_cast<double>(t.latency.percentile(0.5)) / 1e3,
                static_cast<double>(t.latency.percentile(0.99)) / 1e3,
                static_cast<double>(t.latency.percentile(0.999)) / 1e3, static_cast<double>(t.latency.max()) / 1e3);
  for (const FlowState& f : e.flows())
    std::printf("ufab-traffic flow=%u tenant=%u pattern=%s sent=%" PRIu64 " bytes=%" PRIu64 " bursts=%" PRIu64
                " alloc_fail=%" PRIu64 "\n",
                f.spec.flow, f.spec.tenant, to_string(f.spec.pattern), f.pacer.frames(), f.pacer.bytes(),
                f.pacer.periods(), f.alloc_fail);
  for (size_t p = 0; p < e.ports().size(); ++p) {
    const PortCounters& c = e.ports()[p];
    std::printf("ufab-traffic port=%zu rx=%" PRIu64 " tx=%" PRIu64 " rx_bytes=%" PRIu64 " tx_bytes=%" PRIu64
                " tx_retries=%" PRIu64 "\n",
                p, c.rx, c.tx, c.rx_bytes, c.tx_bytes, c.tx_retries);
  }
  std::fflush(stdout);
}

void write_json(const Engine& e, bool gen, const std::string& path) {
  nlohmann::json j;
  j["mode"] = gen ? "gen" : "sink";
  j["elapsed_s"] = static_cast<double>(e.elapsed_ns()) / 1e9;
  j["interval_s"] = static_cast<double>(e.tally().interval_ns()) / 1e9;
  j["foreign"] = e.tally().foreign();
  j["tenants"] = nlohmann::json::array();
  for (const TenantTally& t : e.tally().tenants()) {
    const LatencyHist& h = t.latency;
    j["tenants"].push_back({{"tenant", t.tenant},
                            {"tx_pkts", t.tx_pkts},
                            {"tx_bytes", t.tx_bytes},
                            {"rx_pkts", t.rx_pkts},
                            {"rx_bytes", t.rx_bytes},
                            {"lost", t.lost},
                            {"late", t.late},
                            {"first_rx_s", static_cast<double>(t.first_rx_ns) / 1e9},
                            {"last_rx_s", static_cast<double>(t.last_rx_ns) / 1e9},
                            {"rx_rate_bps", rx_rate_bps(t)},
                            {"latency_us",
                             {{"p50", static_cast<double>(h.percentile(0.5)) / 1e3},
                              {"p90", static_cast<double>(h.percentile(0.9)) / 1e3},
                              {"p99", static_cast<double>(h.percentile(0.99)) / 1e3},
                              {"p999", static_cast<double>(h.percentile(0.999)) / 1e3},
                              {"max", static_cast<double>(h.max()) / 1e3},
                              {"min", static_cast<double>(h.min()) / 1e3},
                              {"mean", h.mean() / 1e3},
                              {"samples", h.count()}}}});
  }
  j["flows"] = nlohmann::json::array();
  for (const FlowState& f : e.flows())
    j["flows"].push_back({{"flow", f.spec.flow},
                          {"tenant", f.spec.tenant},
                          {"port", f.spec.port},
                          {"pattern", to_string(f.spec.pattern)},
                          {"rate_bps", f.spec.rate_bps},
                          {"frame_bytes", f.spec.frame_bytes},
                          {"sent", f.pacer.frames()},
                          {"bytes", f.pacer.bytes()},
                          {"bursts", f.pacer.periods()},
                          {"alloc_fail", f.alloc_fail}});
  j["ports"] = nlohmann::json::array();
  for (const PortCounters& c : e.ports())
    j["ports"].push_back({{"rx", c.rx}, {"tx", c.tx}, {"rx_bytes", c.rx_bytes}, {"tx_bytes", c.tx_bytes},
                          {"tx_retries", c.tx_retries}});
  std::ofstream out(path);
  if (!out) throw std::runtime_error("--json: cannot write " + path);
  out << j.dump(2) << "\n";
}

void write_csv(const Engine& e, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("--csv: cannot write " + path);
  e.tally().write_csv(f);
  std::fclose(f);
}

}  // namespace ufab::traffic
