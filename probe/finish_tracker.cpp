// Finish-probe retransmission until every hop acks (paper §3.6, design-notes
// §4.3; see finish_tracker.hpp).
#include "probe/finish_tracker.hpp"

#include <algorithm>

namespace ufab {

FinishTracker::FinishTracker(uint32_t timeout_rtts, uint32_t max_retries, uint32_t first_seq)
    : timeout_rtts_(timeout_rtts), max_retries_(max_retries), next_seq_(first_seq) {}

void FinishTracker::start(Nanos now, Nanos base_rtt, uint8_t n_hop) {
  n_hop_ = std::min<uint8_t>(n_hop, kMaxHopBits);
  full_ = static_cast<uint16_t>((1u << n_hop_) - 1u);
  acked_ = 0;
  attempt_ = 0;
  first_seq_ = next_seq_;
  base_rtt_ = base_rtt;
  started_at_ = now;
  retry_at_ = now;
  state_ = n_hop_ == 0 ? FinishState::done : FinishState::pending;
}

bool FinishTracker::send_due(Nanos now) const {
  if (state_ != FinishState::pending) return false;
  if (attempt_ == 0) return true;
  return now >= retry_at_ && attempt_ <= max_retries_;
}

uint32_t FinishTracker::on_sent(Nanos now) {
  const uint32_t seq = next_seq_++;
  ++attempt_;
  ++sends_;
  if (attempt_ > 1) ++retries_;
  const uint32_t shift = std::min(attempt_ - 1, kMaxBackoffShift);
  retry_at_ = now + (static_cast<Nanos>(timeout_rtts_) * base_rtt_ << shift);
  return seq;
}

bool FinishTracker::on_ack(uint32_t seq, uint16_t acked_hop_mask) {
  // This finish's sends are first_seq_ .. first_seq_ + attempt_ - 1 (mod 2^32).
  const bool ours = static_cast<uint32_t>(seq - first_seq_) < attempt_;
  if (!ours || (state_ != FinishState::pending && state_ != FinishState::done)) {
    ++ignored_;
    return false;
  }
  ++acks_;
  acked_ = static_cast<uint16_t>(acked_ | (acked_hop_mask & full_));
  if (acked_ == full_) state_ = FinishState::done;
  return state_ == FinishState::done;
}

bool FinishTracker::check_give_up(Nanos now) {
  if (state_ != FinishState::pending || attempt_ < max_retries_ + 1 || now < retry_at_) return false;
  state_ = FinishState::gave_up;
  ++gave_up_;
  return true;
}

bool FinishTracker::abandon() {
  if (state_ != FinishState::pending) return false;
  state_ = FinishState::gave_up;
  ++abandoned_;
  return true;
}

}  // namespace ufab
