// A worker's exact-match cache in front of its classification table
// (rte_hash, pipeline/hash_table.hpp): 16-byte ClassifyKey -> pair, as
// OVS's EMC sits in front of its classifier. The table stays the truth: a
// key the cache does not hold is looked up there and, when found, cached.
// Misses (unknown pairs) are never cached, so a flood of unknown keys costs
// table lookups, as without the cache, and never evicts a known pair. A
// value is whatever the caller stores: vm_rx.cpp also caches a key for
// another local VM of the sender's tenant (kLocal | VM, vm_local.cpp).
//
// Why: with 8K pairs in random order an rte_hash bulk lookup costs ~137
// instructions and two cache lines per frame (its bucket, then the key);
// a hit here costs one 64-byte set, which vm_rx.cpp prefetches when it
// computes the key's hash. params.classify_cache turns it off.
//
// Layout: sets of 3 ways, one cache line each; sets = the next power of two
// >= the shard's pair count (at least 64), so each set expects about one of
// the shard's keys and a key shares its set with 3 or more others rarely
// (~8% of keys at Poisson(1)); at most 2^20 sets (64 MB; from 1 MB on
// transparent huge pages, sched/huge_pages.hpp). A set's victim is chosen
// round robin.
// Single-threaded (one per worker); nothing here is DPDK-specific.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "sched/huge_pages.hpp"

namespace ufab::pipeline {

class ClassifyCache {
 public:
  static constexpr uint32_t kMiss = UINT32_MAX;
  static constexpr uint32_t kWays = 3;
  static constexpr uint32_t kKeyBytes = 16;
  static constexpr uint32_t kMaxSets = 1u << 20;

  // keys: how many distinct keys the table behind holds; 0 disables the
  // cache (every lookup misses, nothing is stored).
  explicit ClassifyCache(uint32_t keys) {
    if (keys == 0) return;
    uint32_t n = 64;
    while (n < keys && n < kMaxSets) n <<= 1;
    Set* const sets = static_cast<Set*>(huge_pages::allocate(n * sizeof(Set), alignof(Set)));
    std::uninitialized_default_construct_n(sets, n);  // Set is trivially destructible
    sets_ = std::unique_ptr<Set[], Release>(sets, Release{n});
    mask_ = n - 1;
  }

  bool enabled() const { return sets_ != nullptr; }
  uint32_t sets() const { return enabled() ? mask_ + 1 : 0; }

  void prefetch(uint32_t hash) const {
    if (enabled()) __builtin_prefetch(&sets_[hash & mask_]);
  }

  // The value cached for key (kKeyBytes bytes, hash: the table's hash of
  // it), or kMiss.
  uint32_t lookup(const void* key, uint32_t hash) const {
    if (!enabled()) return kMiss;
    const Set& s = sets_[hash & mask_];
    const uint32_t w = s.find(key);
    return w == kWays ? kMiss : s.value[w];
  }

  // Caches key -> value (value != kMiss): in an empty way of its set, else
  // over the set's round-robin victim. A key already cached is overwritten
  // in place.
  void insert(const void* key, uint32_t hash, uint32_t value) {
    if (!enabled() || value == kMiss) return;
    Set& s = sets_[hash & mask_];
    uint64_t k[2];
    std::memcpy(k, key, kKeyBytes);
    uint32_t way = s.find(key);
    for (uint32_t w = 0; w < kWays && way == kWays; ++w)
      if (s.value[w] == kMiss) way = w;
    if (way == kWays) {
      way = s.victim;
      s.victim = (s.victim + 1) % kWays;
    }
    s.key[way][0] = k[0];
    s.key[way][1] = k[1];
    s.value[way] = value;
  }

 private:
  struct alignas(64) Set {
    uint64_t key[kWays][2] = {};
    uint32_t value[kWays] = {kMiss, kMiss, kMiss};
    uint32_t victim = 0;
    // The way holding key (kKeyBytes bytes), or kWays.
    uint32_t find(const void* key) const {
      uint64_t k[2];
      std::memcpy(k, key, kKeyBytes);
      for (uint32_t w = 0; w < kWays; ++w)
        if (value[w] != kMiss && this->key[w][0] == k[0] && this->key[w][1] == k[1]) return w;
      return kWays;
    }
  };
  static_assert(sizeof(Set) == 64 && std::is_trivially_destructible_v<Set>);
  struct Release {  // no member initializer: default-constructible inside the class
    size_t n;
    void operator()(Set* p) const noexcept { huge_pages::release(p, n * sizeof(Set), alignof(Set)); }
  };

  std::unique_ptr<Set[], Release> sets_;
  uint32_t mask_ = 0;
};

}  // namespace ufab::pipeline
