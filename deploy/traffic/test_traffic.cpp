// ufab-traffic's plain-C++ parts: the pacer (constant, on-off, incast), the
// flow spec parser, the payload header, the latency histogram and the sink's
// sequence accounting. Values are hand-computed from the rates.
#include <gtest/gtest.h>

#include <stdexcept>

#include "deploy/traffic/latency_hist.hpp"
#include "deploy/traffic/payload.hpp"
#include "deploy/traffic/profile.hpp"
#include "deploy/traffic/tally.hpp"

namespace ufab::traffic {
namespace {

constexpr uint64_t kUs = 1000, kMs = 1'000'000;

// Polls the pacer every step from 0 to end and sends whenever it is due;
// returns the send times.
std::vector<uint64_t> drive(Pacer& p, uint64_t end, uint64_t step) {
  std::vector<uint64_t> at;
  for (uint64_t t = 0; t < end; t += step)
    while (p.due(t)) {
      p.sent();
      at.push_back(t);
    }
  return at;
}

TEST(Pacer, ConstantRateIsOneFramePerGap) {
  // 8 Mb/s, 1000 B frames: one frame per 1 ms.
  Pacer p(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M,size=1000"));
  const auto at = drive(p, 10 * kMs, 100 * kUs);
  ASSERT_EQ(at.size(), 10u);
  for (size_t i = 0; i < at.size(); ++i) EXPECT_EQ(at[i], i * kMs);
  EXPECT_EQ(p.bytes(), 10'000u);
}

TEST(Pacer, StartAndStopBoundTheFlow) {
  Pacer p(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M,start_ms=3,stop_ms=6"));
  const auto at = drive(p, 10 * kMs, 100 * kUs);
  EXPECT_EQ(at, (std::vector<uint64_t>{3 * kMs, 4 * kMs, 5 * kMs}));
  EXPECT_EQ(p.next_due(6 * kMs), UINT64_MAX);
  EXPECT_EQ(Pacer(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M,start_ms=3")).next_due(0), 3 * kMs);
}

TEST(Pacer, CatchUpAfterAStallIsBounded) {
  Pacer p(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M"));
  ASSERT_TRUE(p.due(0));
  p.sent();
  // Descheduled for 1 s: at most kMaxCatchUpFrames back to back, not 1000.
  size_t n = 0;
  while (p.due(kMs * 1000)) {
    p.sent();
    ++n;
  }
  EXPECT_EQ(n, Pacer::kMaxCatchUpFrames);
}

TEST(Pacer, OnOffSendsOnlyInOnPhases) {
  // on 2 ms, off 3 ms, 8 Mb/s: frames at 0, 1 ms of every 5 ms cycle.
  Pacer p(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M,pattern=onoff,on_ms=2,off_ms=3,stop_ms=20"));
  const auto at = drive(p, 25 * kMs, 100 * kUs);
  EXPECT_EQ(at, (std::vector<uint64_t>{0, 1 * kMs, 5 * kMs, 6 * kMs, 10 * kMs, 11 * kMs, 15 * kMs, 16 * kMs}));
  Pacer q(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M,pattern=onoff,on_ms=2,off_ms=3,stop_ms=20"));
  drive(q, 2 * kMs + 1, 100 * kUs);
  EXPECT_EQ(q.next_due(2 * kMs + 1), 5 * kMs);  // in the off phase: the next on phase
}

TEST(Pacer, IncastSendsTheBurstEveryPeriod) {
  // 2500 B per 10 ms in 1000 B frames: 3 frames (the last one crosses the
  // burst size), at 8 Mb/s within the burst; 5 periods in 50 ms.
  Pacer p(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M,pattern=incast,period_ms=10,burst_bytes=2500,stop_ms=50"));
  const auto at = drive(p, 60 * kMs, 100 * kUs);
  ASSERT_EQ(at.size(), 15u);
  EXPECT_EQ(p.periods(), 5u);
  for (size_t k = 0; k < 5; ++k)
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(at[k * 3 + i], k * 10 * kMs + i * kMs);
  Pacer q(parse_flow("src=1.1.1.1,dst=2.2.2.2,rate=8M,pattern=incast,period_ms=10,burst_bytes=2500,stop_ms=50"));
  drive(q, 3 * kMs, 100 * kUs);
  EXPECT_EQ(q.next_due(3 * kMs), 10 * kMs);  // burst done: the next period
}

TEST(FlowSpec, ParsesEveryKey) {
  const FlowSpec f = parse_flow(
      "port=2,tenant=100,flow=7,src=192.168.0.1,dst=192.168.0.2,smac=02:00:00:00:0a:01,dmac=02:00:00:00:0b:02,"
      "sport=4000,dport=5000,size=1500,rate=2.5G,pattern=onoff,start_ms=1.5,stop_ms=9,on_ms=1,off_ms=2");
  EXPECT_EQ(f.port, 2);
  EXPECT_EQ(f.tenant, 100u);
  EXPECT_EQ(f.flow, 7u);
  EXPECT_EQ(f.src_ip, 0xc0a80001u);
  EXPECT_EQ(f.dst_ip, 0xc0a80002u);
  EXPECT_EQ(f.dst_mac[5], 2);
  EXPECT_EQ(f.src_port, 4000);
  EXPECT_EQ(f.frame_bytes, 1500);
  EXPECT_EQ(f.rate_bps, 2'500'000'000u);
  EXPECT_EQ(f.pattern, Pattern::onoff);
  EXPECT_EQ(f.start_ns, 1'500'000u);
  EXPECT_EQ(f.stop_ns, 9 * kMs);
}

TEST(FlowSpec, RejectsBadInputNamingTheKey) {
  auto msg = [](const char* s) {
    try {
      parse_flow(s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(msg("src=1.1.1.1,dst=2.2.2.2").find("rate"), std::string::npos);
  EXPECT_NE(msg("src=1.1.1.1,dst=2.2.2.2,rate=1M,colour=red").find("colour"), std::string::npos);
  EXPECT_NE(msg("src=1.1.1,dst=2.2.2.2,rate=1M").find("src=1.1.1"), std::string::npos);
  EXPECT_NE(msg("src=1.1.1.1,dst=2.2.2.2,rate=1M,size=20").find("size"), std::string::npos);
  EXPECT_NE(msg("src=1.1.1.1,dst=2.2.2.2,rate=1M,pattern=onoff").find("on_ms"), std::string::npos);
  EXPECT_NE(msg("src=1.1.1.1,dst=2.2.2.2,rate=1M,pattern=incast,period_ms=1").find("burst_bytes"), std::string::npos);
  EXPECT_NE(msg("src=1.1.1.1,dst=2.2.2.2,rate=1M,start_ms=5,stop_ms=5").find("stop_ms"), std::string::npos);
  EXPECT_NE(msg("src=1.1.1.1,dst=2.2.2.2,rate=1M,dmac=02:00").find("dmac"), std::string::npos);
}

TEST(Payload, HeaderRoundTripsBigEndian) {
  uint8_t buf[kPayloadHeaderBytes + 4] = {};
  write_header(buf, PayloadHeader{0x123456, 9, 1, 2});
  write_seq_ts(buf, 0x0102030405060708ull, 77);
  EXPECT_EQ(buf[0], 0x75);  // 'u'
  EXPECT_EQ(buf[12], 0x01);
  EXPECT_EQ(buf[19], 0x08);
  PayloadHeader h;
  ASSERT_TRUE(read_header(buf, h));
  EXPECT_EQ(h.tenant, 0x123456u);
  EXPECT_EQ(h.flow, 9u);
  EXPECT_EQ(h.seq, 0x0102030405060708ull);
  EXPECT_EQ(h.tx_ns, 77u);
  buf[0] = 0;
  EXPECT_FALSE(read_header(buf, h));
  EXPECT_FALSE(read_header(std::span<const uint8_t>(buf, 10), h));
}

TEST(LatencyHist, ExactBelow64AndWithin1Over32Above) {
  for (uint64_t v = 0; v < 64; ++v) EXPECT_EQ(LatencyHist::value_of(LatencyHist::bucket_of(v)), v);
  for (uint64_t v : {64ull, 100ull, 1000ull, 12345ull, 999'999ull, 1ull << 40}) {
    const double got = static_cast<double>(LatencyHist::value_of(LatencyHist::bucket_of(v)));
    EXPECT_LE(std::abs(got - static_cast<double>(v)) / static_cast<double>(v), 1.0 / 32) << v;
  }
  EXPECT_LT(LatencyHist::bucket_of(~0ull), LatencyHist::kBuckets);
}

TEST(LatencyHist, Percentiles) {
  LatencyHist h;
  EXPECT_EQ(h.percentile(0.5), 0u);
  for (uint64_t v = 1; v <= 1000; ++v) h.add(v * 1000);  // 1 us .. 1 ms
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.max(), 1'000'000u);
  EXPECT_NEAR(static_cast<double>(h.percentile(0.5)), 500'000, 500'000 / 32.0);
  EXPECT_NEAR(static_cast<double>(h.percentile(0.99)), 990'000, 990'000 / 32.0);
  EXPECT_EQ(h.percentile(1.0), 1'000'000u);
  EXPECT_DOUBLE_EQ(h.mean(), 500'500.0);
}

TEST(Tally, LossAndLateArrivalsPerFlow) {
  Tally t(kMs);
  auto rx = [&](uint32_t tenant, uint32_t src, uint32_t flow, uint64_t seq) {
    t.on_rx(PayloadHeader{tenant, flow, seq, 100}, src, 1000, seq * kUs, 150);
  };
  // Flow 1 of src 1: 0 1 3 4 (2 lost); flow 1 of src 2 (another flow): 0 2 1 (1 late, none lost).
  for (uint64_t s : {0, 1, 3, 4}) rx(100, 1, 1, s);
  for (uint64_t s : {0, 2, 1}) rx(100, 2, 1, s);
  rx(200, 1, 1, 5);  // first frame seen is seq 5: 5 lost (the sink started late or they were dropped)
  t.on_tx(100, 1000, 0);
  ASSERT_EQ(t.tenants().size(), 2u);
  const TenantTally& a = t.tenants()[0];
  EXPECT_EQ(a.rx_pkts, 7u);
  EXPECT_EQ(a.rx_bytes, 7000u);
  EXPECT_EQ(a.lost, 1u);  // 2 skipped on src 1, 1 skipped then late on src 2 -> 1 + 1 - 1
  EXPECT_EQ(a.late, 1u);
  EXPECT_EQ(a.tx_pkts, 1u);
  EXPECT_EQ(a.latency.max(), 50u);
  EXPECT_EQ(t.tenants()[1].lost, 5u);
  EXPECT_EQ(a.bins.size(), 1u);  // every frame at < 1 ms
  EXPECT_EQ(a.bins[0].rx_bytes, 7000u);
}

}  // namespace
}  // namespace ufab::traffic
