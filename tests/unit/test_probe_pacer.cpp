// ProbePacer: scalable probing (§4.1), single outstanding probe, loss timeout
// at 8 base RTTs, stale/unknown responses, u32 sequence wrap-around, and the
// probing-overhead bound. Scripted timelines with exact values.
#include "probe/probe_pacer.hpp"

#include <gtest/gtest.h>

#include "control/params.hpp"

namespace ufab {
namespace {

constexpr uint64_t kLw = 4096;
constexpr uint32_t kTimeoutRtts = 8;
constexpr Nanos kRtt = 10 * kUs;

TEST(ProbePacer, DueAtFirstDataThenEveryLwBytesAfterResponse) {
  ProbePacer p(kLw, kTimeoutRtts);
  // First data on the path, no response ever: due at once.
  EXPECT_TRUE(p.probe_due(false));
  EXPECT_FALSE(p.has_response());

  const uint32_t s0 = p.on_probe_sent(0, kRtt);
  EXPECT_EQ(s0, 0u);
  EXPECT_TRUE(p.outstanding());
  EXPECT_EQ(p.deadline(), 80 * kUs);
  EXPECT_EQ(p.probe_bytes_sent(), 0u);
  // Single outstanding: not due even with many bytes sent or window-blocked.
  p.on_data_sent(1500);
  p.on_data_sent(9000);
  EXPECT_FALSE(p.probe_due(false));
  EXPECT_FALSE(p.probe_due(true));

  const ResponseVerdict v = p.on_response(s0, 12 * kUs);
  EXPECT_EQ(v.kind, ResponseKind::accepted);
  EXPECT_EQ(v.rtt, 12 * kUs);
  EXPECT_EQ(p.last_rtt(), 12 * kUs);
  EXPECT_FALSE(p.outstanding());
  EXPECT_EQ(p.bytes_since_response(), 0u);
  EXPECT_EQ(p.total_bytes(), 10'500u);

  // L_w = 4096: 4095 bytes after the response -> not due, 4096 -> due.
  p.on_data_sent(4000);
  EXPECT_FALSE(p.probe_due(false));
  p.on_data_sent(95);
  EXPECT_EQ(p.bytes_since_response(), 4095u);
  EXPECT_FALSE(p.probe_due(false));
  p.on_data_sent(1);
  EXPECT_EQ(p.bytes_since_response(), 4096u);
  EXPECT_TRUE(p.probe_due(false));

  const uint32_t s1 = p.on_probe_sent(20 * kUs, kRtt);
  EXPECT_EQ(s1, 1u);
  EXPECT_EQ(p.probe_bytes_sent(), 14'596u);  // the bytes_sent the probe carries
  EXPECT_EQ(p.deadline(), 100 * kUs);
  // Data sent while the probe is in flight still counts toward the next L_w:
  // the counter resets only when the response arrives.
  p.on_data_sent(3000);
  EXPECT_EQ(p.bytes_since_response(), 7096u);
  EXPECT_EQ(p.on_response(s1, 31 * kUs).kind, ResponseKind::accepted);
  EXPECT_EQ(p.last_rtt(), 11 * kUs);
  EXPECT_EQ(p.bytes_since_response(), 0u);
  EXPECT_FALSE(p.probe_due(false));

  EXPECT_EQ(p.probes_sent(), 2u);
  EXPECT_EQ(p.responses(), 2u);
  EXPECT_EQ(p.stale(), 0u);
  EXPECT_EQ(p.unknown(), 0u);
  EXPECT_EQ(p.losses(), 0u);
}

// bytes_until_due: the L_w rule as a byte threshold (VmPair keeps it on its
// first line): 0 before the first response and after a loss, L_w less the
// bytes since the last response otherwise, and probe_due(false, u) is
// exactly u >= it while nothing is outstanding.
TEST(ProbePacer, BytesUntilDueIsTheLwRuleAsAThreshold) {
  ProbePacer p(kLw, kTimeoutRtts);
  EXPECT_EQ(p.bytes_until_due(), 0u);  // no response yet: due at once
  const uint32_t s0 = p.on_probe_sent(0, kRtt);
  p.on_data_sent(1000);
  ASSERT_EQ(p.on_response(s0, 12 * kUs).kind, ResponseKind::accepted);
  EXPECT_EQ(p.bytes_until_due(), 4096u);  // nothing since the response
  p.on_data_sent(1500);
  EXPECT_EQ(p.bytes_until_due(), 2596u);
  for (const uint64_t u : {0u, 2595u, 2596u, 2597u, 100000u})
    EXPECT_EQ(p.probe_due(false, u), u >= p.bytes_until_due()) << u;
  p.on_data_sent(2596);
  EXPECT_EQ(p.bytes_until_due(), 0u);  // 4096 B since the response
  EXPECT_TRUE(p.probe_due(false));
  p.on_data_sent(5000);
  EXPECT_EQ(p.bytes_until_due(), 0u);  // past L_w: still 0, not a wrapped count
  // A lost probe: due again at once, whatever the bytes.
  p.on_probe_sent(20 * kUs, kRtt);
  ASSERT_TRUE(p.check_timeout(20 * kUs + 8 * kRtt));
  EXPECT_EQ(p.bytes_until_due(), 0u);
  EXPECT_TRUE(p.probe_due(false, 0));
}

TEST(ProbePacer, WindowBlockedMakesProbeDue) {
  ProbePacer p(kLw, kTimeoutRtts);
  const uint32_t s = p.on_probe_sent(0, kRtt);
  ASSERT_EQ(p.on_response(s, 10 * kUs).kind, ResponseKind::accepted);
  // A window of 1000 B < L_w: the pair fills it and blocks at 1000 bytes.
  p.on_data_sent(1000);
  EXPECT_FALSE(p.probe_due(false));
  EXPECT_TRUE(p.probe_due(true));
  p.on_probe_sent(11 * kUs, kRtt);
  EXPECT_FALSE(p.probe_due(true));  // still at most one outstanding
}

TEST(ProbePacer, TimeoutAtExactlyEightBaseRtts) {
  ProbePacer p(kLw, kTimeoutRtts);
  const Nanos t0 = 5 * kUs;
  const uint32_t s = p.on_probe_sent(t0, kRtt);
  const Nanos deadline = t0 + 8 * kRtt;  // 85 us
  EXPECT_EQ(p.deadline(), deadline);
  EXPECT_FALSE(p.check_timeout(t0));
  EXPECT_FALSE(p.check_timeout(deadline - 1));
  EXPECT_TRUE(p.outstanding());
  EXPECT_TRUE(p.check_timeout(deadline));
  EXPECT_FALSE(p.outstanding());
  EXPECT_EQ(p.losses(), 1u);
  // Reported once.
  EXPECT_FALSE(p.check_timeout(deadline));
  EXPECT_FALSE(p.check_timeout(deadline + 100 * kUs));
  EXPECT_EQ(p.losses(), 1u);
  // The late response is stale and changes nothing.
  EXPECT_EQ(p.on_response(s, deadline + 1).kind, ResponseKind::stale);
  EXPECT_FALSE(p.has_response());
  EXPECT_EQ(p.stale(), 1u);
  // After a loss a new probe is due at once, even with no new data.
  p.on_data_sent(0);
  EXPECT_TRUE(p.probe_due(false));
}

TEST(ProbePacer, ResponseOneNanosecondBeforeDeadlineIsAccepted) {
  ProbePacer p(kLw, kTimeoutRtts);
  const uint32_t s = p.on_probe_sent(0, kRtt);
  const ResponseVerdict v = p.on_response(s, 80 * kUs - 1);
  EXPECT_EQ(v.kind, ResponseKind::accepted);
  EXPECT_EQ(v.rtt, 79'999u);
  EXPECT_FALSE(p.check_timeout(80 * kUs));
  EXPECT_EQ(p.losses(), 0u);
}

TEST(ProbePacer, ResponseAtDeadlineIsStaleAndTimeoutStillReportsLoss) {
  ProbePacer p(kLw, kTimeoutRtts);
  const uint32_t s = p.on_probe_sent(0, kRtt);
  // The response and the timer both land at 80 us; the response is processed first.
  EXPECT_EQ(p.on_response(s, 80 * kUs).kind, ResponseKind::stale);
  EXPECT_TRUE(p.outstanding());
  EXPECT_TRUE(p.check_timeout(80 * kUs));
  EXPECT_EQ(p.losses(), 1u);
  EXPECT_EQ(p.responses(), 0u);
}

TEST(ProbePacer, LossAfterResponseReprobesWithoutWaitingForLw) {
  ProbePacer p(kLw, kTimeoutRtts);
  ASSERT_EQ(p.on_response(p.on_probe_sent(0, kRtt), 10 * kUs).kind, ResponseKind::accepted);
  p.on_data_sent(kLw);
  const uint32_t s1 = p.on_probe_sent(20 * kUs, kRtt);
  p.on_data_sent(100);  // 4196 since the response
  ASSERT_TRUE(p.check_timeout(100 * kUs));
  EXPECT_TRUE(p.probe_due(false));
  const uint32_t s2 = p.on_probe_sent(100 * kUs, kRtt);
  EXPECT_EQ(s2, s1 + 1);
  EXPECT_FALSE(p.probe_due(false));  // outstanding again; loss flag cleared by the send
  ASSERT_EQ(p.on_response(s2, 109 * kUs).kind, ResponseKind::accepted);
  EXPECT_FALSE(p.probe_due(false));  // back to the L_w rule
  EXPECT_EQ(p.bytes_since_response(), 0u);
}

TEST(ProbePacer, StaleAndUnknownResponses) {
  ProbePacer p(kLw, kTimeoutRtts, 100);
  const uint32_t a = p.on_probe_sent(0, kRtt);  // 100
  ASSERT_TRUE(p.check_timeout(80 * kUs));
  const uint32_t b = p.on_probe_sent(80 * kUs, kRtt);  // 101
  EXPECT_EQ(a, 100u);
  EXPECT_EQ(b, 101u);

  EXPECT_EQ(p.on_response(a, 85 * kUs).kind, ResponseKind::stale);   // older seq
  EXPECT_EQ(p.on_response(102, 85 * kUs).kind, ResponseKind::unknown);  // never sent
  EXPECT_EQ(p.on_response(99, 85 * kUs).kind, ResponseKind::unknown);   // before the first probe
  EXPECT_EQ(p.on_response(0x9000'0000u, 85 * kUs).kind, ResponseKind::unknown);
  EXPECT_TRUE(p.outstanding());  // none of these touched the outstanding probe

  EXPECT_EQ(p.on_response(b, 90 * kUs).kind, ResponseKind::accepted);
  EXPECT_EQ(p.last_rtt(), 10 * kUs);
  // A duplicate of the accepted response is stale.
  EXPECT_EQ(p.on_response(b, 91 * kUs).kind, ResponseKind::stale);

  EXPECT_EQ(p.probes_sent(), 2u);
  EXPECT_EQ(p.responses(), 1u);
  EXPECT_EQ(p.stale(), 2u);
  EXPECT_EQ(p.unknown(), 3u);
  EXPECT_EQ(p.losses(), 1u);
}

TEST(ProbePacer, SequenceWrapsAround2To32) {
  ProbePacer p(kLw, kTimeoutRtts, 0xFFFF'FFFEu);
  Nanos t = 0;
  const uint32_t s0 = p.on_probe_sent(t, kRtt);
  EXPECT_EQ(s0, 0xFFFF'FFFEu);
  EXPECT_EQ(p.on_response(s0, t += 10 * kUs).kind, ResponseKind::accepted);
  const uint32_t s1 = p.on_probe_sent(t, kRtt);
  EXPECT_EQ(s1, 0xFFFF'FFFFu);
  EXPECT_EQ(p.on_response(s1, t += 10 * kUs).kind, ResponseKind::accepted);
  const uint32_t s2 = p.on_probe_sent(t, kRtt);
  EXPECT_EQ(s2, 0u);
  // Across the wrap: both 0xFFFFFFFE and 0xFFFFFFFF are older than 0.
  EXPECT_TRUE(seq_before(s1, s2));
  EXPECT_TRUE(seq_before(s0, s2));
  EXPECT_FALSE(seq_before(s2, s1));
  EXPECT_EQ(p.on_response(s1, t + 1).kind, ResponseKind::stale);
  EXPECT_EQ(p.on_response(s0, t + 1).kind, ResponseKind::stale);
  EXPECT_EQ(p.on_response(0xFFFF'FFFDu, t + 1).kind, ResponseKind::unknown);  // before the first
  EXPECT_EQ(p.on_response(1u, t + 1).kind, ResponseKind::unknown);            // not yet sent
  EXPECT_EQ(p.on_response(s2, t + 7 * kUs).kind, ResponseKind::accepted);
  EXPECT_EQ(p.last_rtt(), 7 * kUs);
  const uint32_t s3 = p.on_probe_sent(t + 8 * kUs, kRtt);
  EXPECT_EQ(s3, 1u);
  EXPECT_EQ(p.responses(), 3u);
  EXPECT_EQ(p.stale(), 2u);
  EXPECT_EQ(p.unknown(), 2u);
}

TEST(ProbePacer, DefaultsMatchEdgeParams) {
  const EdgeParams ep;
  EXPECT_EQ(ep.probe_every_bytes, 4096u);
  EXPECT_EQ(ep.probe_timeout_rtts, 8u);
  ProbePacer p(ep.probe_every_bytes, ep.probe_timeout_rtts);
  p.on_probe_sent(1 * kMs, 25 * kUs);
  EXPECT_EQ(p.deadline(), 1 * kMs + 200 * kUs);
}

TEST(ProbePacer, OverheadBound) {
  // 5-hop probe: outer 42 + shim 8 + route 2+2*5 + message 32+16*5 = 174 B.
  EXPECT_EQ(probe_frame_bytes(5), 174u);
  EXPECT_EQ(probe_frame_bytes(1), 102u);
  // L_p / (L_p + L_w) at L_w = 4 KB: 174 / 4270 = 4.07% (paper: <= 1.28% with
  // its ~53 B probe).
  EXPECT_DOUBLE_EQ(probe_overhead_bound(174, 4096), 174.0 / 4270.0);
  EXPECT_NEAR(probe_overhead_bound(probe_frame_bytes(5), 4096), 0.040749, 1e-6);
  // The paper's figure: a 53 B probe gives 53 / 4149 = 1.277% <= 1.28%.
  EXPECT_LE(probe_overhead_bound(53, 4096), 0.0128);
  EXPECT_GT(probe_overhead_bound(54, 4096), 0.0128);
  // L_w needed for 1.28% with our 174 B probe: 13,420 B.
  EXPECT_LE(probe_overhead_bound(174, 13'420), 0.0128);
  EXPECT_GT(probe_overhead_bound(174, 13'419), 0.0128);
}

}  // namespace
}  // namespace ufab
