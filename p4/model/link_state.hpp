// State μFAB-C keeps per egress link l (§3.6, §4.2, Table 2): the capacity
// code C'_l, the demand summaries Φ_l and W_l, the tx_l estimator, the slot
// table of counted VM-pairs, and counters. Φ_l and W_l are exact integer sums
// in wire units (1/64 token, 64 B) over the live slots, kept in 64 bits and
// saturated to 32 only when stamped (units.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "p4/model/slot_table.hpp"
#include "p4/model/tx_rate.hpp"

namespace ufab::swmodel {

struct LinkCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t probes_stamped = 0;    // probe records written (incl. queries)
  uint64_t queries = 0;           // kMsgQuery probes: stamped, not registered
  uint64_t pairs_inserted = 0;
  uint64_t pairs_updated = 0;
  uint64_t pairs_uncounted = 0;   // probes whose pair found no free slot
  uint64_t finishes_found = 0;
  uint64_t finishes_unknown = 0;  // finish for a pair not held (still acked)
  uint64_t pairs_aged = 0;
  uint64_t hops_exhausted = 0;    // probe/finish with hop_index == n_hop
  bool operator==(const LinkCounters&) const = default;
};

class LinkState {
 public:
  LinkState(uint8_t cap_code, SlotGeometry geo, uint32_t tx_shift)
      : cap_code_(cap_code), table_(geo), tx_(tx_shift) {}

  // Probe (design-notes §4.1): upsert and apply the exact new − old deltas.
  UpsertResult register_pair(const PairKey& key, uint32_t phi, uint32_t w, uint32_t epoch);
  // Finish (design-notes §4.3): subtract exactly what the pair's slot held.
  RemoveResult finish_pair(const PairKey& key);
  // Aging (§4.2): sweep buckets [first, first + n) (or all) and subtract.
  AgeResult age(uint32_t current_epoch);
  AgeResult age(uint32_t current_epoch, size_t first_bucket, size_t n_buckets);
  // Every packet leaving the port feeds tx_l.
  void count_tx(uint64_t bytes, Nanos now);

  uint8_t cap_code() const { return cap_code_; }
  void set_cap_code(uint8_t c) { cap_code_ = c & 0xf; }
  uint64_t phi_sum() const { return phi_sum_; }   // Φ_l, exact
  uint64_t w_sum() const { return w_sum_; }       // W_l, exact
  uint32_t phi_wire() const { return wire::sat32(phi_sum_); }
  uint32_t w_wire() const { return wire::sat32(w_sum_); }
  uint32_t tx_wire() const { return tx_.rate_mbps(); }
  const TxRateEstimator& tx() const { return tx_; }
  const SlotTable& table() const { return table_; }
  const LinkCounters& counters() const { return ctr_; }
  LinkCounters& counters() { return ctr_; }

  // Snapshot / restore for conformance vectors (README "State snapshots").
  struct State {
    uint8_t cap_code = 0;
    uint64_t phi_sum = 0, w_sum = 0;
    TxRateState tx;
    LinkCounters counters;
    std::vector<Slot> slots;
    bool operator==(const State&) const = default;
  };
  State snapshot() const;
  // Throws std::invalid_argument if the slots do not match the geometry or
  // the sums are not the sums over the live slots.
  void restore(const State& s);

 private:
  void apply(int64_t d_phi, int64_t d_w);

  uint8_t cap_code_;
  uint64_t phi_sum_ = 0;
  uint64_t w_sum_ = 0;
  SlotTable table_;
  TxRateEstimator tx_;
  LinkCounters ctr_;
};

}  // namespace ufab::swmodel
