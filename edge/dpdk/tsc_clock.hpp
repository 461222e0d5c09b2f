// TSC -> nanoseconds adapter: the time source the algorithm core is handed
// (`ufab::Nanos`, control/clock.hpp; the core never reads a clock itself).
// One multiply and shift per read; no syscall.
#pragma once

#include <cstdint>

#include "control/clock.hpp"

namespace ufab::dpdk {

class TscClock {
 public:
  // Calibrates against rte_get_tsc_hz(); now() starts at 0.
  TscClock();
  Nanos now() const { return to_ns(read_tsc() - t0_); }
  uint64_t hz() const { return hz_; }

 private:
  static uint64_t read_tsc();
  Nanos to_ns(uint64_t cycles) const {
    // ns = cycles * 1e9 / hz with a 32.32 fixed-point factor; 128-bit product.
    __extension__ using u128 = unsigned __int128;
    return static_cast<Nanos>((static_cast<u128>(cycles) * mult_) >> 32);
  }

  uint64_t hz_ = 0;
  uint64_t t0_ = 0;
  uint64_t mult_ = 0;  // (1e9 << 32) / hz
};

}  // namespace ufab::dpdk
