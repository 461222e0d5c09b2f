// Tenant weight -> WFQ weight class (paper §4.1; design-notes §4.7).
#include "sched/weight_class.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ufab {

WeightClassMap::WeightClassMap() : WeightClassMap({1, 2, 4, 8, 16, 32, 64, 128}, 1.0) {}

WeightClassMap::WeightClassMap(const Weights& class_weights, double unit)
    : w_(class_weights), unit_(unit) {
  if (!(unit > 0) || !std::isfinite(unit)) {
    throw std::invalid_argument("WeightClassMap: unit must be positive and finite");
  }
  for (uint32_t i = 0; i < kWeightClasses; ++i) {
    if (w_[i] < 1 || w_[i] > kMaxClassWeight) {
      throw std::invalid_argument("WeightClassMap: class weight out of [1, 4096]");
    }
    if (i > 0 && w_[i] <= w_[i - 1]) {
      throw std::invalid_argument("WeightClassMap: class weights must strictly increase");
    }
  }
}

WeightClassMap WeightClassMap::spanning(double lo, double hi) {
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) {
    throw std::invalid_argument("WeightClassMap::spanning: need 0 < lo < hi");
  }
  const double span = hi / lo;
  if (span > kMaxClassWeight) {
    throw std::invalid_argument("WeightClassMap::spanning: hi/lo exceeds 4096");
  }
  const double base = std::floor(kMaxClassWeight / span);
  const double ratio = std::pow(span, 1.0 / (kWeightClasses - 1));
  Weights w{};
  for (uint32_t i = 0; i < kWeightClasses; ++i) {
    w[i] = static_cast<uint32_t>(std::lround(base * std::pow(ratio, i)));
  }
  w[kWeightClasses - 1] = std::min<uint32_t>(w[kWeightClasses - 1], kMaxClassWeight);
  return WeightClassMap(w, lo / base);
}

ClassMapping WeightClassMap::map(double weight) const {
  if (!(weight > 0) || !std::isfinite(weight)) {
    throw std::invalid_argument("WeightClassMap::map: weight must be positive and finite");
  }
  const double x = std::log(weight / unit_);
  uint32_t best = 0;
  double best_d = std::abs(x - std::log(static_cast<double>(w_[0])));
  for (uint32_t i = 1; i < kWeightClasses; ++i) {
    const double d = std::abs(x - std::log(static_cast<double>(w_[i])));
    if (d < best_d) {
      best = i;
      best_d = d;
    }
  }
  ClassMapping m;
  m.cls = best;
  m.class_weight = w_[best];
  m.mapped_weight = w_[best] * unit_;
  m.rel_error = m.mapped_weight / weight - 1.0;
  return m;
}

MappingReport WeightClassMap::report(std::span<const double> weights) const {
  MappingReport r;
  double sum = 0;
  for (double w : weights) {
    const ClassMapping m = map(w);
    const double e = std::abs(m.rel_error);
    r.max_abs_rel_error = std::max(r.max_abs_rel_error, e);
    sum += e;
    ++r.per_class[m.cls];
  }
  r.tenants = weights.size();
  r.mean_abs_rel_error = weights.empty() ? 0.0 : sum / static_cast<double>(weights.size());
  return r;
}

double WeightClassMap::worst_case_rel_error() const {
  double worst = 0;
  for (uint32_t i = 1; i < kWeightClasses; ++i) {
    worst = std::max(worst, std::sqrt(static_cast<double>(w_[i]) / w_[i - 1]) - 1.0);
  }
  return worst;
}

}  // namespace ufab
