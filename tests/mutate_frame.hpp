// The fuzz tests' frame mutation (unit and integration tests): one to four
// edits, each a bit flip, a random byte (mostly in the first 128 bytes: the
// headers), a truncation, a random tail of up to 63 bytes, or a 16-bit field
// set to 0x0000 or 0xffff.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace ufab::testing {

inline std::vector<uint8_t> mutate_frame(std::vector<uint8_t> f, std::mt19937_64& rng) {
  const auto below = [&rng](uint64_t n) { return rng() % n; };
  for (uint64_t e = 1 + below(4); e > 0; --e) {
    switch (below(5)) {
      case 0:
        if (!f.empty()) f[below(f.size())] ^= static_cast<uint8_t>(1u << below(8));
        break;
      case 1:
        if (!f.empty()) f[below(std::min<size_t>(f.size(), 128))] = static_cast<uint8_t>(rng());
        break;
      case 2:
        f.resize(below(f.size() + 1));
        break;
      case 3:
        for (uint64_t i = below(64); i > 0; --i) f.push_back(static_cast<uint8_t>(rng()));
        break;
      default:
        if (f.size() >= 2) {
          const size_t at = below(std::min<size_t>(f.size() - 1, 127));
          f[at] = below(2) ? 0xff : 0;
          f[at + 1] = below(2) ? 0xff : 0;
        }
    }
  }
  return f;
}

}  // namespace ufab::testing
