// Token assignment: Algorithm 1 (TokenAssignment / TokenAdmission) and
// Algorithm 2 (multipath), paper appendices E and F. All expected values are
// worked out by hand in the comments; "bar" is phi-bar of the listings.
#include "control/token_assignment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace ufab {
namespace {

constexpr double kBu = 125e6;          // B_u: 1 Gb/s per token, in bytes/s
constexpr double kPhi = 9.0;           // phi_alpha of every VM in the Figure 21 tests
constexpr double kEps = 0.3;           // epsilon: demand of a1->a4 in Figure 21b, tokens
constexpr double kBacklog = 100 * kBu; // a demand far above any share (100 tokens)
constexpr double kTol = 1e-12;

PairToken backlogged(double phi_D = kTokenUnbound) { return {kBacklog, 0, phi_D}; }
PairToken demand_tokens(double tokens, double phi_D = kTokenUnbound) {
  return {tokens * kBu, 0, phi_D};
}
PairToken request(double phi_S) { return {0, phi_S, 0}; }

std::vector<uint32_t> g_scratch;  // reused across rounds, as on the control thread

void sender_round(double phi, std::span<PairToken> p) { assign_tokens(phi, kBu, p, g_scratch); }
void receiver_round(double phi, std::span<PairToken> p) { admit_tokens(phi, p, g_scratch); }

// ---------------------------------------------------------------------------
// Figure 21a: a1 -> {a4, a5, a6}, a2 -> a6, all backlogged, phi_alpha = 9.
TEST(TokenAssignment, Figure21aTwoRounds) {
  std::array<PairToken, 3> a1{backlogged(), backlogged(), backlogged()};  // ->a4,a5,a6
  std::array<PairToken, 1> a2{backlogged()};                              // ->a6

  // Round 1, senders. a1: bar = 9/3 = 3, no demand or receiver bound -> 3 each.
  // a2: bar = 9/1 = 9 -> 9.
  sender_round(kPhi, a1);
  sender_round(kPhi, a2);
  for (const PairToken& p : a1) EXPECT_DOUBLE_EQ(p.phi_S, 3.0);  // phi/3
  EXPECT_DOUBLE_EQ(a2[0].phi_S, 9.0);                             // phi

  // Round 1, receivers. a4 and a5 each see one request of 3: bar = 9, 3 < 9 ->
  // UNBOUND. a6 sees {3 from a1, 9 from a2}: bar = 9/2 = 4.5; sorted 3, 9;
  // 3 < 4.5 -> UNBOUND, N' = 1, bar = 4.5 + (4.5 - 3)/(2 - 1) = 6;
  // 9 >= 6 -> admit 6 (= 2phi/3).
  std::array<PairToken, 1> a4{request(a1[0].phi_S)};
  std::array<PairToken, 1> a5{request(a1[1].phi_S)};
  std::array<PairToken, 2> a6{request(a1[2].phi_S), request(a2[0].phi_S)};
  receiver_round(kPhi, a4);
  receiver_round(kPhi, a5);
  receiver_round(kPhi, a6);
  EXPECT_EQ(a4[0].phi_D, kTokenUnbound);
  EXPECT_EQ(a5[0].phi_D, kTokenUnbound);
  EXPECT_EQ(a6[0].phi_D, kTokenUnbound);
  EXPECT_DOUBLE_EQ(a6[1].phi_D, 6.0);
  // The senders use min(assigned, admitted): a1->a6 3 (phi/3), a2->a6 6.
  EXPECT_DOUBLE_EQ(effective_token(a1[2].phi_S, a6[0].phi_D), 3.0);
  EXPECT_DOUBLE_EQ(effective_token(a2[0].phi_S, a6[1].phi_D), 6.0);

  // Responses reach the senders.
  a1[0].phi_D = a4[0].phi_D;
  a1[1].phi_D = a5[0].phi_D;
  a1[2].phi_D = a6[0].phi_D;
  a2[0].phi_D = a6[1].phi_D;

  // Round 2, senders. a1 unchanged (all UNBOUND): 3, 3, 3. a2: bar = 9, Y = 0;
  // phi_D = 6 < 9 -> N' = 1 = N_S (division guarded), phi_S = 6 (2phi/3).
  sender_round(kPhi, a1);
  sender_round(kPhi, a2);
  for (const PairToken& p : a1) EXPECT_DOUBLE_EQ(p.phi_S, 3.0);
  EXPECT_DOUBLE_EQ(a2[0].phi_S, 6.0);

  // Round 2, a6: {3, 6}: bar 4.5 -> 3 UNBOUND, bar 6; 6 >= 6 -> 6. Fixed point;
  // a6's tokens 3 + 6 = 9 are all in use.
  a6[0] = request(a1[2].phi_S);
  a6[1] = request(a2[0].phi_S);
  receiver_round(kPhi, a6);
  EXPECT_EQ(a6[0].phi_D, kTokenUnbound);
  EXPECT_DOUBLE_EQ(a6[1].phi_D, 6.0);
  EXPECT_DOUBLE_EQ(effective_token(a1[2].phi_S, a6[0].phi_D) +
                       effective_token(a2[0].phi_S, a6[1].phi_D),
                   kPhi);
}

// Figure 21b: from the fixed point of 21a, a1->a4's demand drops to eps.
// The paper's text prints (phi+eps)/2 for a1->a5 and a1->a6; that would give
// a1 3 + (phi+eps) > phi + Y tokens. Algorithm 1 gives (phi-eps)/2, which is
// what we check; a2->a6 then adapts to (phi+eps)/2 as the text says.
TEST(TokenAssignment, Figure21bInsufficientDemand) {
  std::array<PairToken, 3> a1{demand_tokens(kEps), backlogged(), backlogged()};
  std::array<PairToken, 1> a2{backlogged(6.0)};  // 21a fixed point: a6 admitted 6

  // Round 3, a1: bar = 3; a1->a4: 3 > 0.3 -> Y = 2.7, phi_S = 3 (line 7),
  // N' = 1. Line 9: bar = 3 + 2.7/2 = 4.35 = (phi - eps)/2. No receiver bounds.
  sender_round(kPhi, a1);
  EXPECT_DOUBLE_EQ(a1[0].phi_S, 3.0);  // keeps the fair share
  EXPECT_NEAR(a1[1].phi_S, 4.35, kTol);
  EXPECT_NEAR(a1[2].phi_S, 4.35, kTol);
  EXPECT_NEAR(a1[1].phi_S, (kPhi - kEps) / 2, kTol);
  // a1 hands out phi + Y = 9 + 2.7 = 11.7; demand-accounted 0.3 + 2*4.35 = 9.
  EXPECT_NEAR(a1[0].phi_S + a1[1].phi_S + a1[2].phi_S, 11.7, kTol);
  EXPECT_NEAR(kEps + a1[1].phi_S + a1[2].phi_S, kPhi, kTol);

  // Round 3, a2: phi_D = 6 < 9 -> 6.
  sender_round(kPhi, a2);
  EXPECT_DOUBLE_EQ(a2[0].phi_S, 6.0);

  // Round 3, a6: {4.35, 6}: bar = 4.5; 4.35 < 4.5 -> UNBOUND, N' = 1,
  // bar = 4.5 + 0.15/1 = 4.65; 6 >= 4.65 -> 4.65 = (phi + eps)/2.
  std::array<PairToken, 2> a6{request(a1[2].phi_S), request(a2[0].phi_S)};
  receiver_round(kPhi, a6);
  EXPECT_EQ(a6[0].phi_D, kTokenUnbound);
  EXPECT_NEAR(a6[1].phi_D, 4.65, kTol);
  EXPECT_NEAR(a6[1].phi_D, (kPhi + kEps) / 2, kTol);

  // Round 4, a2: phi_D = 4.65 < 9 -> phi_S = 4.65 = (phi + eps)/2.
  a2[0].phi_D = a6[1].phi_D;
  a1[2].phi_D = a6[0].phi_D;
  sender_round(kPhi, a2);
  EXPECT_NEAR(a2[0].phi_S, (kPhi + kEps) / 2, kTol);

  // Round 4, a6: {4.35, 4.65}: bar 4.5 -> 4.35 UNBOUND, bar 4.65; 4.65 >= 4.65
  // -> 4.65. Fixed point; a6 uses 4.35 + 4.65 = 9.
  a6[0] = request(a1[2].phi_S);
  a6[1] = request(a2[0].phi_S);
  receiver_round(kPhi, a6);
  EXPECT_EQ(a6[0].phi_D, kTokenUnbound);
  EXPECT_NEAR(a6[1].phi_D, 4.65, kTol);
  EXPECT_NEAR(effective_token(a1[2].phi_S, a6[0].phi_D) +
                  effective_token(a2[0].phi_S, a6[1].phi_D),
              kPhi, kTol);

  // a1 round 4 is unchanged: 3, 4.35, 4.35.
  sender_round(kPhi, a1);
  EXPECT_DOUBLE_EQ(a1[0].phi_S, 3.0);
  EXPECT_NEAR(a1[2].phi_S, 4.35, kTol);
}

// ---------------------------------------------------------------------------
TEST(TokenAssignment, AllDemandBounded) {
  // phi = 9, demands 1, 2, 0 tokens: bar = 3 > each -> Y = 2 + 1 + 3 = 6,
  // N' = 3 = N_S (line 9 guarded). Everyone keeps 3 (line 7). The receiver
  // bound phi_D = 1 on pair 0 is not consulted (phi_S already set, line 12),
  // but the sender uses min(3, 1) = 1.
  std::array<PairToken, 3> p{demand_tokens(1, 1.0), demand_tokens(2), demand_tokens(0)};
  sender_round(kPhi, p);
  for (const PairToken& q : p) {
    EXPECT_TRUE(std::isfinite(q.phi_S));
    EXPECT_DOUBLE_EQ(q.phi_S, 3.0);
  }
  EXPECT_DOUBLE_EQ(effective_token(p[0].phi_S, p[0].phi_D), 1.0);
}

TEST(TokenAssignment, DemandAtFairShareIsNotBounded) {
  // Line 5 is strict: demand 3 = bar 3 is not demand-bounded. phi = 9 over
  // {demand 3, demand 1, backlogged}: pair 1 is bounded, Y = 2, N' = 1,
  // bar = 3 + 2/2 = 4 for pairs 0 and 2.
  std::array<PairToken, 3> p{demand_tokens(3), demand_tokens(1), backlogged()};
  sender_round(kPhi, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 4.0);
  EXPECT_DOUBLE_EQ(p[1].phi_S, 3.0);
  EXPECT_DOUBLE_EQ(p[2].phi_S, 4.0);
}

TEST(TokenAssignment, SinglePair) {
  // Backlogged, unbound: bar = 9 -> 9.
  std::array<PairToken, 1> p{backlogged()};
  sender_round(kPhi, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 9.0);
  // Receiver admitted 4 < 9: N' = 1 = N_S, guarded; phi_S = 4.
  p[0] = backlogged(4.0);
  sender_round(kPhi, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 4.0);
  // Demand of 2 tokens: line 7 keeps bar = 9 (guarded line 9).
  p[0] = demand_tokens(2);
  sender_round(kPhi, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 9.0);
  // Receiver: one request of 12 >= 9 -> admit 9; one of 5 < 9 -> UNBOUND.
  std::array<PairToken, 1> r{request(12)};
  receiver_round(kPhi, r);
  EXPECT_DOUBLE_EQ(r[0].phi_D, 9.0);
  r[0] = request(5);
  receiver_round(kPhi, r);
  EXPECT_EQ(r[0].phi_D, kTokenUnbound);
}

TEST(TokenAssignment, EmptySets) {
  std::vector<PairToken> none;
  std::vector<uint32_t> scratch;
  assign_tokens(kPhi, kBu, none, scratch);
  admit_tokens(kPhi, none, scratch);
  std::vector<PathToken> no_paths;
  assign_path_tokens(kPhi, kBu, no_paths);
  EXPECT_TRUE(scratch.empty());
}

TEST(TokenAssignment, UnboundHandling) {
  EXPECT_DOUBLE_EQ(effective_token(5, kTokenUnbound), 5.0);
  EXPECT_DOUBLE_EQ(effective_token(5, 3), 3.0);
  EXPECT_DOUBLE_EQ(effective_token(2, 3), 2.0);

  // Sender, phi = 12, 4 backlogged pairs with phi_D = UNBOUND, 1, 5, UNBOUND.
  // bar = 3, Y = 0. UNBOUND pairs are never receiver-bounded. Sorted finite:
  // 1, 5. 1 < 3 -> phi_S = 1, N' = 1, bar = 3 + (3 - 1)/3 = 11/3. 5 >= 11/3
  // -> not bounded. Others get 11/3; sum 1 + 3 * 11/3 = 12.
  std::array<PairToken, 4> p{backlogged(), backlogged(1), backlogged(5), backlogged()};
  sender_round(12, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 11.0 / 3);
  EXPECT_DOUBLE_EQ(p[1].phi_S, 1.0);
  EXPECT_DOUBLE_EQ(p[2].phi_S, 11.0 / 3);
  EXPECT_DOUBLE_EQ(p[3].phi_S, 11.0 / 3);
  EXPECT_DOUBLE_EQ(effective_token(p[2].phi_S, p[2].phi_D), 11.0 / 3);

  // Receiver, phi = 9, requests 1, 2, 3 all below the growing fair share:
  // bar 3: 1 < 3 UNBOUND, bar = 3 + 2/2 = 4; 2 < 4 UNBOUND, bar = 4 + 2/1 = 6;
  // 3 < 6 UNBOUND, N' = 3 = N_P (guarded).
  std::array<PairToken, 3> r{request(3), request(1), request(2)};
  receiver_round(kPhi, r);
  for (const PairToken& q : r) EXPECT_EQ(q.phi_D, kTokenUnbound);
}

// Before a VM's admission round includes a new incoming pair, the receiver
// answers the equal share of its phi over the pairs now requesting tokens
// (docs/design.md §10). The 14-to-1 incast of Fig. 12 with phi = 7 per VM:
// the k-th sender to arrive, asking for its whole 7 tokens, gets 7/k.
TEST(TokenAssignment, ProvisionalAdmissionBeforeTheFirstRound) {
  EXPECT_EQ(provisional_admission(7, 1, 7), kTokenUnbound);  // alone: 7 <= 7/1
  EXPECT_DOUBLE_EQ(provisional_admission(7, 2, 7), 3.5);
  EXPECT_DOUBLE_EQ(provisional_admission(7, 14, 7), 0.5);
  EXPECT_EQ(provisional_admission(7, 14, 0.5), kTokenUnbound);   // at the share
  EXPECT_EQ(provisional_admission(7, 14, 0.25), kTokenUnbound);  // below it: use what you asked
  EXPECT_DOUBLE_EQ(provisional_admission(7, 0, 9), 7.0);          // n = 0 counts as 1
  EXPECT_DOUBLE_EQ(provisional_admission(0, 3, 1), 0.0);          // a VM without tokens admits none
  // What the 14 first responses hand out in all: 7 * (1 + 1/2 + ... + 1/14)
  // (the first is UNBOUND = its 7), against 14 * 7 = 98 when every answer
  // is UNBOUND.
  double sum = 0;
  for (uint32_t k = 1; k <= 14; ++k) sum += effective_token(7, provisional_admission(7, k, 7));
  EXPECT_NEAR(sum, 7 * 3.2515623, 1e-6);
}

TEST(TokenAssignment, ReceiverBoundsAreWaterFilledInAscendingOrder) {
  // phi = 9, backlogged, phi_D = 3.4, 2, UNBOUND (given out of order).
  // bar = 3. Sorted: 2, 3.4. 2 < 3 -> phi_S = 2, N' = 1, bar = 3 + 1/2 = 3.5.
  // 3.4 < 3.5 -> phi_S = 3.4, N' = 2, bar = 3.5 + 0.1/1 = 3.6. Pair 2: 3.6.
  // (Unsorted, 3.4 would have been tested against bar 3 and missed.)
  std::array<PairToken, 3> p{backlogged(3.4), backlogged(2), backlogged()};
  sender_round(kPhi, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 3.4);
  EXPECT_DOUBLE_EQ(p[1].phi_S, 2.0);
  EXPECT_NEAR(p[2].phi_S, 3.6, kTol);
}

TEST(TokenAssignment, DemandAndReceiverBoundsTogether) {
  // phi = 12: p0 demand 1 token; p1 phi_D 2; p2 UNBOUND; p3 phi_D 6.
  // bar = 3; p0: Y = 2, phi_S = 3, N' = 1; line 9: bar = 3 + 2/3 = 11/3.
  // Sorted candidates p1 (2), p3 (6): 2 < 11/3 -> phi_S = 2, N' = 2,
  // bar = 11/3 + (11/3 - 2)/2 = 11/3 + 5/6 = 4.5; 6 >= 4.5 -> stop.
  // p2 = p3 = 4.5. Total 3 + 2 + 4.5 + 4.5 = 14 = phi + Y; demand-accounted
  // 1 + 2 + 4.5 + 4.5 = 12 = phi.
  std::array<PairToken, 4> p{demand_tokens(1), backlogged(2), backlogged(), backlogged(6)};
  sender_round(12, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 3.0);
  EXPECT_DOUBLE_EQ(p[1].phi_S, 2.0);
  EXPECT_NEAR(p[2].phi_S, 4.5, kTol);
  EXPECT_NEAR(p[3].phi_S, 4.5, kTol);
}

TEST(TokenAssignment, DivisionGuardsAllReceiverBounded) {
  // phi = 9, backlogged, phi_D = 1, 2, 2.5. bar = 3. 1 < 3 -> N' = 1,
  // bar = 3 + 2/2 = 4; 2 < 4 -> N' = 2, bar = 4 + 2/1 = 6; 2.5 < 6 -> N' = 3 =
  // N_S, no division. Everyone takes its phi_D; sum 5.5 < 9.
  std::array<PairToken, 3> p{backlogged(2.5), backlogged(1), backlogged(2)};
  sender_round(kPhi, p);
  EXPECT_DOUBLE_EQ(p[0].phi_S, 2.5);
  EXPECT_DOUBLE_EQ(p[1].phi_S, 1.0);
  EXPECT_DOUBLE_EQ(p[2].phi_S, 2.0);

  // Receiver admission of 0 tokens is kept as 0 by the sender, not taken for
  // "unassigned": phi = 9, phi_D = 0 and UNBOUND: bar 4.5, 0 < 4.5 -> 0,
  // N' = 1, bar = 4.5 + 4.5/1 = 9 for the other pair.
  std::array<PairToken, 2> z{backlogged(0), backlogged()};
  sender_round(kPhi, z);
  EXPECT_DOUBLE_EQ(z[0].phi_S, 0.0);
  EXPECT_DOUBLE_EQ(z[1].phi_S, 9.0);

  // phi_alpha = 0: every share is 0, nothing divides by zero.
  std::array<PairToken, 2> zero{backlogged(), demand_tokens(0)};
  sender_round(0, zero);
  EXPECT_DOUBLE_EQ(zero[0].phi_S, 0.0);
  EXPECT_DOUBLE_EQ(zero[1].phi_S, 0.0);
  std::array<PairToken, 2> zr{request(1), request(0)};
  receiver_round(0, zr);
  EXPECT_DOUBLE_EQ(zr[0].phi_D, 0.0);
  EXPECT_DOUBLE_EQ(zr[1].phi_D, 0.0);
}

TEST(TokenAssignment, SumInvariants) {
  // All backlogged, no receiver bound: phi_alpha / N each, summing to
  // phi_alpha (10/3 * 3, 9/7 * 7).
  std::array<PairToken, 3> three{backlogged(), backlogged(), backlogged()};
  sender_round(10, three);
  double sum = 0;
  for (const PairToken& q : three) {
    EXPECT_DOUBLE_EQ(q.phi_S, 10.0 / 3);
    sum += q.phi_S;
  }
  EXPECT_DOUBLE_EQ(sum, 10.0);
  std::vector<PairToken> seven(7, backlogged());
  sender_round(kPhi, seven);
  sum = 0;
  for (const PairToken& q : seven) sum += q.phi_S;
  EXPECT_DOUBLE_EQ(sum, kPhi);

  // Receiver: requests 1, 5, 7, 20 with phi = 12: bar 3; 1 < 3 UNBOUND,
  // bar = 3 + 2/3 = 11/3; 5, 7, 20 >= 11/3 -> 11/3 each. Effective sum
  // 1 + 3 * 11/3 = 12.
  std::array<PairToken, 4> r{request(20), request(5), request(1), request(7)};
  receiver_round(12, r);
  EXPECT_EQ(r[2].phi_D, kTokenUnbound);
  sum = 0;
  for (const PairToken& q : r) {
    if (q.phi_D != kTokenUnbound) {
      EXPECT_DOUBLE_EQ(q.phi_D, 11.0 / 3);
    }
    sum += effective_token(q.phi_S, q.phi_D);
  }
  EXPECT_NEAR(sum, 12.0, kTol);

  // Mixed sender set (fixed seed). Half the pairs are backlogged and UNBOUND,
  // so some pair gets the redistributed bar; then the demand-accounted sum
  // (tx/B_u for demand-bounded pairs, phi_S otherwise) equals phi_alpha, and
  // every receiver-bounded pair gets exactly its phi_D.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<PairToken> mixed(64);
  for (size_t i = 0; i < mixed.size(); ++i) {
    if (i % 2 == 0) {
      mixed[i] = backlogged();
    } else if (i % 4 == 1) {
      mixed[i] = demand_tokens(u(rng) * 0.5);  // below the share 32/64 = 0.5
    } else {
      mixed[i] = backlogged(u(rng) * 0.6);
    }
  }
  const double phi = 32;
  sender_round(phi, mixed);
  const double share = phi / static_cast<double>(mixed.size());
  double accounted = 0;
  for (const PairToken& q : mixed) {
    const double demand = q.tx_Bps / kBu;
    if (share > demand) {
      EXPECT_DOUBLE_EQ(q.phi_S, share);
      accounted += demand;
    } else {
      EXPECT_FALSE(q.phi_D < q.phi_S) << "receiver bound ignored";
      accounted += q.phi_S;
    }
  }
  EXPECT_NEAR(accounted, phi, 1e-9);
}

// ---------------------------------------------------------------------------
// The implementation takes every pair below phi-bar in threshold passes and
// sorts only what is left after kMaxPasses = 8 passes. These tests compare it
// with a literal transcription of the listing (sort first, update phi-bar as
// in lines 9, 14 and 27) and force the sorted tail.

void literal_assignment(double phi, std::vector<PairToken>& p) {
  const size_t n = p.size();
  double y = 0, bar = phi / static_cast<double>(n);
  size_t nb = 0;
  for (PairToken& q : p) q.phi_S = 0;
  for (PairToken& q : p) {
    if (bar > q.tx_Bps / kBu) { y += bar - q.tx_Bps / kBu; q.phi_S = bar; ++nb; }
  }
  if (nb < n) bar += y / static_cast<double>(n - nb);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&p](size_t a, size_t b) { return p[a].phi_D < p[b].phi_D; });
  for (size_t i : order) {
    if (p[i].phi_D < bar && p[i].phi_S == 0) {
      ++nb;
      if (nb < n) bar += (bar - p[i].phi_D) / static_cast<double>(n - nb);
      p[i].phi_S = p[i].phi_D;
    }
  }
  for (PairToken& q : p) {
    if (q.phi_S == 0) q.phi_S = bar;
  }
}

