// QinQ tenants by their (S-VLAN, C-VLAN) ids: the map vm_rx reads for every
// double-tagged frame while a reload adds or removes a QinQ tenant
// (pipeline/tenants.hpp). One writer (the parser, then the control lcore),
// any number of readers that take no lock: an open-addressing table of
// 64-bit slots, each read and written whole (atomically), of fixed
// capacity (sized at start-up for the tenants and params.spare_tenants),
// so it never moves or rehashes while the workers read it.
//
// A slot is 0 (never used) or key << 32 | (tenant + 1), the key S << 12 | C
// (nonzero: S and C are 1..4094); a removed tenant leaves key << 32 | 0, a
// tombstone that keeps the probe chains of the others whole and is taken
// again by a later insert. A reader probes from the key's slot until it
// finds the key (its tenant, or none for a tombstone) or a slot never used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ufab::edge {

class QinqTenants {
 public:
  QinqTenants() = default;
  // Room for `most` tenants at once (at least 8 slots, twice `most`,
  // rounded up to a power of two).
  explicit QinqTenants(size_t most) {
    size_t n = 8;
    while (n < 2 * most) n *= 2;
    slots_.assign(n, 0);
  }

  // The tenant index of (svid, cvid), or -1.
  int32_t find(uint16_t svid, uint16_t cvid) const {
    if (slots_.empty()) return -1;
    const uint64_t key = key_of(svid, cvid);
    for (size_t i = home(key), n = 0; n < slots_.size(); i = (i + 1) & mask(), ++n) {
      const uint64_t v = __atomic_load_n(&slots_[i], __ATOMIC_ACQUIRE);
      if (v == 0) return -1;
      if (v >> 32 == key) return static_cast<int32_t>(v & 0xffffffffu) - 1;
    }
    return -1;
  }

  // (svid, cvid) -> tenant (the writer only). False when the table is full
  // (not reached: it has room for the tenants it was sized for).
  bool insert(uint16_t svid, uint16_t cvid, uint32_t tenant) {
    const uint64_t key = key_of(svid, cvid), v = key << 32 | (uint64_t{tenant} + 1);
    size_t free = slots_.size();
    for (size_t i = home(key), n = 0; n < slots_.size(); i = (i + 1) & mask(), ++n) {
      const uint64_t s = slots_[i];
      if (s >> 32 == key) return store(i, v);  // its own slot, live or a tombstone
      if ((s & 0xffffffffu) == 0 && free == slots_.size()) free = i;  // a tombstone, or never used
      if (s == 0) break;  // the key is not further on
    }
    return free != slots_.size() && store(free, v);
  }

  // Removes (svid, cvid) if it still names `tenant` (the writer only).
  void erase(uint16_t svid, uint16_t cvid, uint32_t tenant) {
    const uint64_t key = key_of(svid, cvid);
    for (size_t i = home(key), n = 0; n < slots_.size(); i = (i + 1) & mask(), ++n) {
      const uint64_t s = slots_[i];
      if (s == 0) return;
      if (s >> 32 == key) {
        if ((s & 0xffffffffu) == uint64_t{tenant} + 1) store(i, key << 32);
        return;
      }
    }
  }

  size_t capacity() const { return slots_.size(); }

 private:
  static uint64_t key_of(uint16_t svid, uint16_t cvid) { return uint64_t{svid} << 12 | cvid; }
  size_t mask() const { return slots_.size() - 1; }
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 40) & mask(); }
  bool store(size_t i, uint64_t v) {
    __atomic_store_n(&slots_[i], v, __ATOMIC_RELEASE);
    return true;
  }

  std::vector<uint64_t> slots_;
};

}  // namespace ufab::edge
