// Tenant weight -> WFQ weight class (paper §4.1 "Scaling to a large number of
// VFs"; design-notes §4.7). The μFAB-E WFQ engine has only 8 weighted queues
// with distinct weight levels; each tenant (VF) picks one. A tenant's weight
// (its guarantee in Gb/s, its tokens, ...) maps to the class whose weight is
// nearest in log space, and the relative mapping error is reported.
//
// A class weight w_i stands for the tenant weight w_i * unit. Only the ratios
// between class weights matter to the scheduler; `unit` fixes which tenant
// weight a class weight represents, so that the error can be stated.
//
// Default classes: 1, 2, 4, ..., 128 (unit 1). Powers of two span the widest
// range (128x, e.g. 1..128 Gb/s guarantees) that 8 classes can cover while
// keeping the worst-case error of a weight inside the range at
// sqrt(2) - 1 = 41.4% (at the log-midpoint between two classes), and they are
// shift-friendly for a hardware WFQ engine. When the tenants' weights span a
// narrower range, WeightClassMap::spanning(lo, hi) spreads the 8 classes
// geometrically over [lo, hi] and the error shrinks accordingly
// (e.g. [1, 10]: worst case 17.9%).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ufab {

// Number of WFQ classes of the edge scheduler (§4.1).
inline constexpr uint32_t kWeightClasses = 8;
// Largest class weight the scheduler accepts (keeps its integer virtual-time
// arithmetic exact enough; see sched/hier_scheduler.hpp).
inline constexpr uint32_t kMaxClassWeight = 4096;

struct ClassMapping {
  uint32_t cls = 0;           // 0 .. kWeightClasses-1
  uint32_t class_weight = 0;  // the integer weight of that class
  double mapped_weight = 0;   // class_weight * unit, in tenant-weight units
  double rel_error = 0;       // mapped_weight / weight - 1 (> 0: tenant gets more)
};

struct MappingReport {
  size_t tenants = 0;
  double max_abs_rel_error = 0;
  double mean_abs_rel_error = 0;
  std::array<size_t, kWeightClasses> per_class{};  // tenants per class
};

class WeightClassMap {
 public:
  using Weights = std::array<uint32_t, kWeightClasses>;

  // 1, 2, 4, ..., 128 with unit 1.
  WeightClassMap();
  // Explicit class weights: strictly increasing, in [1, kMaxClassWeight];
  // unit > 0 and finite. Throws std::invalid_argument otherwise.
  WeightClassMap(const Weights& class_weights, double unit);

  // Eight classes spread geometrically over tenant weights [lo, hi]:
  // class i stands for lo * (hi/lo)^(i/7). Integer class weights are scaled
  // up (base = floor(kMaxClassWeight / (hi/lo))) so that rounding stays small.
  // Requires 0 < lo < hi and hi/lo <= kMaxClassWeight.
  static WeightClassMap spanning(double lo, double hi);

  // Nearest class in log space (ties go to the lower class). Weights outside
  // the classes' range map to the first/last class, with a large error.
  // Throws std::invalid_argument if weight is not positive and finite.
  ClassMapping map(double weight) const;

  MappingReport report(std::span<const double> weights) const;

  // Worst |rel_error| for any weight between the smallest and the largest
  // class: max over adjacent classes a < b of sqrt(b/a) - 1.
  double worst_case_rel_error() const;

  const Weights& class_weights() const { return w_; }
  double unit() const { return unit_; }

 private:
  Weights w_;
  double unit_;
};

}  // namespace ufab
