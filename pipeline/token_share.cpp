#include "pipeline/token_share.hpp"

#include <rte_lcore.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace ufab::pipeline {

AssignedQueue::AssignedQueue(uint32_t n_pairs) {
  // rte_ring names are unique per process; EdgeStates come and go in tests.
  static std::atomic<unsigned> serial{0};
  const std::string name = "ufab_asg" + std::to_string(serial.fetch_add(1));
  ring_ = rte_ring_create_elem(name.c_str(), sizeof(uint32_t), n_pairs == 0 ? 1 : n_pairs, SOCKET_ID_ANY,
                               RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  if (ring_ == nullptr) throw std::runtime_error("cannot create ring " + name + " (out of memory? raise -m)");
}

AssignedQueue::~AssignedQueue() { rte_ring_free(ring_); }

}  // namespace ufab::pipeline
