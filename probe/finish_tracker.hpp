// Finish-probe retransmission per (VM-pair, path) (paper §3.6: a VM-pair that
// becomes inactive — idle for a while or leaving the path — tells every switch
// with a finish probe and "will not stop sending the finish probe until it
// gets the acknowledgments from all switches in the probe response";
// design-notes §4.3: per-hop acknowledgement, the edge retries until every
// switch on the path has subtracted the pair). O(1), no allocation.
//
// Each finish_ack carries one ACK bit per hop (bit i = hop i processed the
// finish). Bits accumulate across retries: a switch that acked once has
// removed the pair, and a switch treats a repeated finish of a pair it no
// longer holds as a no-op, so acks are idempotent.
//
// Retry timer: the n-th send of a finish (n = 1, 2, ...) arms
//   timeout_rtts * base_rtt * 2^min(n - 1, kMaxBackoffShift),
// i.e. the probe-loss timeout (8 base RTTs, §4.1) doubling per retry and capped
// at 16x. A finish is sent at most 1 + max_retries times; if the last timer
// expires with some hop still unacked the tracker gives up — the switches'
// aging removes the pair anyway (§4.2 silent quits).
#pragma once

#include <cstdint>

#include "control/clock.hpp"

namespace ufab {

enum class FinishState : uint8_t {
  idle,     // nothing to finish
  pending,  // started; some hop has not acked yet
  done,     // every hop acked
  gave_up,  // 1 + max_retries sends and still unacked hops, or abandon()
};

class FinishTracker {
 public:
  static constexpr uint32_t kMaxBackoffShift = 4;  // retry timeout grows to at most 16x
  static constexpr uint8_t kMaxHopBits = 16;       // width of the ACK mask (wire: n_hop <= 15)

  // first_seq: sequence number of the first finish sent (tests start near 2^32).
  FinishTracker(uint32_t timeout_rtts, uint32_t max_retries, uint32_t first_seq = 0);

  // Begin finishing the pair on one path of n_hop hops (n_hop is clamped to
  // kMaxHopBits). Restarting discards the previous finish: acks of its sends
  // are then ignored. n_hop = 0 (no switch to tell) is done at once.
  void start(Nanos now, Nanos base_rtt, uint8_t n_hop);

  // True right after start() and whenever the retry timer has expired while a
  // hop is unacked and retries remain.
  bool send_due(Nanos now) const;

  // A finish is sent now (precondition: send_due()). Returns its sequence
  // number and arms the retry timer with the backoff above. attempt() > 1
  // marks a retransmission (wire kMsgRetry).
  uint32_t on_sent(Nanos now);

  // A finish_ack for seq with per-hop ACK bits. Counted only if seq was sent
  // since the last start() and the finish is pending or done; bits above
  // n_hop are dropped. Returns true when every hop has acked.
  bool on_ack(uint32_t seq, uint16_t acked_hop_mask);

  // True exactly once, when the timer of the last allowed send expires with
  // hops still unacked: the state becomes gave_up.
  bool check_give_up(Nanos now);

  // A pending finish that cannot reach its path any more (the edge's uplink
  // for it lost its link): given up now, without waiting out its retries;
  // the switches' aging removes the pair (§4.2). True if it was pending.
  bool abandon();

  FinishState state() const { return state_; }
  uint16_t acked_mask() const { return acked_; }
  uint16_t full_mask() const { return full_; }
  uint8_t n_hop() const { return n_hop_; }
  uint32_t attempt() const { return attempt_; }  // sends since the last start()
  Nanos retry_at() const { return retry_at_; }   // when the armed timer expires
  Nanos started_at() const { return started_at_; }

  uint64_t sends() const { return sends_; }
  uint64_t retries() const { return retries_; }  // sends beyond the first of each finish
  uint64_t acks() const { return acks_; }        // acks of this finish's sends
  uint64_t ignored_acks() const { return ignored_; }  // acks from before start() or unknown
  uint64_t gave_up() const { return gave_up_; }      // retries exhausted (check_give_up)
  uint64_t abandoned() const { return abandoned_; }  // abandon()

 private:
  uint32_t timeout_rtts_;
  uint32_t max_retries_;
  uint32_t next_seq_;

  FinishState state_ = FinishState::idle;
  uint32_t first_seq_ = 0;  // first seq of the current finish
  uint32_t attempt_ = 0;
  uint8_t n_hop_ = 0;
  uint16_t full_ = 0;
  uint16_t acked_ = 0;
  Nanos base_rtt_ = 0;
  Nanos started_at_ = 0;
  Nanos retry_at_ = 0;

  uint64_t sends_ = 0;
  uint64_t retries_ = 0;
  uint64_t acks_ = 0;
  uint64_t ignored_ = 0;
  uint64_t gave_up_ = 0;
  uint64_t abandoned_ = 0;
};

}  // namespace ufab
