// ufab-core's own counters, next to the model's (SwitchCounters counts what
// the μFAB-C pipelines drop; these count what the queues and ports drop).
// Invariant, checked by the tests: rx = tx + queued + model drops + core drops.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "control/clock.hpp"
#include "p4/model/switch_model.hpp"

namespace ufab::core {

enum class CoreDrop : uint8_t {
  queue_full,  // egress queue above --queue-bytes
  tx_full,     // the PMD did not take the frame, its link up (or not known)
  oversize,    // multi-segment mbuf or frame above the per-lcore buffer
  no_room,     // a failure notice needed more tailroom than the mbuf had
  link_down,   // the PMD did not take the frame and the port's link is down (its peer is gone)
  too_big,     // an Ethernet payload (802.1Q/802.1ad tags aside) above --mtu: a switch port's giant
  count_,
};
inline constexpr size_t kCoreDrops = static_cast<size_t>(CoreDrop::count_);
std::string_view to_string(CoreDrop d);
std::string_view to_string(swmodel::DropReason r);

struct PortStats {
  uint64_t rx = 0, rx_bytes = 0;
  uint64_t tx = 0, tx_bytes = 0;
  uint64_t queue_full = 0;
  uint64_t peak_queue_bytes = 0;
  uint64_t interval_peak_queue_bytes = 0;  // since the last --queue-log sample
};

struct CoreStats {
  std::array<uint64_t, kCoreDrops> drops{};
  std::vector<PortStats> ports;
  uint64_t queued = 0;  // in egress queues and delay lines right now

  void drop(CoreDrop d) { ++drops[static_cast<size_t>(d)]; }
  uint64_t rx() const;
  uint64_t tx() const;
  uint64_t core_drops() const;
};

uint64_t model_drops(const swmodel::SwitchCounters& c);

// One line: "ufab-core <tag> t=... rx= tx= queued= dropped= drop.<reason>=..."
// (non-zero reasons only) plus the model's forwarding counters.
void print_stats(std::FILE* out, const char* tag, Nanos t, const CoreStats& s, const swmodel::SwitchModel& m);
// One line per port (final report).
void print_port_stats(std::FILE* out, const CoreStats& s, const swmodel::SwitchModel& m);

}  // namespace ufab::core
