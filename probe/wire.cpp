// uFAB wire-format codec (paper App. G, design-notes §4.4/§4.5). The byte
// layouts implemented here are drawn in docs/wire-format.md; every offset
// below matches a row of those diagrams.
#include "probe/wire.hpp"

#include <bit>
#include <cstring>

#include "probe/units.hpp"

namespace ufab::wire {
namespace {

// ---- big-endian helpers (callers have already checked the bounds) ----
// Loads go through memcpy + byte swap: one load and one bswap per field on
// the response path instead of a shift/or per byte.
uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v;
}
uint16_t get16(std::span<const uint8_t> b, size_t o) {
  return static_cast<uint16_t>((b[o] << 8) | b[o + 1]);
}
uint32_t get24(std::span<const uint8_t> b, size_t o) {
  return (uint32_t{b[o]} << 16) | (uint32_t{b[o + 1]} << 8) | b[o + 2];
}
uint32_t get32(std::span<const uint8_t> b, size_t o) { return load_be32(b.data() + o); }
uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}
void put16(std::span<uint8_t> b, size_t o, uint16_t v) {
  b[o] = static_cast<uint8_t>(v >> 8);
  b[o + 1] = static_cast<uint8_t>(v);
}
void put24(std::span<uint8_t> b, size_t o, uint32_t v) {
  b[o] = static_cast<uint8_t>(v >> 16);
  b[o + 1] = static_cast<uint8_t>(v >> 8);
  b[o + 2] = static_cast<uint8_t>(v);
}
void put32(std::span<uint8_t> b, size_t o, uint32_t v) {
  b[o] = static_cast<uint8_t>(v >> 24);
  put24(b, o + 1, v);
}
void put64(std::span<uint8_t> b, size_t o, uint64_t v) {
  put32(b, o, static_cast<uint32_t>(v >> 32));
  put32(b, o + 4, static_cast<uint32_t>(v));
}

size_t fail(WireError* err, WireError e) {
  if (err) *err = e;
  return 0;
}
size_t done(WireError* err, size_t n) {
  if (err) *err = WireError::ok;
  return n;
}

bool valid_type(uint8_t t) { return t >= 1 && t <= 5; }

// Header checks shared by encode_message, decode_message and check_message.
WireError check_header(uint8_t type, uint8_t n_hop, uint8_t hop_index) {
  if (!valid_type(type)) return WireError::bad_type;
  if (n_hop == 0 || n_hop > kMaxHops) return WireError::bad_hop_count;
  if (hop_index > n_hop) return WireError::bad_hop_index;
  return WireError::ok;
}

// Hop record, 16 bytes (docs/wire-format.md "Hop record"). tx and q saturate
// at 24 bits (a larger value is "at least this much", never a small wrapped
// one); cap_code and flags are 4-bit fields and are masked.
void put_hop(std::span<uint8_t> b, size_t o, const HopRecord& h) {
  put32(b, o + 0, h.w);
  put32(b, o + 4, h.phi);
  put24(b, o + 8, sat24(h.tx));
  put24(b, o + 11, sat24(h.q));
  b[o + 14] = static_cast<uint8_t>(((h.cap_code & 0xf) << 4) | (h.flags & 0xf));
  b[o + 15] = h.port;
}
// Two 8-byte loads per record: x = w | phi, y = tx(24) | q(24) | cap:flags | port.
HopRecord get_hop(const uint8_t* p) {
  const uint64_t x = load_be64(p);
  const uint64_t y = load_be64(p + 8);
  HopRecord h;
  h.w = static_cast<uint32_t>(x >> 32);
  h.phi = static_cast<uint32_t>(x);
  h.tx = static_cast<uint32_t>(y >> 40);
  h.q = static_cast<uint32_t>(y >> 16) & kMax24;
  h.cap_code = static_cast<uint8_t>((y >> 12) & 0xf);
  h.flags = static_cast<uint8_t>((y >> 8) & 0xf);
  h.port = static_cast<uint8_t>(y);
  return h;
}
HopRecord get_hop(std::span<const uint8_t> b, size_t o) { return get_hop(b.data() + o); }

