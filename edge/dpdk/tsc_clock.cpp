#include "edge/dpdk/tsc_clock.hpp"

#include <rte_cycles.h>

#include <stdexcept>

namespace ufab::dpdk {

TscClock::TscClock() : hz_(rte_get_tsc_hz()), t0_(rte_get_tsc_cycles()) {
  if (hz_ < 1'000'000) throw std::runtime_error("TSC frequency unknown or below 1 MHz");
  mult_ = (kSec << 32) / hz_;
}

uint64_t TscClock::read_tsc() { return rte_get_tsc_cycles(); }

}  // namespace ufab::dpdk
