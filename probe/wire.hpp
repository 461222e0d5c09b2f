// The uFAB wire format (paper App. G, design-notes §4.4/§4.5), one definition
// shared by the edge, the switch reference model, ns-3 and the FPGA golden
// model. docs/wire-format.md has the byte diagrams; p4/include mirrors it.
//
// Frame: Ethernet | IPv4 | UDP (dst kUdpPort) | tunnel shim (8 B)
//        | source route (2 + 2*n B) | payload
// payload = the tenant's inner Ethernet frame (shim.next == kNextData)
//         or a uFAB control message  (shim.next == kNextControl).
//
// Control message: 32-byte fixed header then n_hop 16-byte hop records.
// All multi-byte fields are big-endian (network order). Units: probe/units.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ufab::wire {

inline constexpr uint16_t kUdpPort = 7341;     // default outer UDP dst port
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kMaxHops = 15;         // nHop is 4 bits
inline constexpr size_t kMaxLabels = 15;

enum class MsgType : uint8_t {
  probe = 1,       // sender -> receiver, stamped by every switch
  response = 2,    // receiver -> sender, reflects the probe's hop records
  finish = 3,      // sender -> receiver, every switch subtracts the pair
  finish_ack = 4,  // receiver -> sender, reflects finish with per-hop ACK bits
  failure = 5,     // switch -> sender, a link on the path is down
};

enum class WireError : uint8_t {
  ok = 0,
  truncated,           // buffer shorter than the header or its declared length
  bad_version,         // version field is not kVersion
  bad_type,            // type is not one of MsgType
  bad_hop_count,       // n_hop is 0 or > kMaxHops
  bad_hop_index,       // hop_index > n_hop
  bad_label_count,     // source route with 0 or > kMaxLabels labels
  bad_label_index,     // next-label pointer > label count
  bad_next,            // shim.next is neither data nor control
  not_ufab,            // not Ethernet/IPv4/UDP to the uFAB port
  buffer_too_small,    // encoder: output buffer cannot hold the message
  bad_field,           // encoder: a value does not fit its wire field (shim VNI > 24 bits,
                       // IPv4 total length > 65535); added last so earlier values keep their numbers
};
std::string_view to_string(WireError e);

// ---- tunnel shim (8 bytes) ----
inline constexpr uint8_t kNextData = 0;
inline constexpr uint8_t kNextControl = 1;
struct TunnelShim {
  uint8_t next = kNextData;   // kNextData or kNextControl
  uint32_t vni = 0;           // tenant (24 bits)
  uint32_t pair_id = 0;       // VM-pair id at the sending edge (data and control)
};
inline constexpr size_t kShimBytes = 8;

// ---- source route: n labels of 16 bits, consumed hop by hop ----
struct SourceRoute {
  uint8_t n_labels = 0;
  uint8_t next = 0;                         // index of the label for the next hop
  std::array<uint16_t, kMaxLabels> label{}; // egress port at each hop
  size_t wire_bytes() const { return 2 + 2 * static_cast<size_t>(n_labels); }
};

// ---- per-hop telemetry record (16 bytes) ----
inline constexpr uint8_t kHopAck = 0x1;        // finish processed at this hop
inline constexpr uint8_t kHopStamped = 0x2;    // the switch stamped this record
inline constexpr uint8_t kHopUncounted = 0x4;  // slot table could not hold the pair
struct HopRecord {
  uint32_t w = 0;        // probe: pair's w^l (64 B units); after the switch: W_l
  uint32_t phi = 0;      // Phi_l (1/64 token)
  uint32_t tx = 0;       // tx_l (Mb/s, 24 bits)
  uint32_t q = 0;        // q_l (64 B units, 24 bits)
  uint8_t cap_code = 0;  // capacity code (4 bits)
  uint8_t flags = 0;     // kHop* (4 bits)
  uint8_t port = 0;      // ingress port at this hop (lets a switch route a failure notice back)
  bool operator==(const HopRecord&) const = default;
};
inline constexpr size_t kHopBytes = 16;