// RFC 1071 ones'-complement sum over an IPv4 header.
uint16_t ipv4_checksum(std::span<const uint8_t> hdr) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < hdr.size(); i += 2) sum += get16(hdr, i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

constexpr size_t kEthBytes = 14;
constexpr size_t kIpBytes = 20;
constexpr size_t kUdpBytes = 8;
constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint8_t kIpProtoUdp = 17;
constexpr uint16_t kIpDf = 0x4000;
constexpr uint16_t kIpMfAndOffset = 0x3fff;  // MF flag | fragment offset

}  // namespace

std::string_view to_string(WireError e) {
  switch (e) {
    case WireError::ok: return "ok";
    case WireError::truncated: return "truncated";
    case WireError::bad_version: return "bad_version";
    case WireError::bad_type: return "bad_type";
    case WireError::bad_hop_count: return "bad_hop_count";
    case WireError::bad_hop_index: return "bad_hop_index";
    case WireError::bad_label_count: return "bad_label_count";
    case WireError::bad_label_index: return "bad_label_index";
    case WireError::bad_next: return "bad_next";
    case WireError::not_ufab: return "not_ufab";
    case WireError::buffer_too_small: return "buffer_too_small";
    case WireError::bad_field: return "bad_field";
  }
  return "unknown";
}

// ---- tunnel shim: [ver:4|next:4] [vni:24] [pair_id:32] ----
size_t encode_shim(const TunnelShim& s, std::span<uint8_t> out, WireError* err) {
  if (s.next != kNextData && s.next != kNextControl) return fail(err, WireError::bad_next);
  if (s.vni > kMax24) return fail(err, WireError::bad_field);  // a masked VNI would cross tenants
  if (out.size() < kShimBytes) return fail(err, WireError::buffer_too_small);
  out[0] = static_cast<uint8_t>((kVersion << 4) | s.next);
  put24(out, 1, s.vni);
  put32(out, 4, s.pair_id);
  return done(err, kShimBytes);
}

WireError decode_shim(std::span<const uint8_t> in, TunnelShim& out, size_t* consumed) {
  if (in.size() < kShimBytes) return WireError::truncated;
  if ((in[0] >> 4) != kVersion) return WireError::bad_version;
  const uint8_t next = in[0] & 0xf;
  if (next != kNextData && next != kNextControl) return WireError::bad_next;
  out.next = next;
  out.vni = get24(in, 1);
  out.pair_id = get32(in, 4);
  if (consumed) *consumed = kShimBytes;
  return WireError::ok;
}

// ---- source route (design-notes §4.5): [n_labels:8] [next:8] label[n]:16 ----
size_t encode_route(const SourceRoute& r, std::span<uint8_t> out, WireError* err) {
  if (r.n_labels == 0 || r.n_labels > kMaxLabels) return fail(err, WireError::bad_label_count);
  if (r.next > r.n_labels) return fail(err, WireError::bad_label_index);
  const size_t n = r.wire_bytes();
  if (out.size() < n) return fail(err, WireError::buffer_too_small);
  out[0] = r.n_labels;
  out[1] = r.next;
  for (size_t i = 0; i < r.n_labels; ++i) put16(out, 2 + 2 * i, r.label[i]);
  return done(err, n);
}

WireError decode_route(std::span<const uint8_t> in, SourceRoute& out, size_t* consumed) {
  if (in.size() < 2) return WireError::truncated;
  const uint8_t n = in[0];
  if (n == 0 || n > kMaxLabels) return WireError::bad_label_count;
  if (in[1] > n) return WireError::bad_label_index;
  if (in.size() < 2 + 2 * size_t{n}) return WireError::truncated;
  SourceRoute r;
  r.n_labels = n;
  r.next = in[1];
  for (size_t i = 0; i < n; ++i) r.label[i] = get16(in, 2 + 2 * i);
  out = r;
  if (consumed) *consumed = r.wire_bytes();
  return WireError::ok;
}

