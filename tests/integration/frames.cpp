#include "tests/integration/frames.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace ufab::itest {

wire::SourceRoute route(std::initializer_list<uint16_t> labels, uint8_t next) {
  wire::SourceRoute r;
  for (const uint16_t l : labels) r.label[r.n_labels++] = l;
  r.next = next;
  return r;
}

Frame ufab_frame(uint32_t src_ip, uint32_t vni, uint32_t pair, const wire::SourceRoute& r, uint8_t next,
                 const std::vector<uint8_t>& payload) {
  wire::OuterAddrs o;
  o.src_mac = {2, 0, 0, 0, 0, static_cast<uint8_t>(src_ip)};
  o.dst_mac = {2, 0, 0, 0, 1, 1};
  o.src_ip = src_ip;
  o.dst_ip = 0x0a000063;
  o.src_port = static_cast<uint16_t>(40000 + pair);
  const size_t len = wire::kShimBytes + r.wire_bytes() + payload.size();
  Frame f(wire::kOuterBytes + len);
  std::span<uint8_t> b(f);
  size_t off = wire::encode_outer(o, len, b);
  off += wire::encode_shim({next, vni, pair}, b.subspan(off));
  off += wire::encode_route(r, b.subspan(off));
  std::copy(payload.begin(), payload.end(), f.begin() + static_cast<ptrdiff_t>(off));
  return f;
}

wire::Message message(wire::MsgType type, uint32_t pair, uint32_t phi, std::initializer_list<uint32_t> w,
                      uint8_t hop_index, uint8_t flags) {
  wire::Message m;
  m.type = type;
  m.pair_id = pair;
  m.phi = phi;
  m.flags = flags;
  m.hop_index = hop_index;
  m.seq = pair * 100 + hop_index;
  m.timestamp_ns = 123456789;
  m.bytes_sent = 4096;
  for (const uint32_t x : w) {
    m.hop[m.n_hop].w = x;
    if (m.n_hop < hop_index) m.hop[m.n_hop] = {x, 7, 100, 2, 5, wire::kHopStamped, static_cast<uint8_t>(10 + m.n_hop)};
    ++m.n_hop;
  }
  return m;
}

Frame control(uint32_t src_ip, const wire::SourceRoute& r, const wire::Message& m, uint32_t vni) {
  std::vector<uint8_t> msg(m.wire_bytes());
  wire::encode_message(m, msg);
  return ufab_frame(src_ip, vni, m.pair_id, r, wire::kNextControl, msg);
}

Frame data(uint32_t src_ip, uint32_t pair, const wire::SourceRoute& r, size_t inner_bytes) {
  std::vector<uint8_t> inner(inner_bytes);
  for (size_t i = 0; i < inner.size(); ++i) inner[i] = static_cast<uint8_t>(i * 7 + pair);
  return ufab_frame(src_ip, 42, pair, r, wire::kNextData, inner);
}

Frame plain_udp(uint32_t dst_ip, uint16_t dst_port) {  // IPv4/UDP, not the uFAB port: L3 traffic
  wire::OuterAddrs o;
  o.src_mac = {2, 0, 0, 0, 9, 9};
  o.dst_mac = {2, 0, 0, 0, 1, 1};
  o.src_ip = 0x0a000009;
  o.dst_ip = dst_ip;
  o.src_port = 5353;
  o.dst_port = dst_port;
  Frame f(wire::kOuterBytes + 64, 0xab);
  wire::encode_outer(o, 64, f);
  return f;
}

std::map<std::string, uint64_t> parse_line(const std::string& out, const std::string& prefix) {
  std::map<std::string, uint64_t> kv;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream words(line.substr(prefix.size()));
    for (std::string w; words >> w;)
      if (const size_t eq = w.find('='); eq != std::string::npos)
        kv[w.substr(0, eq)] = std::strtoull(w.c_str() + eq + 1, nullptr, 10);
  }
  return kv;
}

}  // namespace ufab::itest
