// The receiving edge's answer to a probe or finish (design-notes §4.6): the
// message comes back with every hop record the switches stamped, as a response
// carrying the receiver's admitted token (Alg. 1 TokenAdmission), or as a
// finish-ack carrying the per-hop ACK bits.
#pragma once

#include "probe/wire.hpp"

namespace ufab::wire {

// admitted_phi: receiver-admitted token in wire units, 0xffffffff = UNBOUND.
inline Message reflect(const Message& in, uint32_t admitted_phi) {
  Message out = in;
  out.type = in.type == MsgType::finish ? MsgType::finish_ack : MsgType::response;
  if (out.type == MsgType::response) out.phi = admitted_phi;
  return out;
}

}  // namespace ufab::wire
