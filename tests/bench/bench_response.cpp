// One probe response at the edge: the window update over a 5-hop path
// (paper §3.4 Eqn 3 + two-stage admission), alone and as the full cycle the
// dataplane runs per response (decode the wire bytes, VmPair::on_message,
// build the next probe). Goal (issue 2): < 200 ns per response.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <vector>

#include "control/vm_pair.hpp"
#include "control/window.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"

using namespace ufab;

namespace {

constexpr Nanos kT = 24 * kUs;

wire::HopRecord stamped(uint32_t i) {
  wire::HopRecord h;
  h.w = wire::window_to_wire(40000 + 1000 * i);
  h.phi = wire::tokens_to_wire(8 + i);
  h.tx = wire::tx_to_wire(9.0e9);
  h.q = wire::queue_to_wire(3000 * i);
  h.cap_code = 5;  // 10 Gb/s
  h.flags = wire::kHopStamped;
  return h;
}

void BM_Eqn3PathWindow5Hop(benchmark::State& st) {
  std::array<LinkView, 5> links;
  for (size_t i = 0; i < 5; ++i)
    links[i] = LinkView{1.1875e9, 1.1e9 + 1e7 * static_cast<double>(i), 3000.0 * static_cast<double>(i), 8.0 + i, 40000};
  std::array<double, 5> own{}, per{};
  double phi = 2;
  for (auto _ : st) {
    benchmark::DoNotOptimize(phi);
    const PathWindow p = path_window(phi, links, own, kT, per);
    benchmark::DoNotOptimize(p);
    own = per;
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}
BENCHMARK(BM_Eqn3PathWindow5Hop);

// A pair on one 5-hop path, joined at t = 0 (a single path joins at once).
VmPair joined_pair(const EdgeParams& prm, uint32_t id, double token) {
  const std::array<uint8_t, 1> hops{5};
  VmPair pair(prm, id, kT, hops, nullptr, id);
  pair.set_assigned_token(token);
  pair.poll(0, true);
  return pair;
}

// next_message (probe) -> switch-stamped response -> on_message, in memory.
void BM_ProbeResponseCycle5Hop(benchmark::State& st) {
  EdgeParams prm;
  VmPair pair = joined_pair(prm, 7, 2);
  Nanos now = 0;
  std::array<wire::HopRecord, 5> recs;
  for (uint32_t i = 0; i < 5; ++i) recs[i] = stamped(i);
  wire::Message m;
  int path = 0;
  for (auto _ : st) {
    now += 100;
    pair.on_data_sent(4096, now);  // L_w bytes: the next probe is due
    if (!pair.next_message(now, true, m, path)) {
      st.SkipWithError("no probe due");
      break;
    }
    for (size_t i = 0; i < 5; ++i) m.hop[i] = recs[i];
    const auto res = pair.on_message(wire::reflect(m, kWireUnbound), now + 50);
    benchmark::DoNotOptimize(res);
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}
BENCHMARK(BM_ProbeResponseCycle5Hop);

// As above, with the response decoded from its wire bytes.
void BM_ResponseFromWire5Hop(benchmark::State& st) {
  EdgeParams prm;
  VmPair pair = joined_pair(prm, 7, 2);
  Nanos now = 0;
  std::array<uint8_t, 256> buf{};
  wire::Message m, in;
  int path = 0;
  for (auto _ : st) {
    now += 100;
    pair.on_data_sent(4096, now);  // L_w bytes: the next probe is due
    if (!pair.next_message(now, true, m, path)) {
      st.SkipWithError("no probe due");
      break;
    }
    for (uint32_t i = 0; i < 5; ++i) m.hop[i] = stamped(i);
    const size_t n = wire::encode_message(wire::reflect(m, kWireUnbound), buf);
    if (wire::decode_message(std::span<const uint8_t>(buf.data(), n), in) != wire::WireError::ok) {
      st.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(pair.on_message(in, now + 50));
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}
BENCHMARK(BM_ResponseFromWire5Hop);

// Only the response: decode its wire bytes and VmPair::on_message (Eqn 3,
// admission, acks). 64 pairs each get a probe and its stamped response
// outside the timed region; the timed region (manual time) handles the 64
// responses. Items = responses, so items_per_second gives ns per response.
void BM_ResponseHandled5Hop(benchmark::State& st) {
  constexpr size_t kPairs = 64;
  EdgeParams prm;
  std::vector<VmPair> pairs;
  pairs.reserve(kPairs);
  for (size_t i = 0; i < kPairs; ++i) pairs.push_back(joined_pair(prm, static_cast<uint32_t>(i + 1), 1 + static_cast<double>(i % 4)));
  std::vector<std::array<uint8_t, 128>> bufs(kPairs);
  std::vector<size_t> lens(kPairs);
  Nanos now = 0;
  wire::Message m, in;
  int path = 0;
  for (auto _ : st) {
    now += 1000;
    for (size_t i = 0; i < kPairs; ++i) {
      pairs[i].on_data_sent(4096, now);
      pairs[i].next_message(now, true, m, path);
      for (uint32_t h = 0; h < 5; ++h) m.hop[h] = stamped(h + static_cast<uint32_t>(i % 3));
      lens[i] = wire::encode_message(wire::reflect(m, kWireUnbound), bufs[i]);
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < kPairs; ++i) {
      if (wire::decode_message(std::span<const uint8_t>(bufs[i].data(), lens[i]), in) != wire::WireError::ok) {
        st.SkipWithError("decode failed");
        break;
      }
      benchmark::DoNotOptimize(pairs[i].on_message(in, now + 50));
    }
    st.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * kPairs));
}
BENCHMARK(BM_ResponseHandled5Hop)->UseManualTime();  // time of the 64 responses only

}  // namespace
