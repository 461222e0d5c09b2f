// --capture P=FILE: every frame received on port P written to a pcap file,
// as a mirror port would show it (the frame as it arrived, dated when its
// burst was taken). The order in the file is the order in which the port's
// peer sent (a memif or vhost ring is FIFO), whatever the host does to the
// timing later. For tests and debugging: each frame costs a copy into a
// stdio buffer (libpcap's dump file), so it is off by default.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "control/clock.hpp"

namespace ufab::core {

// True when ufab-core was built with libpcap (--capture needs it).
bool capture_supported();

class PortCapture {
 public:
  // Opens `path` for writing (DLT_EN10MB). `wall_offset_ns` turns the loop's
  // clock into wall-clock time for the pcap timestamps. Throws
  // std::runtime_error naming the file.
  PortCapture(const std::string& path, int64_t wall_offset_ns);
  ~PortCapture();
  PortCapture(const PortCapture&) = delete;
  PortCapture& operator=(const PortCapture&) = delete;

  // One frame: `caplen` bytes at `data` of a frame of `len` bytes, seen at `now`.
  void write(const uint8_t* data, uint32_t caplen, uint32_t len, Nanos now);
  // Flushes and closes; false (with the reason in `error`) when a write failed.
  bool close(std::string& error);
  uint64_t frames() const { return frames_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  int64_t wall_offset_ns_ = 0;
  uint64_t frames_ = 0;
};

}  // namespace ufab::core
