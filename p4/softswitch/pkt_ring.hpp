// Fixed-capacity FIFO sized once at start-up: the egress queue and the delay
// line of a port. Never allocates after construction; single-threaded (the
// switch runs on one lcore, as one pipeline).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ufab::core {

template <typename T>
class PktRing {
 public:
  explicit PktRing(size_t min_capacity) : slots_(std::bit_ceil(min_capacity < 2 ? size_t{2} : min_capacity)) {
    mask_ = slots_.size() - 1;
  }
  bool empty() const { return head_ == tail_; }
  bool full() const { return tail_ - head_ == slots_.size(); }
  size_t size() const { return tail_ - head_; }
  size_t capacity() const { return slots_.size(); }
  // Caller checks full() first.
  void push(const T& v) { slots_[tail_++ & mask_] = v; }
  const T& front() const { return slots_[head_ & mask_]; }
  T pop() { return slots_[head_++ & mask_]; }

 private:
  std::vector<T> slots_;
  size_t mask_ = 0;
  uint64_t head_ = 0, tail_ = 0;
};

}  // namespace ufab::core
