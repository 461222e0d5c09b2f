#include "deploy/traffic/tally.hpp"

#include <algorithm>
#include <cinttypes>

namespace ufab::traffic {

TenantTally& Tally::tenant(uint32_t vni) {
  const auto it = index_.find(vni);
  if (it != index_.end()) return tenants_[it->second];
  index_.emplace(vni, tenants_.size());
  tenants_.emplace_back();
  tenants_.back().tenant = vni;
  return tenants_.back();
}

Bin& Tally::bin(TenantTally& t, uint64_t now) {
  const size_t i = static_cast<size_t>(now / interval_ns_);
  if (i >= t.bins.size()) t.bins.resize(i + 1);
  return t.bins[i];
}

void Tally::on_tx(uint32_t vni, uint32_t frame_bytes, uint64_t now) {
  TenantTally& t = tenant(vni);
  ++t.tx_pkts;
  t.tx_bytes += frame_bytes;
  bin(t, now).tx_bytes += frame_bytes;
}

void Tally::on_rx(const PayloadHeader& h, uint32_t src_ip, uint32_t frame_bytes, uint64_t now, uint64_t mono_now) {
  TenantTally& t = tenant(h.tenant);
  ++t.rx_pkts;
  t.rx_bytes += frame_bytes;
  if (t.first_rx_ns == 0) t.first_rx_ns = now;
  t.last_rx_ns = now;
  const uint64_t lat = mono_now > h.tx_ns ? mono_now - h.tx_ns : 0;
  t.latency.add(lat);
  Bin& b = bin(t, now);
  b.rx_bytes += frame_bytes;
  ++b.rx_pkts;
  b.lat_sum_ns += lat;
  if (lat > b.lat_max_ns) b.lat_max_ns = lat;
  uint64_t& next = next_seq_[FlowKey{h.tenant, src_ip, h.flow}];
  if (h.seq >= next) {
    t.lost += h.seq - next;
    next = h.seq + 1;
  } else {
    ++t.late;
    if (t.lost > 0) --t.lost;
  }
}

void Tally::write_csv(std::FILE* out) const {
  std::fprintf(out, "t_s,tenant,tx_bytes,rx_bytes,rx_pkts,tx_mbps,rx_mbps,lat_mean_us,lat_max_us\n");
  size_t n = 0;
  for (const TenantTally& t : tenants_) n = std::max(n, t.bins.size());
  const double secs = static_cast<double>(interval_ns_) / 1e9;
  for (size_t i = 0; i < n; ++i)
    for (const TenantTally& t : tenants_) {
      const Bin b = i < t.bins.size() ? t.bins[i] : Bin{};
      std::fprintf(out, "%.6f,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.2f,%.2f\n",
                   static_cast<double>(i + 1) * secs, t.tenant, b.tx_bytes, b.rx_bytes, b.rx_pkts,
                   static_cast<double>(b.tx_bytes) * 8 / secs / 1e6, static_cast<double>(b.rx_bytes) * 8 / secs / 1e6,
                   b.rx_pkts ? static_cast<double>(b.lat_sum_ns) / static_cast<double>(b.rx_pkts) / 1e3 : 0.0,
                   static_cast<double>(b.lat_max_ns) / 1e3);
    }
}

}  // namespace ufab::traffic
