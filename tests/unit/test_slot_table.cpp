// Slot table and per-link sums (§3.6, §4.2; design-notes §4.1, §4.2).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "control/clock.hpp"
#include "p4/model/bloom_reference.hpp"
#include "p4/model/crc32.hpp"
#include "p4/model/link_state.hpp"
#include "p4/model/slot_table.hpp"

namespace ufab::swmodel {
namespace {

std::span<const uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Crc32, StandardCheckValues) {
  EXPECT_EQ(crc32<kCrc32Ieee>(bytes("123456789")), 0xCBF43926u);
  EXPECT_EQ(crc32<kCrc32C>(bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32<kCrc32Q>(bytes("123456789")), 0x3010BF7Fu);
}

TEST(SlotTable, KeyBytesAreBigEndianWith24BitVni) {
  const auto b = key_bytes({0x0a000001u, 0x123456u, 0xdeadbeefu});
  const std::array<uint8_t, 11> want{0x0a, 0x00, 0x00, 0x01, 0x12, 0x34, 0x56, 0xde, 0xad, 0xbe, 0xef};
  EXPECT_EQ(b, want);
}

TEST(SlotTable, FirstUpsertAddsExactValuesAndRepeatChangesNothing) {
  SlotTable t;
  const PairKey k{1, 2, 3};
  auto r = t.upsert(k, 640, 100, 0);
  EXPECT_EQ(r.outcome, Upsert::inserted);
  EXPECT_EQ(r.d_phi, 640);
  EXPECT_EQ(r.d_w, 100);
  r = t.upsert(k, 640, 100, 0);
  EXPECT_EQ(r.outcome, Upsert::updated);
  EXPECT_EQ(r.d_phi, 0);
  EXPECT_EQ(r.d_w, 0);
  r = t.upsert(k, 320, 250, 1);  // token halves, window grows
  EXPECT_EQ(r.d_phi, -320);
  EXPECT_EQ(r.d_w, 150);
  EXPECT_EQ(t.occupancy(), 1u);
}

TEST(SlotTable, RemoveReturnsHeldValuesOnce) {
  SlotTable t;
  t.upsert({1, 2, 3}, 64, 7, 0);
  auto r = t.remove({1, 2, 3});
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.phi, 64u);
  EXPECT_EQ(r.w, 7u);
  r = t.remove({1, 2, 3});
  EXPECT_FALSE(r.found);
  EXPECT_EQ(t.occupancy(), 0u);
}

TEST(SlotTable, OneBucketPerBankFillsBank0ThenBank1ThenUncounted) {
  SlotTable t({1, 1, 24});  // one bucket, one way per bank: every key collides
  const PairKey a{1, 1, 1}, b{1, 1, 2}, c{1, 1, 3};
  ASSERT_NE(t.fingerprint_of(a), t.fingerprint_of(b));
  ASSERT_NE(t.fingerprint_of(a), t.fingerprint_of(c));
  ASSERT_NE(t.fingerprint_of(b), t.fingerprint_of(c));
  EXPECT_EQ(t.upsert(a, 10, 20, 0).outcome, Upsert::inserted);
  EXPECT_EQ(t.find(a), (SlotLocation{0, 0, 0}));
  EXPECT_EQ(t.upsert(b, 30, 40, 0).outcome, Upsert::inserted);
  EXPECT_EQ(t.find(b), (SlotLocation{1, 0, 0}));
  const auto r = t.upsert(c, 50, 60, 0);
  EXPECT_EQ(r.outcome, Upsert::uncounted);
  EXPECT_EQ(r.d_phi, 0);
  EXPECT_EQ(r.d_w, 0);
  EXPECT_FALSE(t.find(c).has_value());
  // a leaves; its bank-0 slot is free again and c takes it.
  EXPECT_TRUE(t.remove(a).found);
  EXPECT_EQ(t.upsert(c, 50, 60, 0).outcome, Upsert::inserted);
  EXPECT_EQ(t.find(c), (SlotLocation{0, 0, 0}));
  // b, in bank 1, is still found and updated in place.
  const auto rb = t.upsert(b, 31, 40, 1);
  EXPECT_EQ(rb.outcome, Upsert::updated);
  EXPECT_EQ(rb.d_phi, 1);
}

TEST(SlotTable, FingerprintAliasIsTreatedAsTheSamePair) {
  // With a 1-bit fingerprint and one bucket, two keys with equal
  // fingerprints are indistinguishable: the second updates the first's slot.
  SlotTable t({1, 2, 1});
  PairKey a{9, 9, 0}, b{9, 9, 1};
  while (t.fingerprint_of(b) != t.fingerprint_of(a)) ++b.pair_id;
  t.upsert(a, 100, 10, 0);
  const auto r = t.upsert(b, 40, 30, 0);
  EXPECT_EQ(r.outcome, Upsert::updated);
  EXPECT_EQ(r.d_phi, -60);
  EXPECT_EQ(r.d_w, 20);
}

TEST(SlotTable, AgingRemovesOnlySlotsSilentForAFullPeriod) {
  SlotTable t;
  t.upsert({1, 0, 1}, 64, 5, 3);  // seen in epoch 3 only
  t.upsert({1, 0, 2}, 128, 9, 3);
  t.upsert({1, 0, 2}, 128, 9, 4);  // seen again in epoch 4
  EXPECT_EQ(t.age(4).removed, 0u);  // epoch 3 is the previous epoch: kept
  const AgeResult r = t.age(5);     // nothing from pair 1 during epoch 4
  EXPECT_EQ(r.removed, 1u);
  EXPECT_EQ(r.phi, 64u);
  EXPECT_EQ(r.w, 5u);
  EXPECT_FALSE(t.find({1, 0, 1}).has_value());
  EXPECT_TRUE(t.find({1, 0, 2}).has_value());
  EXPECT_EQ(t.age(0).removed, 0u);
  EXPECT_EQ(t.age(1).removed, 0u);
}

TEST(SlotTable, IncrementalSweepCoversExactlyItsBuckets) {
  SlotTable t({8, 4, 24});
  Rng rng(7);
  std::vector<PairKey> keys;
  for (uint32_t i = 0; i < 40; ++i) {
    keys.push_back({static_cast<uint32_t>(rng.next()), i, i});
    t.upsert(keys.back(), i + 1, 2 * i + 1, 0);
  }
  const size_t held = t.occupancy();
  size_t removed = 0;
  for (size_t b = 0; b < 8; b += 3) removed += t.age(2, b, 3).removed;  // 3 + 3 + 2 buckets
  EXPECT_EQ(removed, held);
  EXPECT_EQ(t.occupancy(), 0u);
  EXPECT_EQ(t.age(2, 100, 5).removed, 0u);  // out of range: clipped to nothing
}

TEST(SlotTable, RejectsBadGeometryAndLoadSize) {
  EXPECT_THROW(SlotTable({3, 4, 24}), std::invalid_argument);
  EXPECT_THROW(SlotTable({4, 0, 24}), std::invalid_argument);
  EXPECT_THROW(SlotTable({4, 4, 25}), std::invalid_argument);
  SlotTable t({4, 2, 24});
  EXPECT_THROW(t.load(std::vector<Slot>(3)), std::invalid_argument);
  std::vector<Slot> s(16);
  s[5] = {true, 1, 2, 3, 4};
  t.load(s);
  EXPECT_EQ(t.occupancy(), 1u);
}

// ---- LinkState: Φ_l and W_l are exact sums over the live slots ----

TEST(LinkState, SumsFollowInsertUpdateFinishExactly) {
  LinkState l(9, {}, 2);
  l.register_pair({1, 1, 1}, 640, 1000, 0);
  l.register_pair({2, 1, 1}, 64, 50, 0);
  EXPECT_EQ(l.phi_sum(), 704u);
  EXPECT_EQ(l.w_sum(), 1050u);
  l.register_pair({1, 1, 1}, 1280, 900, 0);  // token doubles, window shrinks
  EXPECT_EQ(l.phi_sum(), 1344u);
  EXPECT_EQ(l.w_sum(), 950u);
  l.register_pair({1, 1, 1}, 1280, 900, 0);  // duplicate
  EXPECT_EQ(l.phi_sum(), 1344u);
  EXPECT_EQ(l.w_sum(), 950u);
  EXPECT_TRUE(l.finish_pair({1, 1, 1}).found);
  EXPECT_EQ(l.phi_sum(), 64u);
  EXPECT_EQ(l.w_sum(), 50u);
  EXPECT_FALSE(l.finish_pair({1, 1, 1}).found);
  EXPECT_EQ(l.phi_sum(), 64u);
  EXPECT_EQ(l.counters().finishes_found, 1u);
  EXPECT_EQ(l.counters().finishes_unknown, 1u);
}

TEST(LinkState, AgingAllPairsReturnsSumsExactlyToZero) {
  LinkState l(9, {}, 2);
  Rng rng(42);
  for (uint32_t i = 0; i < 5000; ++i)
    l.register_pair({static_cast<uint32_t>(rng.next()), i & 0xffffff, i},
                    static_cast<uint32_t>(rng.uniform(1, 65472)), static_cast<uint32_t>(rng.uniform(1, 78125)), 0);
  ASSERT_GT(l.phi_sum(), 0u);
  const size_t held = l.table().occupancy();
  const AgeResult r = l.age(2);
  EXPECT_EQ(r.removed, held);
  EXPECT_EQ(l.phi_sum(), 0u);
  EXPECT_EQ(l.w_sum(), 0u);
  EXPECT_EQ(l.counters().pairs_aged, held);
}

TEST(LinkState, WireSumsSaturateAt32Bits) {
  LinkState l(11, {}, 2);
  l.register_pair({1, 0, 1}, 0xF0000000u, 0xF0000000u, 0);
  l.register_pair({1, 0, 2}, 0x20000000u, 0x10000000u, 0);
  EXPECT_EQ(l.phi_sum(), 0x110000000ull);
  EXPECT_EQ(l.w_wire(), 0xFFFFFFFFu);
  EXPECT_EQ(l.phi_wire(), 0xFFFFFFFFu);
  l.finish_pair({1, 0, 1});  // exact below saturation again
  EXPECT_EQ(l.phi_wire(), 0x20000000u);
  EXPECT_EQ(l.w_wire(), 0x10000000u);
}

// Property: under a random mix of upserts, finishes and aging, the sums
// always equal the sum over the live slots.
TEST(LinkState, SumsEqualLiveSlotsUnderRandomOperations) {
  LinkState l(9, {64, 4, 24}, 2);  // small table so that uncounted pairs occur
  Rng rng(2024);
  std::vector<PairKey> keys;
  for (uint32_t i = 0; i < 800; ++i) keys.push_back({static_cast<uint32_t>(rng.next()), 5, i});
  uint32_t epoch = 0;
  size_t uncounted = 0;
  for (int step = 0; step < 50000; ++step) {
    const PairKey& k = keys[rng.uniform(0, keys.size() - 1)];
    const uint64_t op = rng.uniform(0, 99);
    if (op < 80) {
      const auto r = l.register_pair(k, static_cast<uint32_t>(rng.uniform(0, 65472)),
                                     static_cast<uint32_t>(rng.uniform(0, 1u << 20)), epoch);
      uncounted += r.outcome == Upsert::uncounted;
    } else if (op < 98) {
      l.finish_pair(k);
    } else if (op < 99) {
      ++epoch;
    } else {
      const size_t first = rng.uniform(0, 63);
      l.age(epoch, first, rng.uniform(1, 64));
    }
    if (step % 97 == 0 || step == 49999) {
      uint64_t phi = 0, w = 0;
      for (const Slot& s : l.table().slots())
        if (s.valid) {
          phi += s.phi;
          w += s.w;
        }
      ASSERT_EQ(l.phi_sum(), phi) << "step " << step;
      ASSERT_EQ(l.w_sum(), w) << "step " << step;
    }
  }
  EXPECT_GT(uncounted, 0u);
  EXPECT_GT(l.counters().pairs_aged, 0u);
}

TEST(LinkState, SnapshotRestoreRoundTripsAndChecksSums) {
  LinkState a(9, {16, 4, 24}, 2);
  a.register_pair({1, 2, 3}, 64, 10, 1);
  a.count_tx(1500, 1000);
  LinkState b(9, {16, 4, 24}, 2);
  b.restore(a.snapshot());
  EXPECT_EQ(a.snapshot(), b.snapshot());
  auto bad = a.snapshot();
  bad.phi_sum += 1;
  EXPECT_THROW(b.restore(bad), std::invalid_argument);
}

// ---- omission rate at 20K pairs (§4.2) ----

struct Omission {
  double uncounted = 0, aliased = 0;
  double total() const { return uncounted + aliased; }
};

std::vector<PairKey> random_keys(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
  std::vector<PairKey> keys;
  while (keys.size() < n) {
    const PairKey k{static_cast<uint32_t>(rng.next()), static_cast<uint32_t>(rng.next() & 0xffffff),
                    static_cast<uint32_t>(rng.next())};
    if (seen.insert({k.src_ip, k.vni, k.pair_id}).second) keys.push_back(k);
  }
  return keys;
}

// Insert n distinct keys; a key is not exactly accounted if it found no slot
// (uncounted) or matched another pair's fingerprint (aliased: "updated").
Omission measure(const SlotGeometry& g, const std::vector<PairKey>& keys) {
  SlotTable t(g);
  size_t unc = 0, ali = 0;
  for (const PairKey& k : keys) {
    const auto r = t.upsert(k, 64, 1, 0);
    unc += r.outcome == Upsert::uncounted;
    ali += r.outcome == Upsert::updated;
  }
  return {double(unc) / double(keys.size()), double(ali) / double(keys.size())};
}

TEST(OmissionRate, DefaultGeometryHolds20KPairsBelow5Percent) {
  const auto keys = random_keys(20000, 1);
  std::printf("%-10s %-5s %-6s %-8s %-10s %-11s %-10s %-9s %-8s\n", "buckets", "ways", "fpbits", "slots",
              "tag bytes", "total bytes", "uncounted%", "aliased%", "omitted%");
  const SlotGeometry rows[] = {{1024, 4, 24}, {2048, 4, 24}, {2048, 8, 24}, {4096, 2, 24}, {4096, 4, 24},
                               {4096, 4, 8},  {8192, 4, 24}, {4096, 8, 24}, {1024, 12, 24}, {2048, 6, 24}};
  for (const SlotGeometry& g : rows) {
    const Omission o = measure(g, keys);
    std::printf("%-10u %-5u %-6u %-8zu %-10zu %-11zu %-10.3f %-9.3f %-8.3f\n", g.buckets_per_bank, g.ways, g.fp_bits,
                g.slots(), g.tag_bytes(), g.total_bytes(), 100 * o.uncounted, 100 * o.aliased, 100 * o.total());
  }
  const Omission def = measure(SlotGeometry{}, keys);
  EXPECT_LT(def.total(), 0.05);
  // Over three more key sets, too.
  for (uint64_t seed = 2; seed <= 4; ++seed) EXPECT_LT(measure(SlotGeometry{}, random_keys(20000, seed)).total(), 0.05);
}

// The paper's own structure side by side: a 20 KB 2-bank Bloom filter.
TEST(OmissionRate, PaperBloomFilter20KBAt20KPairs) {
  const auto keys = random_keys(40000, 11);
  BloomReference bloom(20 * 1024);
  ASSERT_EQ(bloom.bits_per_bank(), 81920u);
  size_t fp_during = 0;
  for (size_t i = 0; i < 20000; ++i) fp_during += bloom.insert(keys[i]);
  size_t fp_after = 0;
  for (size_t i = 20000; i < 40000; ++i) fp_after += bloom.contains(keys[i]);
  const double during = double(fp_during) / 20000, after = double(fp_after) / 20000;
  std::printf("bloom 20 KB: %.3f%% of the 20K pairs omitted while inserting; %.3f%% false positives for a new pair "
              "after 20K\n", 100 * during, 100 * after);
  EXPECT_LT(during, 0.05);
  EXPECT_LT(after, 0.05);
}

}  // namespace
}  // namespace ufab::swmodel
