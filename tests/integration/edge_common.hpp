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

// One DPDK telemetry request on /var/run/dpdk/<prefix>/dpdk_telemetry.v2
// (the protocol dpdk-telemetry.py speaks); "" when nobody answers.
std::string telemetry(const std::string& prefix, const std::string& cmd);
// Waits (at most `seconds`) until `path` contains `needle`.
bool wait_for_text(const std::string& path, const std::string& needle, int seconds);
// True when got holds exactly the frames of sent, each unchanged, in any
// order; every frame of sent must have its own length (which identifies it).
bool same_frames(const std::vector<Frame>& sent, const std::vector<Frame>& got);
// The unsigned number after "\"key\":" in a JSON reply (or -1).
long long json_number(const std::string& json, const std::string& key);

}  // namespace ufab::itest
