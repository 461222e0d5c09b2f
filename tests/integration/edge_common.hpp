// Helpers shared by the ufab-edge integration tests: tenant frames as a VM
// sends them, EAL arguments, and the DPDK runtime directory clean-up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/integration/pcap_io.hpp"

namespace ufab::itest {

// Ethernet/IPv4/UDP from src_ip:sport to dst_ip:9 (not the uFAB port) with
// `payload` bytes of a pattern seeded by `seed`.
Frame vm_frame(uint32_t src_ip, uint32_t dst_ip, uint16_t sport, size_t payload, uint8_t seed);

std::vector<std::string> edge_eal(const std::string& prefix, const char* lcores);
// Removes /var/run/dpdk/<prefix> and /tmp/dpdk/<prefix>.
void remove_dpdk_runtime(const std::string& prefix);
void write_text(const std::string& path, const std::string& text);

}  // namespace ufab::itest
