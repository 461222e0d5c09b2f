// The response a probe gets when every hop of its path reports the same
// link: W_l = 40000 B, Phi_l = phi tokens, idle (tx_l = 0), queue q bytes,
// 10 Gb/s (capacity code 5); the receiver admits `admitted` (wire units;
// UNBOUND by default). Used by the VmPair timer and message tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "control/vm_pair.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"
#include "probe/wire.hpp"

namespace ufab::test {

inline wire::Message uniform_response(wire::Message m, uint32_t admitted = kWireUnbound, double phi = 8, double q = 0) {
  for (size_t i = 0; i < m.n_hop; ++i) {
    m.hop[i].w = wire::window_to_wire(40000);
    m.hop[i].phi = wire::tokens_to_wire(phi);
    m.hop[i].tx = wire::tx_to_wire(0);
    m.hop[i].q = wire::queue_to_wire(static_cast<uint64_t>(q));
    m.hop[i].cap_code = 5;
    m.hop[i].flags = wire::kHopStamped;
  }
  m.hop_index = m.n_hop;
  return wire::reflect(m, admitted);
}

}  // namespace ufab::test
