// The worker's exact-match caches in front of the classification tables
// (pipeline/classify_cache.hpp): sizing, hits, misses, and the exact way a
// full set is replaced (round robin over its 3 ways for 16-byte IPv4 keys,
// its 2 ways for 40-byte IPv6 keys).
#include "pipeline/classify_cache.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace {

using ufab::pipeline::Classify6Cache;
using ufab::pipeline::ClassifyCache;

// A 16-byte key whose words differ in both halves.
std::array<uint8_t, 16> key(uint32_t a, uint32_t b) {
  std::array<uint8_t, 16> k{};
  std::memcpy(k.data(), &a, 4);
  std::memcpy(k.data() + 12, &b, 4);
  return k;
}

TEST(ClassifyCache, SetsArePowerOfTwoAtLeastTheKeysWithin64AndTheCap) {
  EXPECT_EQ(ClassifyCache(1).sets(), 64u);
  EXPECT_EQ(ClassifyCache(64).sets(), 64u);
  EXPECT_EQ(ClassifyCache(65).sets(), 128u);
  EXPECT_EQ(ClassifyCache(8192).sets(), 8192u);
  EXPECT_EQ(ClassifyCache(8193).sets(), 16384u);
  EXPECT_EQ(ClassifyCache(5'000'000).sets(), ClassifyCache::kMaxSets);  // capped: more keys share sets
}

TEST(ClassifyCache, DisabledMissesAndStoresNothing) {
  ClassifyCache c(0);
  EXPECT_FALSE(c.enabled());
  EXPECT_EQ(c.sets(), 0u);
  const auto k = key(1, 2);
  c.insert(k.data(), 7, 3);
  c.prefetch(7);
  EXPECT_EQ(c.lookup(k.data(), 7), ClassifyCache::kMiss);
}

TEST(ClassifyCache, HitsOnlyTheWholeKeyInItsSet) {
  ClassifyCache c(100);  // 128 sets
  const auto k = key(0xc0a80001, 0xc0a80002);
  EXPECT_EQ(c.lookup(k.data(), 5), ClassifyCache::kMiss);
  c.insert(k.data(), 5, 42);
  EXPECT_EQ(c.lookup(k.data(), 5), 42u);
  EXPECT_EQ(c.lookup(k.data(), 5 + 128), 42u);  // the hash names the set: low bits only
  EXPECT_EQ(c.lookup(k.data(), 6), ClassifyCache::kMiss);  // another set
  // A key differing in either 8-byte half misses.
  EXPECT_EQ(c.lookup(key(0xc0a80001, 0xc0a80003).data(), 5), ClassifyCache::kMiss);
  EXPECT_EQ(c.lookup(key(0xc0a80011, 0xc0a80002).data(), 5), ClassifyCache::kMiss);
  // Value 0 is a value; kMiss (an unknown pair) is never stored.
  const auto z = key(9, 9);
  c.insert(z.data(), 9, 0);
  EXPECT_EQ(c.lookup(z.data(), 9), 0u);
  const auto u = key(10, 10);
  c.insert(u.data(), 10, ClassifyCache::kMiss);
  EXPECT_EQ(c.lookup(u.data(), 10), ClassifyCache::kMiss);
  // An all-zero key in a fresh set is not mistaken for an empty way.
  const auto zero = key(0, 0);
  EXPECT_EQ(c.lookup(zero.data(), 11), ClassifyCache::kMiss);
  c.insert(zero.data(), 11, 5);
  EXPECT_EQ(c.lookup(zero.data(), 11), 5u);
}

// Four keys in one set of 3 ways: the fourth replaces way 0, the fifth way
// 1; re-inserting a held key updates it in place and moves no victim.
TEST(ClassifyCache, FullSetReplacesRoundRobin) {
  ClassifyCache c(64);
  const uint32_t h = 17;
  const auto a = key(1, 1), b = key(2, 2), d = key(3, 3), e = key(4, 4), f = key(5, 5);
  c.insert(a.data(), h, 10);
  c.insert(b.data(), h, 20);
  c.insert(d.data(), h, 30);
  EXPECT_EQ(c.lookup(a.data(), h), 10u);
  EXPECT_EQ(c.lookup(b.data(), h), 20u);
  EXPECT_EQ(c.lookup(d.data(), h), 30u);
  c.insert(b.data(), h, 21);  // held: in place
  EXPECT_EQ(c.lookup(b.data(), h), 21u);
  EXPECT_EQ(c.lookup(a.data(), h), 10u);
  c.insert(e.data(), h, 40);  // set full: way 0 (a) goes
  EXPECT_EQ(c.lookup(a.data(), h), ClassifyCache::kMiss);
  EXPECT_EQ(c.lookup(b.data(), h), 21u);
  EXPECT_EQ(c.lookup(d.data(), h), 30u);
  EXPECT_EQ(c.lookup(e.data(), h), 40u);
  c.insert(f.data(), h, 50);  // then way 1 (b)
  EXPECT_EQ(c.lookup(b.data(), h), ClassifyCache::kMiss);
  EXPECT_EQ(c.lookup(d.data(), h), 30u);
  EXPECT_EQ(c.lookup(e.data(), h), 40u);
  EXPECT_EQ(c.lookup(f.data(), h), 50u);
  c.insert(a.data(), h, 11);  // then way 2 (d)
  EXPECT_EQ(c.lookup(d.data(), h), ClassifyCache::kMiss);
  EXPECT_EQ(c.lookup(a.data(), h), 11u);
  // Other sets were never touched.
  for (uint32_t s = 0; s < 64; ++s) {
    if (s == h) continue;
    EXPECT_EQ(c.lookup(a.data(), s), ClassifyCache::kMiss) << s;
  }
}

