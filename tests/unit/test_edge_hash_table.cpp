// ufab-edge's exact-match tables (pipeline/hash_table.hpp) on a real EAL
// (--no-huge --no-pci): add() refuses a key the table holds (rte_hash
// would overwrite its value and say nothing) and a full table, without
// changing the value or the count; add_configured() throws on either,
// naming the entry, so a configuration that gives two VMs one address
// stops the edge at start-up instead of leaving one VM unreachable.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "pipeline/hash_table.hpp"
#include "tests/unit/eal_gtest_main.hpp"

namespace ufab::pipeline {
namespace {

TEST(HashTable, AddRefusesAKeyItHoldsAndKeepsTheFirstValue) {
  HashTable t(HashTable::unique_name("t"), 64, sizeof(uint64_t));
  const uint64_t a = 0x0102030405060708, b = 42;
  EXPECT_TRUE(t.add(&a, 7));
  EXPECT_FALSE(t.add(&a, 9));
  EXPECT_TRUE(t.add(&b, 9));
  EXPECT_EQ(t.lookup(&a), 7u);
  EXPECT_EQ(t.lookup(&b), 9u);
  EXPECT_EQ(t.size(), 2u);
  const uint64_t c = 3;
  EXPECT_EQ(t.lookup(&c), HashTable::kMiss);
}

TEST(HashTable, AddConfiguredNamesTheDuplicateEntry) {
  HashTable t(HashTable::unique_name("t"), 64, sizeof(uint32_t));
  const uint32_t ip = 0xc0a80001;
  add_configured(t, &ip, 1, "local VM (VNI, IP)");
  try {
    add_configured(t, &ip, 2, "local VM (VNI, IP)");
    FAIL() << "a second entry for one key was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "two configured entries for one local VM (VNI, IP)");
  }
  EXPECT_EQ(t.lookup(&ip), 1u);
  EXPECT_EQ(t.size(), 1u);
}

TEST(HashTable, AFullTableRefusesAndAddConfiguredSaysSo) {
  // rte_hash rounds the entries up and keeps spare slots per lcore cache:
  // add keys until one is refused, then check the count stopped there.
  HashTable t(HashTable::unique_name("t"), 8, sizeof(uint32_t));
  uint32_t k = 0;
  while (k < 1024 && t.add(&k, k)) ++k;
  ASSERT_LT(k, 1024u) << "the table never filled";
  EXPECT_EQ(t.size(), k);
  try {
    add_configured(t, &k, k, "VM-pair id");
    FAIL() << "a full table took an entry";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "VM-pair id table full");
  }
  EXPECT_EQ(t.size(), k);
  for (uint32_t i = 0; i < k; ++i) EXPECT_EQ(t.lookup(&i), i);
}

}  // namespace
}  // namespace ufab::pipeline

int main(int argc, char** argv) { return ufab::eal_test::run_with_eal(argc, argv, "test_edge_hash_table"); }
