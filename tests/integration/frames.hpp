// uFAB frames for the integration tests, built with the wire library
// (probe/wire.hpp), plus the line parser for ufab-core's counter lines.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "probe/wire.hpp"
#include "tests/integration/pcap_io.hpp"

namespace ufab::itest {

wire::SourceRoute route(std::initializer_list<uint16_t> labels, uint8_t next = 0);
// Ethernet/IPv4/UDP(kUdpPort) | shim | route | payload.
Frame ufab_frame(uint32_t src_ip, uint32_t vni, uint32_t pair, const wire::SourceRoute& r, uint8_t next,
                 const std::vector<uint8_t>& payload);
// A control message with one record per w; records before hop_index look
// stamped by upstream switches (ingress ports 10, 11, ...).
wire::Message message(wire::MsgType type, uint32_t pair, uint32_t phi, std::initializer_list<uint32_t> w,
                      uint8_t hop_index = 0, uint8_t flags = 0);
Frame control(uint32_t src_ip, const wire::SourceRoute& r, const wire::Message& m, uint32_t vni = 42);
Frame data(uint32_t src_ip, uint32_t pair, const wire::SourceRoute& r, size_t inner_bytes);
// IPv4/UDP to a port other than uFAB's: plain L3 traffic.
Frame plain_udp(uint32_t dst_ip, uint16_t dst_port);

// key=value pairs of every stdout line starting with prefix.
std::map<std::string, uint64_t> parse_line(const std::string& out, const std::string& prefix);

}  // namespace ufab::itest