// ---- control message ----
inline constexpr uint8_t kMsgNewPair = 0x1;  // first probe of the pair on this path
inline constexpr uint8_t kMsgRetry = 0x2;    // retransmitted finish
inline constexpr uint8_t kMsgQuery = 0x4;    // candidate-path probe: stamp, but do not register the pair (§3.5)
struct Message {
  MsgType type = MsgType::probe;
  uint8_t n_hop = 0;      // hop records carried (path length)
  uint8_t flags = 0;      // kMsg*
  uint8_t hop_index = 0;  // next record a switch stamps
  uint32_t phi = 0;       // probe/finish: sender token; response: receiver-admitted
  uint32_t pair_id = 0;
  uint32_t seq = 0;
  uint64_t timestamp_ns = 0;  // sender's clock at send, echoed
  uint64_t bytes_sent = 0;    // sender's data-byte counter at send, echoed
  std::array<HopRecord, kMaxHops> hop{};
  size_t wire_bytes() const { return kMsgHeaderBytes + kHopBytes * n_hop; }
  static constexpr size_t kMsgHeaderBytes = 32;
  // Equal when equal on the wire: the header and the first n_hop records.
  bool operator==(const Message& o) const {
    if (type != o.type || n_hop != o.n_hop || flags != o.flags || hop_index != o.hop_index || phi != o.phi ||
        pair_id != o.pair_id || seq != o.seq || timestamp_ns != o.timestamp_ns || bytes_sent != o.bytes_sent)
      return false;
    for (size_t i = 0; i < n_hop && i < kMaxHops; ++i)
      if (!(hop[i] == o.hop[i])) return false;
    return true;
  }
};

// Encoders return the number of bytes written, or 0 with *err set.
size_t encode_shim(const TunnelShim&, std::span<uint8_t> out, WireError* err = nullptr);
size_t encode_route(const SourceRoute&, std::span<uint8_t> out, WireError* err = nullptr);
size_t encode_message(const Message&, std::span<uint8_t> out, WireError* err = nullptr);
// Decoders never read past in.size(); *consumed gets the bytes used.
WireError decode_shim(std::span<const uint8_t> in, TunnelShim& out, size_t* consumed = nullptr);
WireError decode_route(std::span<const uint8_t> in, SourceRoute& out, size_t* consumed = nullptr);
WireError decode_message(std::span<const uint8_t> in, Message& out, size_t* consumed = nullptr);

// In-place access for the switch: validate the header once, then read/write
// one hop record of an encoded message without decoding the rest.
WireError check_message(std::span<const uint8_t> msg);
HopRecord read_hop(std::span<const uint8_t> msg, size_t i);   // precondition: check_message ok, i < n_hop
void write_hop(std::span<uint8_t> msg, size_t i, const HopRecord&);

// ---- outer headers ----
struct OuterAddrs {
  std::array<uint8_t, 6> src_mac{}, dst_mac{};
  uint32_t src_ip = 0, dst_ip = 0;  // host order
  uint16_t src_port = 0;            // ECMP pinning: path chosen by outer UDP source port
  uint16_t dst_port = kUdpPort;
};
inline constexpr size_t kOuterBytes = 14 + 20 + 8;
// Writes Ethernet/IPv4/UDP for a payload of payload_len bytes (IPv4 checksum filled, UDP checksum 0).
size_t encode_outer(const OuterAddrs&, size_t payload_len, std::span<uint8_t> out, WireError* err = nullptr);

// A parsed uFAB frame: offsets into the original buffer.
struct FrameView {
  OuterAddrs outer;
  TunnelShim shim;
  SourceRoute route;
  size_t route_offset = 0;    // where the source route starts
  size_t payload_offset = 0;  // inner frame or control message
  size_t payload_len = 0;
};
// WireError::not_ufab for a well-formed frame that is not uFAB traffic
// (other ethertype, IP protocol, fragment or UDP port): forward it unchanged.
WireError parse_frame(std::span<const uint8_t> frame, FrameView& out, uint16_t udp_port = kUdpPort);

}  // namespace ufab::wire
