// Conformance-vector files (tests/p4/README.md): switch state <-> JSON, the
// case sidecar (configuration, L3 routes, event list with ingress/egress
// ports) and pcap files in memory (libpcap, nanosecond timestamps).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "control/clock.hpp"
#include "p4/model/switch_model.hpp"

namespace ufab::p4vec {

// JSON values of the vector files (nlohmann/json). Objects keep insertion
// order, so regenerated files compare byte for byte.
using Json = nlohmann::ordered_json;
// The file text: two-space indentation, one member or element per line,
// UTF-8 unescaped, ending with "\n".
std::string to_text(const Json& j);
// Throws std::runtime_error on malformed text.
Json parse_json(std::string_view text);

struct Packet {
  Nanos time = 0;
  std::vector<uint8_t> bytes;
  bool operator==(const Packet&) const = default;
};
// Ethernet (DLT_EN10MB) pcap with nanosecond timestamps, as file bytes.
std::string write_pcap(const std::vector<Packet>& pkts);
std::vector<Packet> read_pcap(const std::string& file_bytes);  // throws std::runtime_error

// Everything the P4 registers hold (README "State snapshots"): epoch,
// port up/down, per port C'_l, Φ_l, W_l, the tx registers, counters and the
// valid slots (bank, bucket, way, fingerprint, φ, w, epoch), switch counters.
// The readers throw std::runtime_error on a value of the wrong type or out of
// its field's range, nlohmann::json::out_of_range on a missing key.
Json state_to_json(const swmodel::SwitchState& s, const swmodel::SlotGeometry& geo);
swmodel::SwitchState state_from_json(const Json& j, const swmodel::SlotGeometry& geo);

struct Route {
  uint32_t dst_ip = 0;
  std::vector<uint16_t> ports;
};
struct Event {
  enum class Kind : uint8_t { packet, tick } kind = Kind::packet;
  Nanos time = 0;
  uint16_t in_port = 0;         // packet: ingress port
  uint64_t queue_bytes = 0;     // packet: egress queue depth reported by the TM
  swmodel::Decision result{};   // packet: expected outcome (forward + egress port, or drop reason)
};
struct CaseSpec {
  std::string name;
  std::string what;             // one-line description (paper section)
  swmodel::SwitchConfig config;
  std::vector<Route> routes;
  std::vector<Event> events;
};
Json case_to_json(const CaseSpec& c);
CaseSpec case_from_json(const Json& j);

std::string ip_text(uint32_t ip);
uint32_t ip_from_text(const std::string& s);
const char* drop_name(swmodel::DropReason r);

}  // namespace ufab::p4vec
