// The paper's structure, for comparison only (§4.2: "a 2-way hashing Bloom
// filter of 20 KB ... 20K distinct VM-pairs with less than 5% false
// positives"): two banks of bits, one hash per bank (bank 0 CRC-32, bank 1
// CRC-32C, reduced to the bank size by multiply-shift). A key is "seen" when
// both of its bits are set. It cannot remove a key or tell what a key added,
// which is why the switch model uses the slot table instead (README).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "p4/model/crc32.hpp"
#include "p4/model/slot_table.hpp"

namespace ufab::swmodel {

class BloomReference {
 public:
  explicit BloomReference(size_t total_bytes = 20 * 1024)
      : bits_per_bank_(total_bytes * 8 / 2), bank_{std::vector<bool>(bits_per_bank_), std::vector<bool>(bits_per_bank_)} {}

  bool contains(const PairKey& k) const { return bank_[0][index(k, 0)] && bank_[1][index(k, 1)]; }
  // Returns true if the key was already "seen" (a false positive for a new key).
  bool insert(const PairKey& k) {
    const bool seen = contains(k);
    bank_[0][index(k, 0)] = true;
    bank_[1][index(k, 1)] = true;
    return seen;
  }
  size_t bits_per_bank() const { return bits_per_bank_; }

 private:
  size_t index(const PairKey& k, int bank) const {
    const auto kb = key_bytes(k);
    const uint32_t h = bank == 0 ? crc32<kCrc32Ieee>(kb) : crc32<kCrc32C>(kb);
    return static_cast<size_t>((uint64_t{h} * bits_per_bank_) >> 32);
  }
  size_t bits_per_bank_;
  std::vector<bool> bank_[2];
};

}  // namespace ufab::swmodel
