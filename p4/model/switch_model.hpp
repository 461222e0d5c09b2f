// μFAB-C switch reference model (§3.2, §3.6, §4.2, App. G): the executable
// spec the P4 program is checked against. Operates on real wire bytes
// (probe/wire.hpp); time is injected. p4/model/README.md documents every
// decision; the P4 program must replicate ingress() and egress() exactly.
//
// ingress: parse, source-route forwarding (consume one label), L3 for
//          non-uFAB traffic, failure notices for probes to a down port.
// egress:  tx_l accounting for every packet; probe stamping (App. G) and
//          finish handling (design-notes §4.3) on the egress link's state.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "control/clock.hpp"
#include "p4/model/l3_table.hpp"
#include "p4/model/link_state.hpp"
#include "probe/wire.hpp"

namespace ufab::swmodel {

struct SwitchConfig {
  uint16_t n_ports = 32;               // 1..256 (a hop record's port is 8 bits)
  uint8_t default_cap_code = 9;        // 100 Gb/s (units.hpp)
  std::vector<uint8_t> cap_codes;      // per port; ports past the end use the default
  SlotGeometry slots{};                // per egress link
  Nanos aging_period = 10 * kSec;      // §4.2: 10 s
  uint32_t tx_shift = 2;               // tx interval = 8 µs << shift (32 µs)
  uint16_t udp_port = wire::kUdpPort;
};

enum class DropReason : uint8_t {
  malformed,        // uFAB frame or control message failed to parse (see malformed[])
  route_exhausted,  // source route has no label left (next == n_labels)
  bad_port,         // label names a port this switch does not have
  port_down,        // egress port down (data, or any non-probe control message)
  no_route,         // non-uFAB: not IPv4 or no host route
  failure_unroutable,  // probe to a down port whose way back needs > kMaxLabels labels
  count_,
};
inline constexpr size_t kDropReasons = static_cast<size_t>(DropReason::count_);
inline constexpr size_t kWireErrorSlots = 16;  // malformed[] is indexed by WireError

struct Decision {
  bool forward = false;
  uint16_t port = 0;  // egress port when forwarded
  DropReason reason = DropReason::malformed;
  static Decision to(uint16_t p) { return {true, p, DropReason::malformed}; }
  static Decision drop(DropReason r) { return {false, 0, r}; }
  bool operator==(const Decision&) const = default;
};

struct SwitchCounters {
  std::array<uint64_t, kDropReasons> drops{};
  std::array<uint64_t, kWireErrorSlots> malformed{};  // by WireError value
  uint64_t ufab_forwarded = 0;       // left ingress on a source route
  uint64_t l3_forwarded = 0;         // non-uFAB frames
  uint64_t failures_generated = 0;   // probes turned into failure notices
  uint64_t drops_of(DropReason r) const { return drops[static_cast<size_t>(r)]; }
  uint64_t malformed_of(wire::WireError e) const { return malformed[static_cast<size_t>(e)]; }
  bool operator==(const SwitchCounters&) const = default;
};

struct SwitchState {
  uint32_t epoch = 0;
  std::vector<bool> port_up;
  std::vector<LinkState::State> links;
  SwitchCounters counters;
  bool operator==(const SwitchState&) const = default;
};

class SwitchModel {
 public:
  // Throws std::invalid_argument on an out-of-range configuration.
  explicit SwitchModel(SwitchConfig cfg);

  // Ingress pipeline. May rewrite the frame (route label pointer; a failure
  // notice replaces it and goes back out in_port). in_port < n_ports.
  Decision ingress(std::vector<uint8_t>& frame, uint16_t in_port, Nanos now);
  // Egress pipeline of `port` for a frame that entered on in_port (bridged
  // metadata); queue_bytes is the egress queue depth the TM reports.
  Decision egress(std::span<uint8_t> frame, uint16_t port, uint16_t in_port, Nanos now, uint64_t queue_bytes);
  // ingress then, if forwarded, egress on the chosen port.
  Decision process(std::vector<uint8_t>& frame, uint16_t in_port, Nanos now, uint64_t queue_bytes);

  // ---- control plane ----
  void set_port_up(uint16_t port, bool up);
  bool port_up(uint16_t port) const { return up_.at(port); }
  L3Table& l3() { return l3_; }
  // Aging (§4.2): the control plane advances the epoch register every
  // aging period and sweeps. tick() does both when now crosses a period
  // boundary (epoch = now / aging_period) and returns what it removed.
  AgeResult tick(Nanos now);
  uint32_t epoch() const { return epoch_; }
  void set_epoch(uint32_t e) { epoch_ = e; }
  // One step of an incremental sweep of one link at the current epoch.
  AgeResult age_step(uint16_t port, size_t first_bucket, size_t n_buckets);

  // ---- read access ----
  const SwitchConfig& config() const { return cfg_; }
  const LinkState& link(uint16_t port) const { return links_.at(port); }
  const SwitchCounters& counters() const { return ctr_; }
  SwitchState snapshot() const;
  void restore(const SwitchState& s);

 private:
  Decision drop(DropReason r);
  Decision drop_malformed(wire::WireError e);
  Decision forward_l3(std::span<const uint8_t> frame);
  Decision make_failure(std::vector<uint8_t>& frame, const wire::FrameView& v, uint16_t in_port);
  void stamp_probe(LinkState& l, const PairKey& key, wire::Message& m, uint16_t in_port, uint64_t queue_bytes);
  void ack_finish(LinkState& l, const PairKey& key, wire::Message& m, uint16_t in_port);

  SwitchConfig cfg_;
  std::vector<LinkState> links_;
  std::vector<bool> up_;
  L3Table l3_;
  uint32_t epoch_ = 0;
  SwitchCounters ctr_;
};

}  // namespace ufab::swmodel
