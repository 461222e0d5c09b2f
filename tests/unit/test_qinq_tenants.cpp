// The QinQ tenant map (edge/qinq_tenants.hpp): (S, C) -> tenant through
// inserts, erases and inserts again, with exact answers; a tombstone keeps
// the keys behind it in its probe chain reachable and is taken again; an
// erase of a key that names another tenant leaves it; the table holds the
// number of tenants it was sized for, and every slot is read whole.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <utility>

#include "edge/qinq_tenants.hpp"

using ufab::edge::QinqTenants;

TEST(QinqTenants, InsertFindErase) {
  QinqTenants m(4);
  EXPECT_EQ(m.capacity(), 8u);
  EXPECT_EQ(m.find(7, 10), -1);
  ASSERT_TRUE(m.insert(7, 10, 0));
  ASSERT_TRUE(m.insert(8, 10, 3));
  EXPECT_EQ(m.find(7, 10), 0);
  EXPECT_EQ(m.find(8, 10), 3);
  EXPECT_EQ(m.find(7, 11), -1);
  m.erase(8, 10, 2);  // names tenant 3, not 2: kept
  EXPECT_EQ(m.find(8, 10), 3);
  m.erase(8, 10, 3);
  EXPECT_EQ(m.find(8, 10), -1);
  EXPECT_EQ(m.find(7, 10), 0);
  ASSERT_TRUE(m.insert(8, 10, 5));  // its tombstone taken again
  EXPECT_EQ(m.find(8, 10), 5);
  ASSERT_TRUE(m.insert(7, 10, 6));  // a key inserted again: updated, not doubled
  EXPECT_EQ(m.find(7, 10), 6);
  m.erase(7, 10, 6);
  EXPECT_EQ(m.find(7, 10), -1);
}

TEST(QinqTenants, EmptyTableKnowsNothing) {
  const QinqTenants m;
  EXPECT_EQ(m.find(1, 1), -1);
}

// Against std::map over random inserts and erases of keys from a small
// set (so that chains and tombstones form), never more live keys than the
// table was sized for.
TEST(QinqTenants, MatchesAMapUnderChurn) {
  constexpr size_t kMost = 16;
  QinqTenants m(kMost);
  std::map<std::pair<uint16_t, uint16_t>, uint32_t> ref;
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const auto s = static_cast<uint16_t>(1 + rng() % 6), c = static_cast<uint16_t>(1 + rng() % 8);
    const auto key = std::make_pair(s, c);
    if (rng() % 2 == 0 && (ref.size() < kMost || ref.count(key) != 0)) {
      const uint32_t t = rng() % 1000;
      ASSERT_TRUE(m.insert(s, c, t)) << step;
      ref[key] = t;
    } else if (const auto it = ref.find(key); it != ref.end()) {
      m.erase(s, c, it->second);
      ref.erase(it);
    }
    for (uint16_t qs = 1; qs <= 6; ++qs)
      for (uint16_t qc = 1; qc <= 8; ++qc) {
        const auto it = ref.find({qs, qc});
        ASSERT_EQ(m.find(qs, qc), it == ref.end() ? -1 : static_cast<int32_t>(it->second)) << step;
      }
  }
}
