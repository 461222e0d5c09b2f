// Algorithm 1 (TokenAssignment, TokenAdmission) and Algorithm 2 of the paper's
// appendices E and F. See token_assignment.hpp for the reading of line 7.
#include "control/token_assignment.hpp"

#include <algorithm>

namespace ufab {
namespace {

// "Not assigned yet" (phi_S = 0 in the listing). Tokens are never negative.
constexpr double kUnassigned = -1.0;

// Threshold passes before water_fill falls back to sorting (see below).
constexpr int kMaxPasses = 8;

void ensure_size(std::vector<uint32_t>& scratch, size_t n) {
  if (scratch.size() < n) scratch.resize(n);
}

// The shared loop of Algorithm 1 lines 10-15 (sender, key = phi_D) and lines
// 22-27 (receiver, key = phi_S): walk the pairs in idx ascending on key; a pair
// whose key is below phi-bar is taken (take(i)) and phi-bar rises; the first
// pair at or above phi-bar ends the walk, since phi-bar changes only when a
// pair is taken. Returns the final phi-bar.
//
// phi-bar is kept as pool / n_free, pool being the token left for the n_free
// pairs not taken yet. That is line 14 (and 27) rewritten: with bar = pool/m,
// bar + (bar - key)/(m - 1) = (pool - key)/(m - 1). It avoids a chain of
// dependent divisions and accumulated rounding.
//
// Instead of sorting first, up to kMaxPasses passes take at once every pair
// below the current phi-bar. This takes the same pairs as the sorted walk:
// the taken pairs always form a prefix of the sorted order (every key below a
// level that only rises), and after a pass both walks stand at the same prefix
// with the same phi-bar, which each of the pass's pairs was below in the
// sorted walk too since phi-bar never falls. A pass that takes nothing ends
// it; otherwise the rest is sorted and walked literally, so a round costs
// O(n) typically and O(n log n) at worst.
//
// idx holds the candidates (n_free >= idx.size(), n_free > 0); it is reordered.
template <class Key, class Take>
double water_fill(std::span<uint32_t> idx, double pool, size_t n_free, Key key, Take take) {
  double bar = pool / static_cast<double>(n_free);
  size_t m = idx.size();
  for (int pass = 0; pass < kMaxPasses && m > 0; ++pass) {
    const size_t before = n_free;
    size_t kept = 0;
    for (size_t k = 0; k < m; ++k) {
      const uint32_t i = idx[k];
      const double x = key(i);
      if (x < bar) {  // line 12 / 24
        take(i);      // line 15 / 25
        pool -= x;    // line 14 / 27
        --n_free;     // line 13 / 26
      } else {
        idx[kept++] = i;
      }
    }
    m = kept;
    if (n_free == before) return bar;  // nobody below phi-bar: the walk stops here too
    if (n_free == 0) return bar;       // everyone taken (guard of line 14 / 27)
    bar = pool / static_cast<double>(n_free);
  }
  if (m == 0) return bar;

  // Lines 10/22: sort the rest ascending on key, then walk it.
  const auto first = idx.begin();
  std::sort(first, first + static_cast<std::ptrdiff_t>(m),
            [&key](uint32_t a, uint32_t b) { return key(a) < key(b); });
  for (size_t k = 0; k < m; ++k) {
    const uint32_t i = idx[k];
    const double x = key(i);
    if (!(x < bar)) break;  // line 12 / 24
    take(i);                // line 15 / 25
    pool -= x;              // line 14 / 27, guarded: the last pair leaves nobody
    if (--n_free == 0) break;
    bar = pool / static_cast<double>(n_free);
  }
  return bar;
}

}  // namespace

void assign_tokens(double phi_alpha, double unit_bw_Bps, std::span<PairToken> pairs,
                   std::vector<uint32_t>& scratch) {
  const size_t n_s = pairs.size();  // line 2: N_S = |P|
  if (n_s == 0) return;
  size_t n_bounded = 0;             // line 2: N'
  const double fair = phi_alpha / static_cast<double>(n_s);  // line 3

  // Lines 4-8: a pair whose demand tx/B_u is below the fair share keeps the
  // fair share (line 7) and gives the unused part to the others: Y.
  // pool = (N_S - N') * fair + Y = phi_alpha - sum(demand) is what the
  // other pairs share, so line 9's fair + Y/(N_S - N') is pool/(N_S - N').
  double pool = phi_alpha;
  for (PairToken& p : pairs) {
    const double demand = p.tx_Bps / unit_bw_Bps;
    if (fair > demand) {       // line 5
      pool -= demand;          // line 6
      p.phi_S = fair;          // line 7
      ++n_bounded;             // line 8
    } else {
      p.phi_S = kUnassigned;   // line 2
    }
  }
  // Line 9, guarded: if every pair is demand-bounded nobody takes Y and we
  // are done.
  if (n_bounded == n_s) return;
  const size_t n_free = n_s - n_bounded;

  // Lines 10-15: only pairs still unassigned with a finite phi_D can pass the
  // test of line 12 (UNBOUND is never below phi-bar). A receiver-bounded pair
  // takes exactly phi_D; its slack raises phi-bar for the rest.
  ensure_size(scratch, n_s);
  size_t m = 0;
  for (size_t i = 0; i < n_s; ++i) {
    if (pairs[i].phi_S < 0 && pairs[i].phi_D < kTokenUnbound) {
      scratch[m++] = static_cast<uint32_t>(i);
    }
  }
  const double bar = water_fill(
      std::span<uint32_t>(scratch.data(), m), pool, n_free,
      [pairs](uint32_t i) { return pairs[i].phi_D; },
      [pairs](uint32_t i) { pairs[i].phi_S = pairs[i].phi_D; });

  // Lines 16-18: everyone bounded by neither demand nor receiver gets phi-bar.
  for (PairToken& p : pairs) {
    if (p.phi_S < 0) p.phi_S = bar;
  }
}

void admit_tokens(double phi_alpha, std::span<PairToken> pairs,
                  std::vector<uint32_t>& scratch) {
  const size_t n_p = pairs.size();  // line 21: N_P = |P|, N' = 0
  if (n_p == 0) return;

  // Lines 22-27: max-min fair sharing. A request below phi-bar is not bounded
  // by the receiver (UNBOUND) and its slack raises phi-bar for the rest.
  // The marker kUnassigned in phi_D tells lines 28-29 apart.
  ensure_size(scratch, n_p);
  for (size_t i = 0; i < n_p; ++i) {
    scratch[i] = static_cast<uint32_t>(i);
    pairs[i].phi_D = kUnassigned;
  }
  const double bar = water_fill(
      std::span<uint32_t>(scratch.data(), n_p), phi_alpha, n_p,  // line 21
      [pairs](uint32_t i) { return pairs[i].phi_S; },
      [pairs](uint32_t i) { pairs[i].phi_D = kTokenUnbound; });

  // Lines 28-29: the others are admitted phi-bar.
  for (PairToken& p : pairs) {
    if (p.phi_D < 0) p.phi_D = bar;
  }
}

void assign_path_tokens(double phi_S, double unit_bw_Bps, std::span<PathToken> paths) {
  const size_t n_l = paths.size();  // Algorithm 2 line 2: N_L = |L|
  if (n_l == 0) return;
  double y = 0;                     // line 2: Y
  size_t n_bounded = 0;             // line 2: N'
  const double bar = phi_S / static_cast<double>(n_l);  // line 3: fairness

  // Lines 4-8: a path with too little demand keeps the fair share (line 7,
  // "boost demand growth") and gives its unused part to the others.
  for (PathToken& l : paths) {
    const double demand = l.tx_Bps / unit_bw_Bps;
    if (bar > demand) {
      y += bar - demand;  // line 6
      l.phi = bar;        // line 7
      ++n_bounded;        // line 8
    } else {
      l.phi = kUnassigned;
    }
  }
  // Lines 9-11: an unassigned path exists only if N' < N_L, so the division is
  // safe.
  for (PathToken& l : paths) {
    if (l.phi < 0) l.phi = bar + y / static_cast<double>(n_l - n_bounded);
  }
}

}  // namespace ufab
