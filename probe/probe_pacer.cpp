// Probe pacing per VM-pair and path (paper §4.1; see probe_pacer.hpp).
#include "probe/probe_pacer.hpp"

namespace ufab {

ProbePacer::ProbePacer(uint64_t probe_every_bytes, uint32_t timeout_rtts, uint32_t first_seq,
                       uint32_t max_timeout_rtts, uint32_t loss_streak)
    : probe_every_bytes_(static_cast<uint32_t>(probe_every_bytes < UINT32_MAX ? probe_every_bytes : UINT32_MAX)),
      timeout_rtts_(timeout_rtts),
      max_timeout_rtts_(max_timeout_rtts > timeout_rtts ? max_timeout_rtts : timeout_rtts),
      next_seq_(first_seq),
      loss_streak_(static_cast<uint8_t>(loss_streak < 64 ? loss_streak : 64)) {}

uint32_t ProbePacer::timeout_rtts_now() const {
  // Doubling per consecutive loss, in 64 bits so the cap (<= 2^32 - 1) is
  // reached before any shift could overflow.
  uint64_t t = timeout_rtts_;
  for (uint32_t i = 0; i < loss_streak_ && t < max_timeout_rtts_; ++i) t *= 2;
  return static_cast<uint32_t>(t < max_timeout_rtts_ ? t : max_timeout_rtts_);
}

bool ProbePacer::probe_due(bool window_blocked, uint64_t unsynced_bytes) const {
  if (outstanding_) return false;  // at most one probe in flight per path
  if (window_blocked) return true;
  // §4.1: L_w bytes since the last response (at once with no response yet or
  // after a loss): the threshold bytes_until_due() keeps.
  return unsynced_bytes >= bytes_until_due();
}

uint32_t ProbePacer::on_probe_sent(Nanos now, Nanos base_rtt) {
  out_seq_ = next_seq_++;
  outstanding_ = true;
  lost_ = false;
  sent_at_ = now;
  // §4.1: in-flight bytes stay below 3 BDP, so latency is bounded by 4 base
  // RTTs; a probe with no response within 8 base RTTs is lost. After
  // consecutive losses the timeout doubles (capped; see the header).
  deadline_ = now + static_cast<Nanos>(timeout_rtts_now()) * base_rtt;
  probe_bytes_ = total_bytes_;
  ++probes_sent_;
  return out_seq_;
}

// seq was handed out by on_probe_sent: it lies within the last probes_sent_
// sequence numbers before next_seq_ (at most 2^31 back, the serial-number
// horizon).
bool ProbePacer::was_sent(uint32_t seq) const {
  if (!seq_before(seq, next_seq_)) return false;
  const uint32_t back = next_seq_ - seq;  // in [1, 2^31)
  return back <= probes_sent_;
}

ResponseVerdict ProbePacer::on_response(uint32_t seq, Nanos now) {
  if (outstanding_ && seq == out_seq_ && now < deadline_) {
    outstanding_ = false;
    has_response_ = true;
    bytes_since_response_ = 0;
    loss_streak_ = 0;  // the path answers: back to the §4.1 timeout
    last_rtt_ = now >= sent_at_ ? now - sent_at_ : 0;
    ++responses_;
    return {ResponseKind::accepted, last_rtt_};
  }
  if (was_sent(seq)) {
    ++stale_;
    return {ResponseKind::stale, 0};
  }
  ++unknown_;
  return {ResponseKind::unknown, 0};
}

bool ProbePacer::check_timeout(Nanos now) {
  if (!outstanding_ || now < deadline_) return false;
  outstanding_ = false;
  lost_ = true;
  ++losses_;
  if (loss_streak_ < 64) ++loss_streak_;  // enough to reach any cap from timeout_rtts >= 1
  return true;
}

}  // namespace ufab