// ---- control message (App. G, widened per design-notes §4.4) ----
size_t encode_message(const Message& m, std::span<uint8_t> out, WireError* err) {
  const WireError e = check_header(static_cast<uint8_t>(m.type), m.n_hop, m.hop_index);
  if (e != WireError::ok) return fail(err, e);
  const size_t n = m.wire_bytes();
  if (out.size() < n) return fail(err, WireError::buffer_too_small);
  out[0] = static_cast<uint8_t>((static_cast<uint8_t>(m.type) << 4) | m.n_hop);
  out[1] = m.flags;
  out[2] = m.hop_index;
  out[3] = kVersion;
  put32(out, 4, m.phi);
  put32(out, 8, m.pair_id);
  put32(out, 12, m.seq);
  put64(out, 16, m.timestamp_ns);
  put64(out, 24, m.bytes_sent);
  for (size_t i = 0; i < m.n_hop; ++i) put_hop(out, Message::kMsgHeaderBytes + kHopBytes * i, m.hop[i]);
  return done(err, n);
}

WireError check_message(std::span<const uint8_t> msg) {
  if (msg.size() < Message::kMsgHeaderBytes) return WireError::truncated;
  if (msg[3] != kVersion) return WireError::bad_version;
  const uint8_t n_hop = msg[0] & 0xf;
  const WireError e = check_header(static_cast<uint8_t>(msg[0] >> 4), n_hop, msg[2]);
  if (e != WireError::ok) return e;
  if (msg.size() < Message::kMsgHeaderBytes + kHopBytes * n_hop) return WireError::truncated;
  return WireError::ok;
}

WireError decode_message(std::span<const uint8_t> in, Message& out, size_t* consumed) {
  const WireError e = check_message(in);
  if (e != WireError::ok) return e;
  // Straight into out (no temporary: this runs once per response). Records
  // past n_hop are left as they were; Message::operator== ignores them.
  Message& m = out;
  m.type = static_cast<MsgType>(in[0] >> 4);
  m.n_hop = in[0] & 0xf;
  m.flags = in[1];
  m.hop_index = in[2];
  m.phi = get32(in, 4);
  m.pair_id = get32(in, 8);
  m.seq = get32(in, 12);
  m.timestamp_ns = load_be64(in.data() + 16);
  m.bytes_sent = load_be64(in.data() + 24);
  // n from the local copy: a store into m.hop[] could alias m.n_hop for the
  // compiler, which would then reload it every record.
  const size_t n = m.n_hop;
  const uint8_t* rec = in.data() + Message::kMsgHeaderBytes;  // check_message: n records fit
  for (size_t i = 0; i < n; ++i, rec += kHopBytes) m.hop[i] = get_hop(rec);
  if (consumed) *consumed = m.wire_bytes();
  return WireError::ok;
}

// In-place hop access for the switch (§3.6): after check_message, a switch
// reads the sender's w^l/phi from record i and writes W_l/Phi_l/tx/q/C back.
// Out-of-range i (past n_hop or past the buffer) reads an empty record and
// writes nothing, so a violated precondition cannot touch memory.
HopRecord read_hop(std::span<const uint8_t> msg, size_t i) {
  const size_t o = Message::kMsgHeaderBytes + kHopBytes * i;
  if (msg.empty() || i >= size_t{msg[0] & 0xfu} || msg.size() < o + kHopBytes) return {};
  return get_hop(msg, o);
}

void write_hop(std::span<uint8_t> msg, size_t i, const HopRecord& h) {
  const size_t o = Message::kMsgHeaderBytes + kHopBytes * i;
  if (msg.empty() || i >= size_t{msg[0] & 0xfu} || msg.size() < o + kHopBytes) return;
  put_hop(msg, o, h);
}

