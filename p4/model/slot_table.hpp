// The slot table: μFAB-C's record of which VM-pairs are counted in Φ_l and
// W_l of one egress link. It stands in for the paper's 2-way Bloom filter
// (§3.6, §4.2) but keeps each pair's last-registered φ and w so that value
// changes, finishes and aging subtract exactly what the pair added
// (design-notes §4.1, §4.2). See p4/model/README.md for the register layout.
//
// Geometry: two banks, each `buckets_per_bank` buckets of `ways` slots. A key
// hashes to one bucket per bank (bank 0: CRC-32, bank 1: CRC-32C, low bits)
// and carries one fingerprint (CRC-32Q, low `fp_bits` bits). A key is
// recognised by its fingerprint inside its two buckets; a new key takes the
// first free way of its bank-0 bucket, else of its bank-1 bucket, else it is
// left uncounted (the analogue of a Bloom false positive, §3.6).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ufab::swmodel {

// A VM-pair as the switch sees it: outer source IPv4 (pair ids are local to
// the sending edge), the shim's 24-bit VNI and the message's pair id.
struct PairKey {
  uint32_t src_ip = 0;
  uint32_t vni = 0;  // 24 bits
  uint32_t pair_id = 0;
  bool operator==(const PairKey&) const = default;
};
inline constexpr size_t kPairKeyBytes = 11;  // src_ip(4) | vni(3) | pair_id(4), big-endian
std::array<uint8_t, kPairKeyBytes> key_bytes(const PairKey& k);

struct SlotGeometry {
  uint32_t buckets_per_bank = 4096;  // power of two
  uint32_t ways = 4;                 // slots per bucket, 1..16
  uint32_t fp_bits = 24;             // fingerprint width, 1..24
  size_t slots() const { return size_t{2} * buckets_per_bank * ways; }
  // Register bytes if packed as in the README: a 32-bit tag cell per slot
  // (valid | epoch | fingerprint) plus a 32-bit φ and a 32-bit w cell.
  size_t tag_bytes() const { return slots() * 4; }
  size_t total_bytes() const { return slots() * 12; }
  bool operator==(const SlotGeometry&) const = default;
};

struct Slot {
  bool valid = false;
  uint32_t fp = 0;     // fingerprint of the key that holds the slot
  uint32_t phi = 0;    // last-registered φ (1/64 token)
  uint32_t w = 0;      // last-registered w^l (64 B units)
  uint32_t epoch = 0;  // aging epoch of the last probe
  bool operator==(const Slot&) const = default;
};

enum class Upsert : uint8_t { inserted, updated, uncounted };
struct UpsertResult {
  Upsert outcome = Upsert::uncounted;
  int64_t d_phi = 0;  // new − old, to add to Φ_l
  int64_t d_w = 0;    // new − old, to add to W_l
};
struct RemoveResult {
  bool found = false;
  uint32_t phi = 0;  // the values the slot held, to subtract
  uint32_t w = 0;
};
struct AgeResult {
  size_t removed = 0;
  uint64_t phi = 0;  // sums removed, to subtract
  uint64_t w = 0;
};
struct SlotLocation {
  uint32_t bank = 0, bucket = 0, way = 0;
  bool operator==(const SlotLocation&) const = default;
};

class SlotTable {
 public:
  // Throws std::invalid_argument on a geometry outside the documented ranges.
  explicit SlotTable(SlotGeometry g = {});

  // Register (key, φ, w) seen at `epoch`: update the key's slot, or claim a
  // free one, or report uncounted. Deltas are exact; a repeat changes nothing.
  UpsertResult upsert(const PairKey& key, uint32_t phi, uint32_t w, uint32_t epoch);
  // Finish (design-notes §4.3): free the key's slot, returning what it held.
  RemoveResult remove(const PairKey& key);
  // Aging (§4.2): free every slot whose last probe is older than the previous
  // epoch, i.e. epoch < current − 1 (silent for a whole period). The range
  // form sweeps buckets [first, first + n) of both banks (clipped), so the
  // control plane can spread a sweep over time.
  AgeResult age(uint32_t current_epoch);
  AgeResult age(uint32_t current_epoch, size_t first_bucket, size_t n_buckets);

  std::optional<SlotLocation> find(const PairKey& key) const;
  uint32_t bucket_of(const PairKey& key, uint32_t bank) const;
  uint32_t fingerprint_of(const PairKey& key) const;

  const SlotGeometry& geometry() const { return geo_; }
  size_t occupancy() const { return used_; }
  // All slots, bank-major then bucket then way: index = loc_index(loc).
  std::span<const Slot> slots() const { return slots_; }
  size_t loc_index(const SlotLocation& l) const {
    return (size_t{l.bank} * geo_.buckets_per_bank + l.bucket) * geo_.ways + l.way;
  }
  // Replace the contents (conformance vectors restore a snapshot). Throws
  // std::invalid_argument if the size does not match the geometry.
  void load(std::span<const Slot> slots);

 private:
  std::optional<SlotLocation> find_fp(uint32_t fp, const std::array<uint32_t, 2>& bucket) const;
  Slot& at(const SlotLocation& l) { return slots_[loc_index(l)]; }

  SlotGeometry geo_;
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

}  // namespace ufab::swmodel
