// The hot path of ufab-core, one function per role (receive, dequeue,
// transmit) in the style of DPDK's qos_sched, and the poll loop around them.
// Runs on one lcore, like one switch pipeline: the SwitchModel is not shared.
// Per packet there is no allocation, lock or syscall; the only allocation on
// the path is inside the model when it builds a failure notice (rare).
#pragma once

#include <csignal>
#include <cstdint>
#include <vector>

#include "control/clock.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "p4/model/switch_model.hpp"
#include "p4/softswitch/capture.hpp"
#include "p4/softswitch/counters.hpp"
#include "p4/softswitch/egress_port.hpp"
#include "p4/softswitch/options.hpp"

struct rte_mbuf;

namespace ufab::core {

struct LoopConfig {
  uint32_t burst = 32;
  Nanos fake_clock_ns = 0;     // >0: the k-th poll runs at k * fake_clock_ns
  Nanos stats_interval = kSec; // 0: no periodic line
  Nanos exit_after_idle = 0;   // 0: until stop is set
  // Scenario time = TSC-clock time + scenario_offset (aligns --t0-ns, CLOCK_MONOTONIC).
  int64_t scenario_offset = 0;
  std::vector<PortEvent> events;  // sorted by time; applied once each
  bool watch_links = false;
  Nanos sample_ns = 0;            // >0: record a QueueSample per port every sample_ns
  Nanos idle_nap = 50 * kUs;      // --idle-nap-us: the longest nap; 0 busy-polls
  Nanos min_nap = 20 * kUs;       // --min-nap-us: a shorter wait for a departure spins
};

// One sample of one port (--queue-log): the deepest the egress queue was and
// the bytes sent in the interval ending at t (scenario time).
struct QueueSample {
  Nanos t = 0;
  uint16_t port = 0;
  uint64_t queue_peak_bytes = 0;
  uint64_t tx_bytes = 0;
};

class Dataplane {
 public:
  static constexpr size_t kMaxBurst = 64;
  static constexpr size_t kFrameCap = 9216 + 64;  // jumbo frame + room for a failure notice to grow

  // mtu: the ports' MTU (--mtu); a frame whose Ethernet payload is above it
  // is dropped on arrival (too_big), as a switch's MAC drops a giant.
  Dataplane(swmodel::SwitchModel& model, std::vector<EgressPort>& ports, uint32_t burst, uint16_t mtu);

  // One poll of every port at time now. Returns frames received + sent.
  uint32_t poll(Nanos now);
  // The loop: poll, age (§4.2), print stats, back off when idle, stop on
  // *stop or after the idle timeout. Prints the final report.
  void run(const LoopConfig& cfg, const dpdk::TscClock& clock, const volatile std::sig_atomic_t* stop);
  // Frees whatever is still queued (at exit, after the final report).
  void flush();

  // --capture: frames received on `port` go to `c` too (null: none).
  void set_capture(uint16_t port, PortCapture* c) { capture_.at(port) = c; }

  const CoreStats& stats() const { return stats_; }
  const std::vector<QueueSample>& samples() const { return samples_; }

 private:
  uint32_t receive(uint16_t port, Nanos now);
  void ingress_one(rte_mbuf* m, uint16_t in_port, Nanos now);
  void dequeue(uint16_t port, Nanos now);
  uint32_t transmit(uint16_t port, Nanos now);
  // ns until a queued frame may leave its queue or delay line (UINT64_MAX: none queued).
  Nanos next_departure(Nanos now) const;
  // Timed port events, link-status following and queue samples (scenario time).
  void scenario_step(const LoopConfig& cfg, Nanos scenario_now, size_t& next_event, Nanos& next_sample,
                     Nanos& next_link_check);

  swmodel::SwitchModel& model_;
  std::vector<EgressPort>& ports_;
  uint16_t burst_;
  uint16_t mtu_;                // --mtu: the largest Ethernet payload a port takes
  std::vector<uint8_t> frame_;  // per-lcore copy of the frame the model's ingress rewrites
  CoreStats stats_;
  std::vector<QueueSample> samples_;
  std::vector<uint64_t> last_tx_bytes_;
  std::vector<PortCapture*> capture_;  // per port, null when not captured
  std::vector<int8_t> link_;  // last link status seen: -1 unknown, 0 down, 1 up
  const dpdk::TscClock* live_clock_ = nullptr;  // run(): frames are dated when taken (null with a fake clock)
};

}  // namespace ufab::core
