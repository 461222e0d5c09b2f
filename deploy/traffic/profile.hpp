// A generator flow's demand over time (constant, on-off, incast) and the
// pacer that turns it into departure times. Plain C++ (no DPDK): the
// generator asks `due(now)` in its loop and tells `sent(bytes)`.
//
// Times are ns since the scenario's t0. Rates are bit/s of whole Ethernet
// frames (no preamble/IFG), like the switch's shaper.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace ufab::traffic {

enum class Pattern : uint8_t { constant, onoff, incast };
const char* to_string(Pattern p);

struct FlowSpec {
  uint16_t port = 0;          // DPDK port the flow leaves on (the VM's vNIC)
  uint32_t tenant = 0;        // written in the payload; the sink counts per tenant
  uint32_t flow = 0;          // flow id (auto-numbered when not given)
  uint32_t src_ip = 0, dst_ip = 0;
  std::array<uint8_t, 6> src_mac{2, 0, 0, 0, 0xa, 1}, dst_mac{2, 0, 0, 0, 0xb, 1};
  uint16_t src_port = 10000, dst_port = 9;
  uint16_t frame_bytes = 1000;  // Ethernet frame without FCS, >= 42 + 28
  uint64_t rate_bps = 0;        // rate while the flow is on
  Pattern pattern = Pattern::constant;
  uint64_t start_ns = 0, stop_ns = UINT64_MAX;
  uint64_t on_ns = 0, off_ns = 0;          // onoff: on for on_ns, then off for off_ns
  uint64_t period_ns = 0, burst_bytes = 0;  // incast: burst_bytes at rate_bps every period_ns
};

// Parses "key=value,key=value,..." (see --help); throws std::invalid_argument
// naming the key and the value.
FlowSpec parse_flow(const std::string& spec);

class Pacer {
 public:
  // At most this many frames are sent back to back to catch up after the
  // process was descheduled; older debt is forgotten (the VM's demand is a
  // rate, not a backlog).
  static constexpr uint64_t kMaxCatchUpFrames = 16;

  explicit Pacer(const FlowSpec& f);

  // True when a frame may leave at now; the caller then calls sent().
  bool due(uint64_t now);
  void sent();
  // Next time due() can become true (UINT64_MAX when the flow has ended).
  uint64_t next_due(uint64_t now) const;

  uint64_t frames() const { return frames_; }
  uint64_t bytes() const { return frames_ * f_.frame_bytes; }
  uint64_t periods() const { return periods_; }  // incast bursts begun

 private:
  bool on_at(uint64_t now) const;                 // onoff/constant: within an on-phase
  uint64_t phase_start(uint64_t now) const;        // start of the current on-phase / burst
  FlowSpec f_;
  uint64_t gap_ps_;         // ps between frame departures at rate_bps
  uint64_t next_ps_ = 0;    // departure time of the next frame, ps since t0
  uint64_t frames_ = 0;
  uint64_t cur_phase_ = UINT64_MAX, phase_bytes_ = 0, periods_ = 0;
};

}  // namespace ufab::traffic