// A 40-byte key: word w (of 5) holds a + w, so keys differ in every word.
std::array<uint8_t, 40> key6(uint64_t a) {
  std::array<uint8_t, 40> k{};
  for (uint64_t w = 0; w < 5; ++w) {
    const uint64_t x = a + w;
    std::memcpy(k.data() + 8 * w, &x, 8);
  }
  return k;
}

TEST(Classify6Cache, SizedLikeTheIpv4CacheWithTwoWaysOfFortyBytes) {
  static_assert(Classify6Cache::kKeyBytes == 40 && Classify6Cache::kWays == 2);
  EXPECT_EQ(Classify6Cache(1).sets(), 64u);
  EXPECT_EQ(Classify6Cache(300).sets(), 512u);
  EXPECT_EQ(Classify6Cache(0).sets(), 0u);
  EXPECT_FALSE(Classify6Cache(0).enabled());
}

TEST(Classify6Cache, HitsOnlyTheWholeKeyADifferenceInAnyWordMisses) {
  Classify6Cache c(64);
  const auto k = key6(0x20010db800000000);
  c.insert(k.data(), 3, 77);
  EXPECT_EQ(c.lookup(k.data(), 3), 77u);
  EXPECT_EQ(c.lookup(k.data(), 3 + 64), 77u);
  EXPECT_EQ(c.lookup(k.data(), 4), Classify6Cache::kMiss);
  for (uint32_t byte = 0; byte < 40; byte += 7) {  // one byte changed, in each of the 5 words
    auto other = k;
    other[byte] ^= 1;
    EXPECT_EQ(c.lookup(other.data(), 3), Classify6Cache::kMiss) << "byte " << byte;
  }
  auto last = k;
  last[39] ^= 0x80;  // the destination address's last byte
  EXPECT_EQ(c.lookup(last.data(), 3), Classify6Cache::kMiss);
  c.insert(last.data(), 3, 78);  // the set's second way
  EXPECT_EQ(c.lookup(k.data(), 3), 77u);
  EXPECT_EQ(c.lookup(last.data(), 3), 78u);
}

// Three keys in one set of 2 ways: the third replaces way 0, the fourth way
// 1, the fifth way 0 again.
TEST(Classify6Cache, FullSetReplacesRoundRobinOverTwoWays) {
  Classify6Cache c(64);
  const uint32_t h = 40;
  const auto a = key6(100), b = key6(200), d = key6(300), e = key6(400);
  c.insert(a.data(), h, 1);
  c.insert(b.data(), h, 2);
  c.insert(a.data(), h, 3);  // held: in place, no victim moves
  EXPECT_EQ(c.lookup(a.data(), h), 3u);
  EXPECT_EQ(c.lookup(b.data(), h), 2u);
  c.insert(d.data(), h, 4);  // way 0 (a) goes
  EXPECT_EQ(c.lookup(a.data(), h), Classify6Cache::kMiss);
  EXPECT_EQ(c.lookup(b.data(), h), 2u);
  EXPECT_EQ(c.lookup(d.data(), h), 4u);
  c.insert(e.data(), h, 5);  // then way 1 (b)
  EXPECT_EQ(c.lookup(b.data(), h), Classify6Cache::kMiss);
  EXPECT_EQ(c.lookup(d.data(), h), 4u);
  EXPECT_EQ(c.lookup(e.data(), h), 5u);
  c.insert(a.data(), h, 6);  // then way 0 (d) again
  EXPECT_EQ(c.lookup(d.data(), h), Classify6Cache::kMiss);
  EXPECT_EQ(c.lookup(e.data(), h), 5u);
  EXPECT_EQ(c.lookup(a.data(), h), 6u);
}

}  // namespace
