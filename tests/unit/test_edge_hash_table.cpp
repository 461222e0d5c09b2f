// ufab-edge's exact-match tables (pipeline/hash_table.hpp) on a real EAL
// (--no-huge --no-pci): add() refuses a key the table holds (rte_hash
// would overwrite its value and say nothing) and a full table, without
// changing the value or the count; add_configured() throws on either,
// naming the entry, so a configuration that gives two VMs one address
// stops the edge at start-up instead of leaving one VM unreachable.
#include <gtest/gtest.h>

#include <rte_hash_crc.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "pipeline/hash_table.hpp"
#include "pipeline/ipv6_tables.hpp"
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

// The IPv6 classification table's hash, computed by vm_ipv6 from a
// frame's fields and addresses (Classify6Key::hash_of), is rte_hash_crc of
// the stored 40-byte key: what the table computes on insert (table_hash)
// and what the cache's set is chosen by, so a frame's hash finds the entry.
TEST(Classify6Key, HashOfTheFieldsIsTheCrcOfTheStoredKey) {
  Classify6Key k{};
  k.port = 3, k.vlan = 0x123, k.svlan = 0xabc;
  for (uint8_t i = 0; i < 16; ++i) k.src[i] = static_cast<uint8_t>(0x20 + i), k.dst[i] = static_cast<uint8_t>(0xf0 - i);
  const uint32_t crc = rte_hash_crc(&k, sizeof k, 0);
  EXPECT_EQ(Classify6Key::hash_of(k.port, k.vlan, k.svlan, k.src.data(), k.dst.data()), crc);
  EXPECT_EQ(Classify6Key::table_hash(&k, sizeof k, 0), crc);
  Classify6Key other = k;
  other.dst[15] ^= 1;
  EXPECT_NE(Classify6Key::hash_of(other.port, other.vlan, other.svlan, other.src.data(), other.dst.data()), crc);
  // The table hashed with it finds the key by either lookup.
  HashTable t(HashTable::unique_name("c6"), 64, sizeof(Classify6Key), Classify6Key::table_hash);
  ASSERT_TRUE(t.add(&k, 5));
  EXPECT_EQ(t.lookup(&k), 5u);
  const void* keys[1] = {&k};
  uint32_t sig[1] = {crc}, out[1] = {0};
  t.lookup_bulk_hashed(keys, sig, 1, out);
  EXPECT_EQ(out[0], 5u);
}

}  // namespace
}  // namespace ufab::pipeline

int main(int argc, char** argv) { return ufab::eal_test::run_with_eal(argc, argv, "test_edge_hash_table"); }