void literal_admission(double phi, std::vector<PairToken>& p) {
  const size_t n = p.size();
  double bar = phi / static_cast<double>(n);
  size_t nb = 0;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&p](size_t a, size_t b) { return p[a].phi_S < p[b].phi_S; });
  for (size_t i : order) {
    if (p[i].phi_S < bar) {
      p[i].phi_D = kTokenUnbound;
      ++nb;
      if (nb < n) bar += (bar - p[i].phi_S) / static_cast<double>(n - nb);
    } else {
      p[i].phi_D = bar;
    }
  }
}

// K keys for a set of K + 1 pairs sharing phi such that a threshold pass takes
// exactly one of them: key 0 is half the first phi-bar, and key k + 1 lies
// strictly between the phi-bar before and after key k is taken.
std::vector<double> one_per_pass_chain(double phi, size_t k_chain) {
  std::vector<double> keys;
  double pool = phi;
  size_t free = k_chain + 1;
  double level = pool / static_cast<double>(free);
  keys.push_back(level / 2);
  for (size_t k = 0; k + 1 < k_chain; ++k) {
    pool -= keys.back();
    --free;
    const double next = pool / static_cast<double>(free);
    keys.push_back(level + 0.5 * (next - level));
    level = next;
  }
  return keys;
}

TEST(TokenAssignment, SortedTailAfterEightPasses) {
  // 11 chain keys + 1 large request at phi = 12: each threshold pass takes one
  // key, so passes 1-8 take keys 0-7 and the sorted walk takes keys 8-10.
  // All chain pairs end UNBOUND; the large one gets 12 - sum(chain).
  const double phi = 12;
  const std::vector<double> chain = one_per_pass_chain(phi, 11);
  std::vector<PairToken> r;
  double chain_sum = 0;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {  // worst order
    r.push_back(request(*it));
    chain_sum += *it;
  }
  r.push_back(request(100));
  std::vector<PairToken> ref = r;
  receiver_round(phi, r);
  literal_admission(phi, ref);
  for (size_t i = 0; i < chain.size(); ++i) EXPECT_EQ(r[i].phi_D, kTokenUnbound) << i;
  EXPECT_NEAR(r.back().phi_D, phi - chain_sum, 1e-12);
  EXPECT_NEAR(r.back().phi_D, ref.back().phi_D, 1e-12);

  // Same chain as receiver bounds at a sender with one more UNBOUND pair.
  std::vector<PairToken> s;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) s.push_back(backlogged(*it));
  s.push_back(backlogged());
  sender_round(phi, s);
  for (size_t i = 0; i < chain.size(); ++i) EXPECT_DOUBLE_EQ(s[i].phi_S, s[i].phi_D) << i;
  EXPECT_NEAR(s.back().phi_S, phi - chain_sum, 1e-12);
}

