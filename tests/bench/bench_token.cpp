// Token assignment cost per control round (Algorithm 1 sender and receiver
// sides, Algorithm 2). Target: one round for 1K pairs well below the 32 us
// token period (design-notes, §5.1 testbed).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "control/token_assignment.hpp"

namespace {

constexpr double kBu = 125e6;

// Sender set: a third demand-bounded, a third receiver-bounded at random
// admitted tokens around the fair share, a third backlogged and UNBOUND.
std::vector<ufab::PairToken> sender_pairs(size_t n, double phi) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(0.0, 2.0);
  const double share = phi / static_cast<double>(n);
  std::vector<ufab::PairToken> p(n);
  for (size_t i = 0; i < n; ++i) {
    switch (i % 3) {
      case 0: p[i] = {u(rng) * 0.5 * share * kBu, 0, ufab::kTokenUnbound}; break;
      case 1: p[i] = {1e12, 0, u(rng) * share}; break;
      default: p[i] = {1e12, 0, ufab::kTokenUnbound}; break;
    }
  }
  return p;
}

void BM_TokenAssignmentSender(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const double phi = 1000;
  std::vector<ufab::PairToken> pairs = sender_pairs(n, phi);
  std::vector<uint32_t> scratch(n);
  for (auto _ : state) {
    ufab::assign_tokens(phi, kBu, pairs, scratch);
    benchmark::DoNotOptimize(pairs.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_TokenAssignmentSender)->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_TokenAdmissionReceiver(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const double phi = 1000;
  const double share = phi / static_cast<double>(n);
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(0.0, 2.0);
  std::vector<ufab::PairToken> pairs(n);
  for (ufab::PairToken& p : pairs) p = {0, u(rng) * share, 0};  // requests around the share
  std::vector<uint32_t> scratch(n);
  for (auto _ : state) {
    ufab::admit_tokens(phi, pairs, scratch);
    benchmark::DoNotOptimize(pairs.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_TokenAdmissionReceiver)->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_TokenMultipath(benchmark::State& state) {
  // One Algorithm 2 call for a pair on 4 paths, one of them low on demand.
  std::vector<ufab::PathToken> paths{{1e12, 0}, {0.5 * kBu, 0}, {1e12, 0}, {1e12, 0}};
  for (auto _ : state) {
    ufab::assign_path_tokens(8.0, kBu, paths);
    benchmark::DoNotOptimize(paths.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(paths.size()));
}
BENCHMARK(BM_TokenMultipath);

}  // namespace
