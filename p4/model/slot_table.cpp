// Slot table (§3.6, §4.2; design-notes §4.1, §4.2). Semantics are in
// slot_table.hpp; the register mapping is in p4/model/README.md.
#include "p4/model/slot_table.hpp"

#include <algorithm>
#include <stdexcept>

#include "p4/model/crc32.hpp"

namespace ufab::swmodel {

std::array<uint8_t, kPairKeyBytes> key_bytes(const PairKey& k) {
  return {static_cast<uint8_t>(k.src_ip >> 24), static_cast<uint8_t>(k.src_ip >> 16),
          static_cast<uint8_t>(k.src_ip >> 8),  static_cast<uint8_t>(k.src_ip),
          static_cast<uint8_t>(k.vni >> 16),    static_cast<uint8_t>(k.vni >> 8),
          static_cast<uint8_t>(k.vni),          static_cast<uint8_t>(k.pair_id >> 24),
          static_cast<uint8_t>(k.pair_id >> 16), static_cast<uint8_t>(k.pair_id >> 8),
          static_cast<uint8_t>(k.pair_id)};
}

SlotTable::SlotTable(SlotGeometry g) : geo_(g) {
  const uint32_t b = g.buckets_per_bank;
  if (b == 0 || (b & (b - 1)) != 0) throw std::invalid_argument("slot table: buckets_per_bank must be a power of two");
  if (g.ways < 1 || g.ways > 16) throw std::invalid_argument("slot table: ways must be 1..16");
  if (g.fp_bits < 1 || g.fp_bits > 24) throw std::invalid_argument("slot table: fp_bits must be 1..24");
  slots_.assign(g.slots(), Slot{});
}

uint32_t SlotTable::bucket_of(const PairKey& key, uint32_t bank) const {
  const auto kb = key_bytes(key);
  const uint32_t h = bank == 0 ? crc32<kCrc32Ieee>(kb) : crc32<kCrc32C>(kb);
  return h & (geo_.buckets_per_bank - 1);
}

uint32_t SlotTable::fingerprint_of(const PairKey& key) const {
  const auto kb = key_bytes(key);
  return crc32<kCrc32Q>(kb) & ((1u << geo_.fp_bits) - 1);
}

std::optional<SlotLocation> SlotTable::find_fp(uint32_t fp, const std::array<uint32_t, 2>& bucket) const {
  for (uint32_t bank = 0; bank < 2; ++bank)
    for (uint32_t way = 0; way < geo_.ways; ++way) {
      const SlotLocation l{bank, bucket[bank], way};
      const Slot& s = slots_[loc_index(l)];
      if (s.valid && s.fp == fp) return l;
    }
  return std::nullopt;
}

std::optional<SlotLocation> SlotTable::find(const PairKey& key) const {
  return find_fp(fingerprint_of(key), {bucket_of(key, 0), bucket_of(key, 1)});
}

UpsertResult SlotTable::upsert(const PairKey& key, uint32_t phi, uint32_t w, uint32_t epoch) {
  const uint32_t fp = fingerprint_of(key);
  const std::array<uint32_t, 2> bucket{bucket_of(key, 0), bucket_of(key, 1)};
  if (auto l = find_fp(fp, bucket)) {
    Slot& s = at(*l);
    UpsertResult r{Upsert::updated, int64_t{phi} - int64_t{s.phi}, int64_t{w} - int64_t{s.w}};
    s.phi = phi;
    s.w = w;
    s.epoch = epoch;
    return r;
  }
  for (uint32_t bank = 0; bank < 2; ++bank)
    for (uint32_t way = 0; way < geo_.ways; ++way) {
      Slot& s = at({bank, bucket[bank], way});
      if (s.valid) continue;
      s = Slot{true, fp, phi, w, epoch};
      ++used_;
      return {Upsert::inserted, int64_t{phi}, int64_t{w}};
    }
  return {Upsert::uncounted, 0, 0};
}

RemoveResult SlotTable::remove(const PairKey& key) {
  const auto l = find(key);
  if (!l) return {};
  Slot& s = at(*l);
  const RemoveResult r{true, s.phi, s.w};
  s = Slot{};
  --used_;
  return r;
}

AgeResult SlotTable::age(uint32_t current_epoch) { return age(current_epoch, 0, geo_.buckets_per_bank); }

AgeResult SlotTable::age(uint32_t current_epoch, size_t first_bucket, size_t n_buckets) {
  AgeResult r;
  if (current_epoch < 2) return r;  // no slot can be older than the previous epoch yet
  const uint32_t stale_below = current_epoch - 1;  // keep epochs current−1 and current
  const size_t end = std::min<size_t>(geo_.buckets_per_bank, first_bucket + std::min<size_t>(n_buckets, geo_.buckets_per_bank));
  for (uint32_t bank = 0; bank < 2; ++bank)
    for (size_t b = first_bucket; b < end; ++b)
      for (uint32_t way = 0; way < geo_.ways; ++way) {
        Slot& s = at({bank, static_cast<uint32_t>(b), way});
        if (!s.valid || s.epoch >= stale_below) continue;
        r.phi += s.phi;
        r.w += s.w;
        ++r.removed;
        s = Slot{};
        --used_;
      }
  return r;
}

void SlotTable::load(std::span<const Slot> slots) {
  if (slots.size() != slots_.size()) throw std::invalid_argument("slot table: load size does not match geometry");
  slots_.assign(slots.begin(), slots.end());
  used_ = static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.valid; }));
}

}  // namespace ufab::swmodel