TEST(TokenAssignment, MatchesLiteralListing) {
  // Random sets (fixed seed) of 1..200 pairs: demands and receiver bounds
  // around the fair share, requests around the fair share.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 1 + static_cast<size_t>(u(rng) * 200);
    const double phi = 1 + u(rng) * 100;
    const double share = phi / static_cast<double>(n);
    std::vector<PairToken> s(n), r(n);
    for (size_t i = 0; i < n; ++i) {
      const double c = u(rng);
      const double tx = c < 0.3 ? u(rng) * 1.5 * share * kBu : kBacklog;
      const double phi_D = u(rng) < 0.5 ? u(rng) * 3 * share : kTokenUnbound;
      s[i] = {tx, 0, phi_D};
      r[i] = request(u(rng) * 3 * share);
    }
    std::vector<PairToken> s_ref = s, r_ref = r;
    sender_round(phi, s);
    literal_assignment(phi, s_ref);
    receiver_round(phi, r);
    literal_admission(phi, r_ref);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_NEAR(s[i].phi_S, s_ref[i].phi_S, 1e-9 * phi) << trial << " " << i;
      if (r_ref[i].phi_D == kTokenUnbound) {
        EXPECT_EQ(r[i].phi_D, kTokenUnbound) << trial << " " << i;
      } else {
        EXPECT_NEAR(r[i].phi_D, r_ref[i].phi_D, 1e-9 * phi) << trial << " " << i;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Algorithm 2.
TEST(MultipathTokens, OnePath) {
  // phi_S = 6, one path: bar = 6 -> 6, backlogged or not (line 7).
  std::array<PathToken, 1> l{PathToken{kBacklog, 0}};
  assign_path_tokens(6, kBu, l);
  EXPECT_DOUBLE_EQ(l[0].phi, 6.0);
  l[0] = {1 * kBu, 0};
  assign_path_tokens(6, kBu, l);
  EXPECT_DOUBLE_EQ(l[0].phi, 6.0);
}

TEST(MultipathTokens, TwoPaths) {
  // phi_S = 6, both backlogged: bar = 3 -> 3, 3.
  std::array<PathToken, 2> l{PathToken{kBacklog, 0}, PathToken{kBacklog, 0}};
  assign_path_tokens(6, kBu, l);
  EXPECT_DOUBLE_EQ(l[0].phi, 3.0);
  EXPECT_DOUBLE_EQ(l[1].phi, 3.0);
  // Path 0 demand 1 token: Y = 3 - 1 = 2, path 0 keeps 3 (line 7), path 1 gets
  // 3 + 2/1 = 5 (line 11).
  l[0] = {1 * kBu, 0};
  assign_path_tokens(6, kBu, l);
  EXPECT_DOUBLE_EQ(l[0].phi, 3.0);
  EXPECT_DOUBLE_EQ(l[1].phi, 5.0);
  // Path 0 demand exactly 3 = bar: not bounded (line 5 is strict): 3, 3.
  l[0] = {3 * kBu, 0};
  assign_path_tokens(6, kBu, l);
  EXPECT_DOUBLE_EQ(l[0].phi, 3.0);
  EXPECT_DOUBLE_EQ(l[1].phi, 3.0);
}

TEST(MultipathTokens, ThreePaths) {
  // phi_S = 9: bar = 3. Path 1 demand 0.5 tokens: Y = 2.5, path 1 keeps 3,
  // paths 0 and 2 get 3 + 2.5/2 = 4.25.
  std::array<PathToken, 3> l{PathToken{kBacklog, 0}, PathToken{0.5 * kBu, 0},
                             PathToken{kBacklog, 0}};
  assign_path_tokens(9, kBu, l);
  EXPECT_DOUBLE_EQ(l[0].phi, 4.25);
  EXPECT_DOUBLE_EQ(l[1].phi, 3.0);
  EXPECT_DOUBLE_EQ(l[2].phi, 4.25);
  // All three low (0, 1, 2 tokens): every path keeps bar = 3; no division.
  l = {PathToken{0, 0}, PathToken{1 * kBu, 0}, PathToken{2 * kBu, 0}};
  assign_path_tokens(9, kBu, l);
  for (const PathToken& p : l) EXPECT_DOUBLE_EQ(p.phi, 3.0);
}

// ---------------------------------------------------------------------------
// Convergence: senders and the receiver alternate rounds.
TEST(TokenAssignment, ConvergesManyToOne) {
  // s0, s1, s2 each with one pair to R; phi_alpha = 6 for every VM.
  // Round 1: each sender bar = 6 -> 6. R: bar = 2; sorted 6, 6, 6, none < 2
  // -> admit 2 each. Round 2: each sender phi_D = 2 < 6 -> 2 (guarded).
  // R: 2 < 2 is false -> 2 each. Fixed point: 2 each, R's 6 tokens in use.
  constexpr double phi = 6;
  std::array<std::array<PairToken, 1>, 3> s{};
  for (auto& v : s) v[0] = backlogged();
  std::array<PairToken, 3> r{};
  for (int round = 1; round <= 8; ++round) {
    for (size_t i = 0; i < s.size(); ++i) {
      sender_round(phi, s[i]);
      r[i] = request(s[i][0].phi_S);
    }
    receiver_round(phi, r);
    for (size_t i = 0; i < s.size(); ++i) s[i][0].phi_D = r[i].phi_D;
    if (round == 1) {
      for (size_t i = 0; i < s.size(); ++i) {
        EXPECT_DOUBLE_EQ(s[i][0].phi_S, 6.0);
        EXPECT_DOUBLE_EQ(r[i].phi_D, 2.0);
      }
    }
  }
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_DOUBLE_EQ(s[i][0].phi_S, 2.0);
    EXPECT_DOUBLE_EQ(r[i].phi_D, 2.0);
    EXPECT_DOUBLE_EQ(effective_token(s[i][0].phi_S, s[i][0].phi_D), 2.0);
  }
}

TEST(TokenAssignment, ConvergesWithSenderSlackMovingElsewhere) {
  // As above, but s0 has a second pair to X. phi_alpha = 6 everywhere.
  // Round 1: s0: 3, 3; s1: 6; s2: 6. R: {3, 6, 6}, bar 2 -> 2 each.
  // X: {3} < 6 -> UNBOUND.
  // Round 2: s0: bar 3; pair to R phi_D 2 < 3 -> 2, N' = 1,
  // bar = 3 + 1/1 = 4 -> pair to X 4. s1, s2: 2. R: {2, 2, 2} -> 2 each.
  // X: {4} < 6 -> UNBOUND. Fixed point.
  constexpr double phi = 6;
  std::array<PairToken, 2> s0{backlogged(), backlogged()};  // ->R, ->X
  std::array<PairToken, 1> s1{backlogged()};
  std::array<PairToken, 1> s2{backlogged()};
  std::array<PairToken, 3> r{};
  std::array<PairToken, 1> x{};
  for (int round = 1; round <= 6; ++round) {
    sender_round(phi, s0);
    sender_round(phi, s1);
    sender_round(phi, s2);
    r = {request(s0[0].phi_S), request(s1[0].phi_S), request(s2[0].phi_S)};
    x[0] = request(s0[1].phi_S);
    receiver_round(phi, r);
    receiver_round(phi, x);
    s0[0].phi_D = r[0].phi_D;
    s1[0].phi_D = r[1].phi_D;
    s2[0].phi_D = r[2].phi_D;
    s0[1].phi_D = x[0].phi_D;
    if (round == 1) {
      EXPECT_DOUBLE_EQ(s0[0].phi_S, 3.0);
      EXPECT_DOUBLE_EQ(s0[1].phi_S, 3.0);
      for (const PairToken& q : r) EXPECT_DOUBLE_EQ(q.phi_D, 2.0);
    }
  }
  EXPECT_DOUBLE_EQ(s0[0].phi_S, 2.0);
  EXPECT_DOUBLE_EQ(s0[1].phi_S, 4.0);
  EXPECT_EQ(s0[1].phi_D, kTokenUnbound);
  EXPECT_DOUBLE_EQ(s1[0].phi_S, 2.0);
  EXPECT_DOUBLE_EQ(s2[0].phi_S, 2.0);
  for (const PairToken& q : r) EXPECT_DOUBLE_EQ(q.phi_D, 2.0);
}

}  // namespace
}  // namespace ufab
