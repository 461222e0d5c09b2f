// C simulation of fpga/hls/window_eqn3 against the core library's
// ufab::window_bytes and ufab::path_window (control/window.cpp) over random
// inputs: |error| <= w * (2^-20 + 1/load) + 2 bytes (the fixed point rounds
// C_l*T, tx_l*T and the result down to whole bytes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "control/window.hpp"
#include "fpga/hls/window_eqn3.hpp"

namespace {

using ufab::hls::LinkFx;
using ufab::hls::Token;

struct Case {
  LinkFx fx;
  ufab::LinkView lv;
};

Case random_link(std::mt19937_64& rng) {
  Case c;
  const uint64_t caps[] = {0, 1'250'000'000ull, 3'125'000'000ull, 12'500'000'000ull, 50'000'000'000ull};
  c.fx.cap_Bps = caps[rng() % 5];
  c.fx.tx_Bps = rng() % 8 == 0 ? 0 : rng() % (c.fx.cap_Bps + 1);
  c.fx.queue_bytes = rng() % 4 == 0 ? 0 : rng() % 2'000'000;
  // tokens: integers and Q16.16 fractions (exactly representable both ways)
  c.fx.phi_tokens = Token::from_raw((rng() % 4 == 0 ? 0 : 1 + rng() % 4000) << 12);
  c.fx.window_bytes = rng() % 5 == 0 ? 0 : rng() % 10'000'000;
  c.lv.cap_Bps = static_cast<double>(c.fx.cap_Bps);
  c.lv.tx_Bps = static_cast<double>(c.fx.tx_Bps);
  c.lv.queue_bytes = static_cast<double>(c.fx.queue_bytes);
  c.lv.phi_tokens = static_cast<double>(c.fx.phi_tokens.raw) / 65536.0;
  c.lv.window_bytes = static_cast<double>(c.fx.window_bytes);
  return c;
}

// |fx - ref| <= ref * (2^-20 + 1/load) + 2 bytes: C_l*T and tx_l*T are
// rounded down to whole bytes (one byte of the load is 1/load relative; one
// byte of C_l*T and the final floor are the 2 bytes), the Q.32 share adds 2^-32.
void expect_close(uint64_t fx, double ref, double load) {
  if (std::isinf(ref)) {
    EXPECT_EQ(fx, ufab::hls::kNoConstraint);
    return;
  }
  const double rel = 0x1p-20 + 1.0 / std::max(load, 1.0);
  EXPECT_LE(std::fabs(static_cast<double>(fx) - ref), ref * rel + 2.0) << "ref " << ref << " fx " << fx;
}

TEST(HlsWindowEqn3, LinkMatchesWindowBytes) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const Case c = random_link(rng);
    const uint64_t T = 1000 + rng() % 100'000;  // 1-100 us base RTT
    const Token phi = Token::from_raw((1 + rng() % 400) << 12);
    const uint64_t prev = rng() % 3 == 0 ? 0 : rng() % 5'000'000;
    const double ref = ufab::window_bytes(static_cast<double>(phi.raw) / 65536.0, static_cast<double>(prev), c.lv,
                                          static_cast<ufab::Nanos>(T));
    const double load = c.lv.tx_Bps * static_cast<double>(T) * 1e-9 + c.lv.queue_bytes;
    expect_close(ufab::hls::window_link_fx(phi, prev, c.fx, T), ref, load);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(HlsWindowEqn3, PathMatchesPathWindow) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50000; ++i) {
    const int n = 1 + static_cast<int>(rng() % 5);
    std::vector<Case> cs;
    std::vector<LinkFx> fx;
    std::vector<ufab::LinkView> lv;
    std::vector<uint64_t> prev_fx;
    std::vector<double> prev;
    double min_load = 1e300;
    const uint64_t T = 1000 + rng() % 100'000;
    for (int k = 0; k < n; ++k) {
      const Case c = random_link(rng);
      fx.push_back(c.fx);
      lv.push_back(c.lv);
      const uint64_t p = rng() % 2'000'000;
      prev_fx.push_back(p);
      prev.push_back(static_cast<double>(p));
      const double load = c.lv.tx_Bps * static_cast<double>(T) * 1e-9 + c.lv.queue_bytes;
      if (c.fx.cap_Bps != 0 && load > 0) min_load = std::min(min_load, load);
    }
    const Token phi = Token::from_raw((1 + rng() % 400) << 12);
    const ufab::PathWindow ref =
        ufab::path_window(static_cast<double>(phi.raw) / 65536.0, lv, prev, static_cast<ufab::Nanos>(T));
    expect_close(ufab::hls::path_window_fx(phi, fx.data(), prev_fx.data(), n, T), ref.w, min_load);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(HlsWindowEqn3, Guards) {
  LinkFx l;
  l.cap_Bps = 12'500'000'000ull;  // 100 Gb/s
  const uint64_t T = 24'000;      // 24 us: C*T = 300 KB
  EXPECT_EQ(ufab::hls::window_link_fx(Token::from_int(1), 0, l, T), 300'000u);  // idle link
  l.tx_Bps = 12'500'000'000ull;
  l.phi_tokens = Token::from_int(4);
  EXPECT_EQ(ufab::hls::window_link_fx(Token::from_int(1), 0, l, T), 75'000u);    // W_l = 0: r^l * T
  EXPECT_EQ(ufab::hls::window_link_fx(Token::from_int(0), 0, l, T), 0u);
  l.cap_Bps = 0;
  EXPECT_EQ(ufab::hls::window_link_fx(Token::from_int(1), 0, l, T), ufab::hls::kNoConstraint);
  EXPECT_EQ(ufab::hls::path_window_fx(Token::from_int(1), &l, nullptr, 0, 0), 0u);  // T = 0
}

}  // namespace
