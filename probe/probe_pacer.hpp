// Per-(VM-pair, path) probe pacing (paper §4.1 "Scalable probing scheme" and
// the probe-loss rule of §4.1 "we detect probe loss by timeout beyond 8
// baseRTTs"; design-notes §3). One ProbePacer per VM-pair per path being
// probed. Called on every data packet and every response, so it is O(1) and
// never allocates.
//
// When a probe is due (the caller asks only while the pair has data for this
// path, §4.1 "μFAB sends probes only when a VM-pair has immediate traffic
// demand"), with at most one probe outstanding:
//   - the pair has never had a response on this path (its first data);
//   - L_w = probe_every_bytes data bytes were sent since the last response;
//   - the pair is window-blocked: with a window smaller than L_w the byte
//     rule alone would never fire and the pair would deadlock;
//   - the previous probe was lost (no response within its loss timeout):
//     the edge has no fresh core state, so it probes again at once.
//
// The loss timeout is timeout_rtts base RTTs (§4.1: 8) for a probe sent
// after a response; it doubles with each consecutive loss on the path, up
// to max_timeout_rtts, and any accepted response resets it (docs/design.md
// §14: the paper leaves open how often a pair re-probes a path that never
// answers). The first loss is detected exactly as §4.1 says; a path that
// answers nothing costs one probe per max_timeout_rtts base RTTs instead
// of one per 8. max_timeout_rtts <= timeout_rtts: no doubling.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control/clock.hpp"
#include "probe/wire.hpp"

namespace ufab {

// Serial-number arithmetic on u32 sequence numbers (RFC 1982 style): a is
// before b when b - a, taken mod 2^32, is in [1, 2^31).
inline constexpr bool seq_before(uint32_t a, uint32_t b) {
  const uint32_t d = b - a;
  return d != 0 && d < 0x8000'0000u;
}

enum class ResponseKind : uint8_t {
  accepted,  // matches the outstanding probe, arrived before its loss deadline
  stale,     // a probe sent earlier than the outstanding one, or already timed out
  unknown,   // a sequence number this pacer never sent
};

struct ResponseVerdict {
  ResponseKind kind = ResponseKind::unknown;
  Nanos rtt = 0;  // RTT sample (now - send time); set only when accepted
};

class ProbePacer {
 public:
  // first_seq: the sequence number of the first probe (tests use it to start
  // near 2^32). max_timeout_rtts: the cap of the doubling loss timeout
  // (<= timeout_rtts: fixed at timeout_rtts). loss_streak: consecutive
  // losses carried over from an earlier pacer of the same path (a rejoin:
  // the path has not answered since).
  ProbePacer(uint64_t probe_every_bytes, uint32_t timeout_rtts, uint32_t first_seq = 0,
             uint32_t max_timeout_rtts = 0, uint32_t loss_streak = 0);

  // Data bytes just sent by the pair on this path.
  void on_data_sent(uint64_t bytes) {
    total_bytes_ += bytes;
    bytes_since_response_ += bytes;
  }

  // Whether to send a probe now (see the rules above). window_blocked: the
  // pair's in-flight bytes have reached its window. unsynced_bytes: data
  // bytes already sent on this path that on_data_sent() has not been told
  // of yet (an owner that credits its pacer lazily, VmPair), counted as if
  // it had.
  bool probe_due(bool window_blocked, uint64_t unsynced_bytes = 0) const;
  // The byte rule of probe_due() as a threshold: with no probe outstanding
  // and the window not blocking, probe_due(false, u) == (u >= bytes_until_due()).
  // 0 when a probe is due without more data (no response yet, the last probe
  // lost, or L_w bytes already sent since the last response). For an owner
  // that keeps the test on a line its data frames read anyway (VmPair).
  uint64_t bytes_until_due() const {
    if (!has_response_ || lost_ || bytes_since_response_ >= probe_every_bytes_) return 0;
    return probe_every_bytes_ - bytes_since_response_;
  }

  // A probe is being sent now. Returns its sequence number; arms the loss
  // deadline now + timeout_rtts_now() * base_rtt and snapshots total_bytes() into
  // probe_bytes_sent() (the wire Message::bytes_sent). Precondition: no probe
  // outstanding (probe_due() was true); if one is, it is superseded and its
  // response will be stale.
  uint32_t on_probe_sent(Nanos now, Nanos base_rtt);

  // A response echoing seq arrived at now. accepted clears the outstanding
  // probe, resets bytes_since_response() and records the RTT sample. A
  // response arriving at or after the loss deadline is stale: the probe is
  // lost and check_timeout() reports it, whichever of the two events the
  // caller processes first.
  ResponseVerdict on_response(uint32_t seq, Nanos now);

