#include "pipeline/hash_table.hpp"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>

#include <stdexcept>

namespace ufab::pipeline {

HashTable::HashTable(const std::string& name, uint32_t entries, uint32_t key_len, HashFn hash) {
  rte_hash_parameters p{};
  p.name = name.c_str();
  p.entries = entries < 8 ? 8 : entries;
  p.key_len = key_len;
  p.hash_func = hash != nullptr ? hash : rte_hash_crc;
  p.hash_func_init_val = 0;
  // Extendable buckets: all `entries` keys fit whatever their hashes (a
  // plain cuckoo table sized to exactly its key count refuses inserts near
  // full, e.g. the 1024th local VM).
  p.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
  p.socket_id = static_cast<int>(rte_socket_id());
  h_ = rte_hash_create(&p);
  if (h_ == nullptr) throw std::runtime_error("cannot create hash table '" + name + "': " + rte_strerror(rte_errno));
}

HashTable::~HashTable() { rte_hash_free(h_); }

std::string HashTable::unique_name(const char* what) {
  static unsigned n = 0;  // tables are made on the main lcore, before the workers start
  return std::string("ufab_") + what + std::to_string(n++);
}

bool HashTable::add(const void* key, uint32_t value) {
  if (rte_hash_lookup(h_, key) >= 0) return false;
  if (rte_hash_add_key_data(h_, key, reinterpret_cast<void*>(static_cast<uintptr_t>(value))) != 0) return false;
  ++n_;
  return true;
}

bool HashTable::remove(const void* key) {
  if (rte_hash_del_key(h_, key) < 0) return false;
  --n_;
  return true;
}

void add_configured(HashTable& t, const void* key, uint32_t value, const char* what) {
  if (t.add(key, value)) return;
  throw std::runtime_error(t.lookup(key) != HashTable::kMiss ? std::string("two configured entries for one ") + what
                                                             : std::string(what) + " table full");
}

uint32_t HashTable::lookup(const void* key) const {
  void* data = nullptr;
  if (rte_hash_lookup_data(h_, key, &data) < 0) return kMiss;
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(data));
}

void HashTable::lookup_bulk(const void** keys, uint32_t n, uint32_t* out) const {
  void* data[kMaxBulk];
  uint64_t hits = 0;
  if (n == 0) return;
  rte_hash_lookup_bulk_data(h_, keys, n, &hits, data);
  for (uint32_t i = 0; i < n; ++i)
    out[i] = (hits >> i) & 1 ? static_cast<uint32_t>(reinterpret_cast<uintptr_t>(data[i])) : kMiss;
}

void HashTable::lookup_bulk_hashed(const void** keys, uint32_t* hashes, uint32_t n, uint32_t* out) const {
  void* data[kMaxBulk];
  uint64_t hits = 0;
  if (n == 0) return;
  rte_hash_lookup_with_hash_bulk_data(h_, keys, hashes, n, &hits, data);
  for (uint32_t i = 0; i < n; ++i)
    out[i] = (hits >> i) & 1 ? static_cast<uint32_t>(reinterpret_cast<uintptr_t>(data[i])) : kMiss;
}

}  // namespace ufab::pipeline
