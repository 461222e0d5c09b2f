// A fixed-size exact-match table on rte_hash: key bytes -> a 32-bit index.
// Sized at start-up; adds and removes happen on the control path (on the
// worker that owns the table, in a command: a remote VM added or removed at
// runtime) or, for receiver-side pairs, in place (rte_hash_add_key_data
// allocates nothing). Lookups are burst-friendly (rte_hash_lookup_bulk_data,
// up to 64 keys).
#pragma once

#include <cstdint>
#include <string>

struct rte_hash;

namespace ufab::pipeline {

class HashTable {
 public:
  static constexpr uint32_t kMiss = UINT32_MAX;
  static constexpr uint32_t kMaxBulk = 64;

  // The table's hash of a key (rte_hash_function); nullptr: rte_hash_crc.
  using HashFn = uint32_t (*)(const void* key, uint32_t key_len, uint32_t init);
  // A table name no other table of the process has: "ufab_<what><n>".
  static std::string unique_name(const char* what);
  // Throws std::runtime_error naming the table. name must be unique in the process.
  HashTable(const std::string& name, uint32_t entries, uint32_t key_len, HashFn hash = nullptr);
  ~HashTable();
  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;

  // False when the table is full or already holds the key (rte_hash would
  // overwrite its value and say nothing).
  bool add(const void* key, uint32_t value);
  // False when the table does not hold the key. Control path (a remote VM
  // removed at runtime, remote_vms.hpp): the slot is free for an add at once.
  bool remove(const void* key);
  uint32_t lookup(const void* key) const;
  // out[i] = value or kMiss for keys[0..n), n <= kMaxBulk.
  void lookup_bulk(const void** keys, uint32_t n, uint32_t* out) const;
  // The same with each key's hash given (the table's HashFn of it, computed
  // by the caller where the key is built: no call through the table's
  // function pointer per key).
  void lookup_bulk_hashed(const void** keys, uint32_t* hashes, uint32_t n, uint32_t* out) const;
  uint32_t size() const { return n_; }

 private:
  rte_hash* h_ = nullptr;
  uint32_t n_ = 0;
};

// Start-up insertion of a configured entry: a key already in the table is
// one the configuration's checks let through (two VMs of a tenant with one
// address, two hosts with one IP), and a full table a sizing bug; either
// throws std::runtime_error naming `what`.
void add_configured(HashTable& t, const void* key, uint32_t value, const char* what);

}  // namespace ufab::pipeline
