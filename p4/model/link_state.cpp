// Per-link μFAB-C state (§3.6, §4.2; design-notes §4.1–§4.3).
#include "p4/model/link_state.hpp"

#include <stdexcept>

namespace ufab::swmodel {

// Φ_l and W_l are sums over live slots, so a subtraction never exceeds the
// sum; the two's-complement add below is exact in both directions.
void LinkState::apply(int64_t d_phi, int64_t d_w) {
  phi_sum_ += static_cast<uint64_t>(d_phi);
  w_sum_ += static_cast<uint64_t>(d_w);
}

UpsertResult LinkState::register_pair(const PairKey& key, uint32_t phi, uint32_t w, uint32_t epoch) {
  const UpsertResult r = table_.upsert(key, phi, w, epoch);
  apply(r.d_phi, r.d_w);
  switch (r.outcome) {
    case Upsert::inserted: ++ctr_.pairs_inserted; break;
    case Upsert::updated: ++ctr_.pairs_updated; break;
    case Upsert::uncounted: ++ctr_.pairs_uncounted; break;
  }
  return r;
}

RemoveResult LinkState::finish_pair(const PairKey& key) {
  const RemoveResult r = table_.remove(key);
  if (r.found) {
    phi_sum_ -= r.phi;
    w_sum_ -= r.w;
    ++ctr_.finishes_found;
  } else {
    ++ctr_.finishes_unknown;
  }
  return r;
}

AgeResult LinkState::age(uint32_t current_epoch) {
  return age(current_epoch, 0, table_.geometry().buckets_per_bank);
}

AgeResult LinkState::age(uint32_t current_epoch, size_t first_bucket, size_t n_buckets) {
  const AgeResult r = table_.age(current_epoch, first_bucket, n_buckets);
  phi_sum_ -= r.phi;
  w_sum_ -= r.w;
  ctr_.pairs_aged += r.removed;
  return r;
}

void LinkState::count_tx(uint64_t bytes, Nanos now) {
  tx_.on_packet(bytes, now);
  ++ctr_.tx_packets;
  ctr_.tx_bytes += bytes;
}

LinkState::State LinkState::snapshot() const {
  const auto s = table_.slots();
  return State{cap_code_, phi_sum_, w_sum_, tx_.state(), ctr_, std::vector<Slot>(s.begin(), s.end())};
}

void LinkState::restore(const State& s) {
  uint64_t phi = 0, w = 0;
  for (const Slot& slot : s.slots)
    if (slot.valid) {
      phi += slot.phi;
      w += slot.w;
    }
  if (phi != s.phi_sum || w != s.w_sum) throw std::invalid_argument("link state: sums differ from the live slots");
  table_.load(s.slots);
  cap_code_ = s.cap_code;
  phi_sum_ = s.phi_sum;
  w_sum_ = s.w_sum;
  tx_.load(s.tx);
  ctr_ = s.counters;
}

}  // namespace ufab::swmodel