// ---- outer Ethernet / IPv4 / UDP ----
size_t encode_outer(const OuterAddrs& a, size_t payload_len, std::span<uint8_t> out, WireError* err) {
  if (payload_len > 0xffff - kIpBytes - kUdpBytes) return fail(err, WireError::bad_field);
  if (out.size() < kOuterBytes) return fail(err, WireError::buffer_too_small);
  for (size_t i = 0; i < 6; ++i) {
    out[i] = a.dst_mac[i];
    out[6 + i] = a.src_mac[i];
  }
  put16(out, 12, kEtherIpv4);
  const auto ip = out.subspan(kEthBytes, kIpBytes);
  ip[0] = 0x45;  // version 4, IHL 5
  ip[1] = 0;     // DSCP/ECN
  put16(ip, 2, static_cast<uint16_t>(kIpBytes + kUdpBytes + payload_len));
  put16(ip, 4, 0);  // identification: unused with DF (RFC 6864)
  put16(ip, 6, kIpDf);
  ip[8] = 64;  // TTL
  ip[9] = kIpProtoUdp;
  put16(ip, 10, 0);
  put32(ip, 12, a.src_ip);
  put32(ip, 16, a.dst_ip);
  put16(ip, 10, ipv4_checksum(ip));
  const auto udp = out.subspan(kEthBytes + kIpBytes, kUdpBytes);
  put16(udp, 0, a.src_port);
  put16(udp, 2, a.dst_port);
  put16(udp, 4, static_cast<uint16_t>(kUdpBytes + payload_len));
  put16(udp, 6, 0);  // no UDP checksum (IPv4 allows it; the inner frame has its own)
  return done(err, kOuterBytes);
}

WireError parse_frame(std::span<const uint8_t> f, FrameView& out, uint16_t udp_port) {
  if (f.size() < kEthBytes) return WireError::truncated;
  if (get16(f, 12) != kEtherIpv4) return WireError::not_ufab;  // ARP, IPv6, 802.1Q/ad tags, ...
  if (f.size() < kEthBytes + kIpBytes) return WireError::truncated;
  const auto ip = f.subspan(kEthBytes);
  const size_t ihl = size_t{ip[0] & 0xfu} * 4;
  if ((ip[0] >> 4) != 4 || ihl < kIpBytes) return WireError::not_ufab;
  if (ip[9] != kIpProtoUdp || (get16(ip, 6) & kIpMfAndOffset) != 0) return WireError::not_ufab;
  const size_t ip_total = get16(ip, 2);
  if (ip.size() < ihl || ip_total > ip.size()) return WireError::truncated;  // bytes past ip_total are Ethernet padding
  if (ip_total < ihl + kUdpBytes) return WireError::truncated;
  const auto udp = ip.subspan(ihl, ip_total - ihl);
  if (get16(udp, 2) != udp_port) return WireError::not_ufab;
  const size_t udp_len = get16(udp, 4);
  if (udp_len < kUdpBytes || udp_len > udp.size()) return WireError::truncated;
  const auto body = udp.subspan(kUdpBytes, udp_len - kUdpBytes);

  FrameView v;
  for (size_t i = 0; i < 6; ++i) {
    v.outer.dst_mac[i] = f[i];
    v.outer.src_mac[i] = f[6 + i];
  }
  v.outer.src_ip = get32(ip, 12);
  v.outer.dst_ip = get32(ip, 16);
  v.outer.src_port = get16(udp, 0);
  v.outer.dst_port = get16(udp, 2);
  size_t shim_len = 0, route_len = 0;
  if (WireError e = decode_shim(body, v.shim, &shim_len); e != WireError::ok) return e;
  if (WireError e = decode_route(body.subspan(shim_len), v.route, &route_len); e != WireError::ok) return e;
  const size_t body_offset = kEthBytes + ihl + kUdpBytes;
  v.route_offset = body_offset + shim_len;
  v.payload_offset = v.route_offset + route_len;
  v.payload_len = body.size() - shim_len - route_len;
  out = v;
  return WireError::ok;
}

}  // namespace ufab::wire