  // True exactly once when the outstanding probe is lost (now >= deadline);
  // then nothing is outstanding, a probe is due, and the next one's loss
  // timeout is twice this one's (capped).
  bool check_timeout(Nanos now);

  // The loss timeout, in base RTTs, of the next probe sent:
  // min(timeout_rtts * 2^loss_streak(), max_timeout_rtts).
  uint32_t timeout_rtts_now() const;
  // Losses since the last accepted response (or since the pacer began).
  uint32_t loss_streak() const { return loss_streak_; }

  bool outstanding() const { return outstanding_; }
  uint32_t outstanding_seq() const { return out_seq_; }    // valid while outstanding()
  Nanos deadline() const { return deadline_; }             // valid while outstanding()
  Nanos sent_at() const { return sent_at_; }               // send time of the last probe
  uint64_t probe_bytes_sent() const { return probe_bytes_; }  // snapshot of the last probe sent
  uint64_t bytes_since_response() const { return bytes_since_response_; }
  uint64_t total_bytes() const { return total_bytes_; }
  Nanos last_rtt() const { return last_rtt_; }             // 0 until the first accepted response
  bool has_response() const { return has_response_; }
  uint64_t probe_every_bytes() const { return probe_every_bytes_; }

  uint64_t probes_sent() const { return probes_sent_; }
  uint64_t responses() const { return responses_; }
  uint64_t stale() const { return stale_; }
  uint64_t unknown() const { return unknown_; }
  uint64_t losses() const { return losses_; }

 private:
  bool was_sent(uint32_t seq) const;

  // 112 bytes, as before the loss streak (L_w in 32 bits, the streak in
  // the flags' padding): a VmPair holds 8 pacers, and with 120-byte pacers
  // (9600 B pairs instead of 9536) the data path alone at 8K pairs measured
  // slower (bench edge ctl1s, interleaved: median 1.67 vs 1.81 Mpps).
  uint32_t probe_every_bytes_;  // L_w, clamped to 2^32 - 1 (the edge allows <= 2^30)
  uint32_t timeout_rtts_;
  uint32_t max_timeout_rtts_;  // >= timeout_rtts_
  uint32_t next_seq_;

  bool outstanding_ = false;
  bool has_response_ = false;
  bool lost_ = false;     // the last probe timed out; cleared by the next send
  uint8_t loss_streak_;   // consecutive losses (saturating at 64); reset by an accepted response
  uint32_t out_seq_ = 0;
  Nanos sent_at_ = 0;
  Nanos deadline_ = 0;
  uint64_t probe_bytes_ = 0;
  uint64_t bytes_since_response_ = 0;
  uint64_t total_bytes_ = 0;
  Nanos last_rtt_ = 0;

  uint64_t probes_sent_ = 0;
  uint64_t responses_ = 0;
  uint64_t stale_ = 0;
  uint64_t unknown_ = 0;
  uint64_t losses_ = 0;
};

// ---- probing overhead (§4.1) ----
//
// A probe on an n_hop-hop path is a full uFAB frame (probe/wire.hpp):
//   outer Ethernet/IPv4/UDP 42 B + tunnel shim 8 B + source route 2 + 2n B
//   + control message 32 + 16n B  =  84 + 18n bytes (FCS, preamble and
//   inter-frame gap not counted, as for the data bytes L_w).
inline constexpr size_t probe_frame_bytes(size_t n_hop) {
  return wire::kOuterBytes + wire::kShimBytes + (2 + 2 * n_hop) +
         wire::Message::kMsgHeaderBytes + wire::kHopBytes * n_hop;
}

// §4.1: when every pair probes as often as allowed, probes take at most
// L_p / (L_p + L_w) of the bandwidth (one probe per L_w data bytes).
//
// The paper gets <= 1.28% at L_w = 4 KB, i.e. L_p ~= 53 B (its 64-bit hop
// records). Our 16-byte hop records and explicit shim/route make a 5-hop probe
// probe_frame_bytes(5) = 42 + 8 + 12 + 32 + 80 = 174 B, so at L_w = 4096 the
// bound is 174 / 4270 = 4.07%. Reaching 1.28% with 174 B probes needs
// L_w >= 174 * (1 - 0.0128) / 0.0128 = 13,420 B (about 3.3 x 4 KB).
inline constexpr double probe_overhead_bound(size_t probe_bytes, uint64_t probe_every_bytes) {
  const double lp = static_cast<double>(probe_bytes);
  const double sum = lp + static_cast<double>(probe_every_bytes);
  return sum > 0 ? lp / sum : 0.0;
}

}  // namespace ufab
