// Pacing of a worker's data frames to the fabric at the NIC's rate. A
// μFAB-E on a NIC sends no faster than its port (§4.1); a software edge on
// a virtual port (memif, vhost) would hand a whole window to the first switch
// at once, the queue it builds (about one window) adds to every RTT sample,
// and a lone pair then settles near half of its link (deploy/fabric/README.md).
// A token bucket: credit grows at rate bytes per ns up to `depth` bytes; a
// dequeue takes at most the frames the credit allows (one at least, so a
// frame larger than the credit still leaves, and the deficit delays the next).
#pragma once

#include <algorithm>
#include <cstdint>

#include "control/clock.hpp"

namespace ufab::pipeline {

class FabricPacer {
 public:
  // rate_mbps 0: not paced. depth: bucket depth in bytes.
  void configure(double rate_mbps, double depth_bytes) {
    bytes_per_ns_ = rate_mbps * 1e6 / 8.0 / 1e9;
    depth_ = depth_bytes;
    credit_ = depth_bytes;
  }
  bool paced() const { return bytes_per_ns_ > 0; }

  // How many frames of about `frame_bytes` may leave now (0: wait).
  uint32_t allowance(Nanos now, uint32_t frame_bytes, uint32_t max_frames) {
    if (!paced()) return max_frames;
    if (now > last_) credit_ = std::min(depth_, credit_ + static_cast<double>(now - last_) * bytes_per_ns_);
    last_ = now;
    if (credit_ <= 0) return 0;
    const auto n = static_cast<uint32_t>(credit_ / std::max<uint32_t>(frame_bytes, 1)) + 1;
    return std::min(n, max_frames);
  }
  void spend(uint64_t bytes) {
    if (paced()) credit_ -= static_cast<double>(bytes);
  }

 private:
  double bytes_per_ns_ = 0, depth_ = 0, credit_ = 0;
  Nanos last_ = 0;
};

}  // namespace ufab::pipeline
