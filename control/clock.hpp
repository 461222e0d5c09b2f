// Injected time and randomness (design-notes §2). The algorithm core never
// reads a real clock: the DPDK dataplane passes TSC-derived nanoseconds, ns-3
// passes simulated time, tests pass whatever they script.
#pragma once

#include <cstdint>

namespace ufab {

using Nanos = uint64_t;  // nanoseconds on the caller's clock

inline constexpr Nanos kUs = 1'000;
inline constexpr Nanos kMs = 1'000'000;
inline constexpr Nanos kSec = 1'000'000'000;

// Seeded, repeatable random source (SplitMix64): the same seed gives the same
// path choices and freeze windows in every run.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0x9e3779b97f4a7c15ull) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform integer in [lo, hi] (inclusive).
  uint64_t uniform(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
  // Uniform double in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t s_;
};

}  // namespace ufab
