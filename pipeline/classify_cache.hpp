// A worker's exact-match caches in front of its classification tables
// (rte_hash, pipeline/hash_table.hpp): key -> pair, as OVS's EMC sits in
// front of its classifier. ClassifyCache holds the 16-byte IPv4 keys
// (ClassifyKey), Classify6Cache the 40-byte IPv6 ones (Classify6Key,
// vm_ipv6.cpp). The table stays the truth: a key the cache does not hold
// is looked up there and, when found, cached. Misses (unknown pairs) are
// never cached, so a flood of unknown keys costs table lookups, as without
// the cache, and never evicts a known pair. A value is whatever the caller
// stores: vm_rx.cpp and vm_ipv6.cpp also cache a key for another local VM
// of the sender's tenant (kLocalVm | VM, vm_local.cpp).
//
// Why: with 8K pairs in random order an rte_hash bulk lookup costs ~137
// instructions and two cache lines per frame (its bucket, then the key);
// a hit here costs one set (one 64-byte line for IPv4 keys, two for IPv6),
// which the caller prefetches when it computes the key's hash.
// params.classify_cache turns both off.
//
// Layout: sets of kWays ways in whole cache lines (16-byte keys: 3 ways in
// one line; 40-byte keys: 2 ways in two); sets = the next power of two >=
// the keys the table behind holds (at least 64), so each set expects about
// one key and a key shares a set of 3 ways with 3 or more others rarely
// (~8% of keys at Poisson(1)); at most 2^20 sets (64 MB of IPv4 sets; from
// 1 MB on transparent huge pages, sched/huge_pages.hpp). A set's victim is
// chosen round robin.
// Single-threaded (one per worker); nothing here is DPDK-specific.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "sched/huge_pages.hpp"

namespace ufab::pipeline {

template <uint32_t KeyBytes, uint32_t Ways>
class ExactMatchCache {
 public:
  static constexpr uint32_t kMiss = UINT32_MAX;
  static constexpr uint32_t kWays = Ways;
  static constexpr uint32_t kKeyBytes = KeyBytes;
  static constexpr uint32_t kMaxSets = 1u << 20;
  static_assert(KeyBytes % 8 == 0, "keys are compared 8 bytes at a time");

  // keys: how many distinct keys the table behind holds; 0 disables the
  // cache (every lookup misses, nothing is stored).
  explicit ExactMatchCache(uint32_t keys) {
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
    if (!enabled()) return;
    const char* const set = reinterpret_cast<const char*>(&sets_[hash & mask_]);
    for (uint32_t l = 0; l < kSetLines; ++l) __builtin_prefetch(set + 64 * l);
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
    uint32_t way = s.find(key);
    for (uint32_t w = 0; w < kWays && way == kWays; ++w)
      if (s.value[w] == kMiss) way = w;
    if (way == kWays) {
      way = s.victim;
      s.victim = (s.victim + 1) % kWays;
    }
    std::memcpy(s.key[way], key, kKeyBytes);
    s.value[way] = value;
  }

  // Forgets every key (a pair removed at runtime: a key cached for it must
  // not name its slot, which a new pair may take). Control path.
  void clear() {
    if (!enabled()) return;
    std::uninitialized_default_construct_n(sets_.get(), mask_ + 1);
  }

 private:
  static constexpr uint32_t kWords = KeyBytes / 8;
  struct alignas(64) Set {
    uint64_t key[kWays][kWords] = {};
    uint32_t value[kWays];
    uint32_t victim = 0;
    Set() {
      for (uint32_t& v : value) v = kMiss;
    }
    // The way holding key (kKeyBytes bytes), or kWays. A way's words are
    // compared from the last, the one keys differ in most (the destination
    // address), and the first that differs ends it: the other keys of a set
    // cost one compare each (comparing every word cost ~3 instructions a
    // frame more at 8K IPv4 pairs, callgrind).
    uint32_t find(const void* key) const {
      uint64_t k[kWords];
      std::memcpy(k, key, kKeyBytes);
      for (uint32_t w = 0; w < kWays; ++w) {
        if (value[w] == kMiss) continue;
        uint32_t i = kWords;
        while (i != 0 && this->key[w][i - 1] == k[i - 1]) --i;
        if (i == 0) return w;
      }
      return kWays;
    }
  };
  static constexpr uint32_t kSetLines = sizeof(Set) / 64;
  static_assert(sizeof(Set) % 64 == 0 && std::is_trivially_destructible_v<Set>);
  struct Release {  // no member initializer: default-constructible inside the class
    size_t n;
    void operator()(Set* p) const noexcept { huge_pages::release(p, n * sizeof(Set), alignof(Set)); }
  };

  std::unique_ptr<Set[], Release> sets_;
  uint32_t mask_ = 0;
};

// IPv4 keys (ClassifyKey): 3 ways in one 64-byte line.
using ClassifyCache = ExactMatchCache<16, 3>;
// IPv6 keys (Classify6Key, ipv6_tables.hpp): 2 ways in two lines.
using Classify6Cache = ExactMatchCache<40, 2>;

}  // namespace ufab::pipeline
