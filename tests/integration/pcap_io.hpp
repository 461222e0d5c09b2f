// Ethernet pcap files for the integration tests, through libpcap.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ufab::itest {

using Frame = std::vector<uint8_t>;

// Writes frames (DLT_EN10MB), 1 µs apart. Throws std::runtime_error.
void write_pcap(const std::string& path, const std::vector<Frame>& frames);
// Reads every frame of a pcap file. Throws std::runtime_error.
std::vector<Frame> read_pcap(const std::string& path);
// The capture time of every frame, in microseconds. Throws std::runtime_error.
std::vector<uint64_t> read_pcap_times_us(const std::string& path);

}  // namespace ufab::itest
