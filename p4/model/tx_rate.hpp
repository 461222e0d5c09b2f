// tx_l estimator of one egress port (§3.2, §3.6: "tx_l ... straightforward
// to obtain by programmable switches"). A plain per-interval rate over fixed,
// back-to-back windows of 8 µs × 2^shift:
//
//   bytes B in one 8 µs window  →  8·B bits / 8 µs = B Mb/s
//
// so the Mb/s wire value (units.hpp) is simply B >> shift: no divider, which
// Tofino lacks. The P4 version keeps two registers per port (window start
// timestamp, bytes in the window) and one for the last rate, and replicates
// on_packet() exactly (README "tx-rate estimator").
#pragma once

#include <cstdint>

#include "control/clock.hpp"
#include "probe/units.hpp"

namespace ufab::swmodel {

inline constexpr Nanos kTxBaseInterval = 8 * kUs;

struct TxRateState {
  Nanos win_start = 0;     // start of the open window
  uint64_t win_bytes = 0;  // bytes sent in the open window
  uint32_t rate = 0;       // Mb/s over the last closed window (24-bit saturated)
  bool operator==(const TxRateState&) const = default;
};

class TxRateEstimator {
 public:
  explicit TxRateEstimator(uint32_t shift = 2) : shift_(shift) {}
  Nanos interval() const { return kTxBaseInterval << shift_; }

  // Account one packet of `bytes` leaving at `now` (the packet belongs to the
  // window it leaves in). A window closes at the first packet at or after its
  // end: if that packet falls in the very next window the closed window's
  // bytes become the rate and the next window starts exactly one interval
  // later; if a whole window passed with no packet the rate is 0 and the new
  // window starts at `now`.
  void on_packet(uint64_t bytes, Nanos now) {
    const Nanos iv = interval();
    if (now - s_.win_start >= iv) {
      if (now - s_.win_start < 2 * iv) {
        s_.rate = wire::sat24(s_.win_bytes >> shift_);
        s_.win_start += iv;
      } else {
        s_.rate = 0;
        s_.win_start = now;
      }
      s_.win_bytes = 0;
    }
    s_.win_bytes += bytes;
  }
  uint32_t rate_mbps() const { return s_.rate; }
  const TxRateState& state() const { return s_; }
  void load(const TxRateState& s) { s_ = s; }

 private:
  uint32_t shift_;
  TxRateState s_{};
};

}  // namespace ufab::swmodel
