// Log-linear latency histogram (HDR-style): exact below 64 ns, then 32
// sub-buckets per power of two (relative error < 1/32 ~ 3%). Fixed size, no
// allocation per sample; percentiles walk the counts once.
#pragma once

#include <array>
#include <algorithm>
#include <bit>
#include <cstdint>

namespace ufab::traffic {

class LatencyHist {
 public:
  static constexpr int kSub = 32;
  static constexpr int kLinear = 2 * kSub;        // values 0..63 have their own bucket
  static constexpr int kBuckets = kLinear + 58 * kSub;

  static int bucket_of(uint64_t v) {
    if (v < static_cast<uint64_t>(kLinear)) return static_cast<int>(v);
    const int msb = 63 - std::countl_zero(v);  // >= 6
    const int shift = msb - 5;                 // top 6 bits kept: v >> shift in [32, 63]
    return kLinear + (shift - 1) * kSub + static_cast<int>((v >> shift) - kSub);
  }
  // The middle of a bucket's range (its lower bound for the exact ones).
  static uint64_t value_of(int b) {
    if (b < kLinear) return static_cast<uint64_t>(b);
    const int shift = (b - kLinear) / kSub + 1;
    const uint64_t top = static_cast<uint64_t>((b - kLinear) % kSub + kSub);
    return (top << shift) + ((uint64_t{1} << shift) >> 1);
  }

  void add(uint64_t v) {
    ++counts_[static_cast<size_t>(bucket_of(v))];
    ++n_;
    if (v > max_) max_ = v;
    sum_ += v;
  }
  void merge(const LatencyHist& o) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    n_ += o.n_;
    sum_ += o.sum_;
    if (o.max_ > max_) max_ = o.max_;
  }
  // q in [0, 1]: the smallest bucket value with at least q of the samples at or below it; 0 when empty.
  uint64_t percentile(double q) const {
    if (n_ == 0) return 0;
    const auto rank = static_cast<uint64_t>(q * static_cast<double>(n_));
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += counts_[static_cast<size_t>(b)];
      if (seen > rank || seen == n_) return std::min(value_of(b), max_);
    }
    return max_;
  }
  uint64_t count() const { return n_; }
  uint64_t max() const { return max_; }
  double mean() const { return n_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(n_); }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t n_ = 0, max_ = 0, sum_ = 0;
};

}  // namespace ufab::traffic
