// What ufab-traffic counts: per tenant (sent, received, lost, late,
// latency), per time bin, per flow at the sink (sequence tracking). Plain
// C++; the DPDK loop feeds it. Allocation happens only when a tenant, flow or
// time bin is seen for the first time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "deploy/traffic/latency_hist.hpp"
#include "deploy/traffic/payload.hpp"

namespace ufab::traffic {

struct Bin {
  uint64_t tx_bytes = 0, rx_bytes = 0, rx_pkts = 0, lat_sum_ns = 0, lat_max_ns = 0;
};

struct TenantTally {
  uint32_t tenant = 0;
  uint64_t tx_pkts = 0, tx_bytes = 0;
  uint64_t rx_pkts = 0, rx_bytes = 0;
  uint64_t lost = 0;   // sequence numbers skipped (a late arrival later takes one back)
  uint64_t late = 0;   // arrived after a higher sequence number of its flow
  uint64_t first_rx_ns = 0, last_rx_ns = 0;  // scenario time
  LatencyHist latency;                       // one-way, ns
  std::vector<Bin> bins;
};

class Tally {
 public:
  explicit Tally(uint64_t interval_ns) : interval_ns_(interval_ns) {}

  TenantTally& tenant(uint32_t vni);
  // now: scenario time (ns since t0); frame_bytes: the whole Ethernet frame.
  void on_tx(uint32_t vni, uint32_t frame_bytes, uint64_t now);
  // mono_now: CLOCK_MONOTONIC, compared with the payload's tx time.
  void on_rx(const PayloadHeader& h, uint32_t src_ip, uint32_t frame_bytes, uint64_t now, uint64_t mono_now);
  void on_foreign() { ++foreign_; }

  const std::vector<TenantTally>& tenants() const { return tenants_; }
  uint64_t foreign() const { return foreign_; }
  uint64_t interval_ns() const { return interval_ns_; }
  void write_csv(std::FILE* out) const;

 private:
  Bin& bin(TenantTally& t, uint64_t now);
  uint64_t interval_ns_;
  std::vector<TenantTally> tenants_;
  std::unordered_map<uint32_t, size_t> index_;
  struct FlowKey {
    uint32_t tenant, src_ip, flow;
    bool operator==(const FlowKey&) const = default;
  };
  struct FlowKeyHash {
    size_t operator()(const FlowKey& k) const {
      return std::hash<uint64_t>{}((uint64_t{k.tenant} << 40) ^ (uint64_t{k.src_ip} << 12) ^ k.flow);
    }
  };
  // (tenant, src ip, flow) -> next expected sequence (tenants may reuse addresses)
  std::unordered_map<FlowKey, uint64_t, FlowKeyHash> next_seq_;
  uint64_t foreign_ = 0;                              // frames without the payload header
};

}  // namespace ufab::traffic
