// Conformance-vector files (vector_io.hpp).
#include "tests/p4/vector_io.hpp"

#include <pcap/pcap.h>

#include <concepts>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "probe/wire.hpp"

namespace ufab::p4vec {

using swmodel::DropReason;
using swmodel::LinkCounters;
using swmodel::Slot;
using swmodel::SwitchState;

std::string write_pcap(const std::vector<Packet>& pkts) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) throw std::runtime_error("pcap: open_memstream failed");
  pcap_t* p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  pcap_dumper_t* d = pcap_dump_fopen(p, f);
  if (!d) {
    std::fclose(f);
    std::free(buf);
    pcap_close(p);
    throw std::runtime_error("pcap: pcap_dump_fopen failed");
  }
  for (const Packet& k : pkts) {
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(k.time / kSec);
    h.ts.tv_usec = static_cast<suseconds_t>(k.time % kSec);  // nanoseconds with PCAP_TSTAMP_PRECISION_NANO
    h.caplen = h.len = static_cast<bpf_u_int32>(k.bytes.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, k.bytes.data());
  }
  pcap_dump_close(d);  // closes f, which finalises buf
  pcap_close(p);
  std::string out(buf, len);
  std::free(buf);
  return out;
}

std::vector<Packet> read_pcap(const std::string& file_bytes) {
  std::string copy = file_bytes;
  FILE* f = fmemopen(copy.data(), copy.size(), "rb");
  if (!f) throw std::runtime_error("pcap: fmemopen failed");
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, err);
  if (!p) {
    std::fclose(f);
    throw std::runtime_error(std::string("pcap: ") + err);
  }
  std::vector<Packet> out;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(p, &h, &data)) == 1)
    out.push_back({static_cast<Nanos>(h->ts.tv_sec) * kSec + static_cast<Nanos>(h->ts.tv_usec),
                   std::vector<uint8_t>(data, data + h->caplen)});
  pcap_close(p);  // closes f
  if (rc != PCAP_ERROR_BREAK) throw std::runtime_error("pcap: truncated or corrupt file");
  return out;
}

std::string ip_text(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." + std::to_string((ip >> 8) & 0xff) +
         "." + std::to_string(ip & 0xff);
}

uint32_t ip_from_text(const std::string& s) {
  uint32_t ip = 0, part = 0;
  int dots = 0, digits = 0;
  for (char c : s) {
    if (c == '.') {
      if (digits == 0 || ++dots > 3) throw std::runtime_error("bad IPv4 address " + s);
      ip = (ip << 8) | part;
      part = 0;
      digits = 0;
    } else if (c >= '0' && c <= '9' && digits < 3) {
      part = part * 10 + static_cast<uint32_t>(c - '0');
      ++digits;
      if (part > 255) throw std::runtime_error("bad IPv4 address " + s);
    } else {
      throw std::runtime_error("bad IPv4 address " + s);
    }
  }
  if (dots != 3 || digits == 0) throw std::runtime_error("bad IPv4 address " + s);
  return (ip << 8) | part;
}

const char* drop_name(DropReason r) {
  switch (r) {
    case DropReason::malformed: return "malformed";
    case DropReason::route_exhausted: return "route_exhausted";
    case DropReason::bad_port: return "bad_port";
    case DropReason::port_down: return "port_down";
    case DropReason::no_route: return "no_route";
    case DropReason::failure_unroutable: return "failure_unroutable";
    case DropReason::count_: break;
  }
  return "unknown";
}

namespace {

DropReason drop_from_name(const std::string& n) {
  for (size_t i = 0; i < swmodel::kDropReasons; ++i)
    if (n == drop_name(static_cast<DropReason>(i))) return static_cast<DropReason>(i);
  throw std::runtime_error("unknown drop reason " + n);
}

// Link counters in declaration order; one table keeps writer and reader in step.
struct CounterField {
  const char* name;
  uint64_t LinkCounters::*field;
};
constexpr CounterField kLinkCounters[] = {
    {"tx_packets", &LinkCounters::tx_packets},       {"tx_bytes", &LinkCounters::tx_bytes},
    {"probes_stamped", &LinkCounters::probes_stamped}, {"queries", &LinkCounters::queries},
    {"pairs_inserted", &LinkCounters::pairs_inserted}, {"pairs_updated", &LinkCounters::pairs_updated},
    {"pairs_uncounted", &LinkCounters::pairs_uncounted}, {"finishes_found", &LinkCounters::finishes_found},
    {"finishes_unknown", &LinkCounters::finishes_unknown}, {"pairs_aged", &LinkCounters::pairs_aged},
    {"hops_exhausted", &LinkCounters::hops_exhausted},
};

// WireError values that can index malformed[] (names from wire::to_string).
constexpr size_t kWireErrors = static_cast<size_t>(wire::WireError::bad_field) + 1;

// Typed, range-checked member access: nlohmann's get<> would convert a
// float, a negative number or an out-of-range value silently.
[[noreturn]] void bad_member(const std::string& key, const char* want) {
  throw std::runtime_error("json: \"" + key + "\" is not " + want);
}
template <std::unsigned_integral T>
void read_to(const Json& o, const std::string& key, T& out) {
  const Json& v = o.at(key);
  if (!v.is_number_unsigned()) bad_member(key, "an unsigned integer");
  const auto x = v.get<uint64_t>();
  if (x > std::numeric_limits<T>::max()) bad_member(key, "in range");
  out = static_cast<T>(x);
}
template <std::unsigned_integral T = uint64_t>
T uint_at(const Json& o, const std::string& key) {
  T out{};
  read_to(o, key, out);
  return out;
}
bool bool_at(const Json& o, const std::string& key) {
  const Json& v = o.at(key);
  if (!v.is_boolean()) bad_member(key, "a boolean");
  return v.get<bool>();
}
const std::string& string_at(const Json& o, const std::string& key) {
  const Json& v = o.at(key);
  if (!v.is_string()) bad_member(key, "a string");
  return v.get_ref<const std::string&>();
}
const Json& array_at(const Json& o, const std::string& key) {
  const Json& v = o.at(key);
  if (!v.is_array()) bad_member(key, "an array");
  return v;
}
const Json& object_at(const Json& o, const std::string& key) {
  const Json& v = o.at(key);
  if (!v.is_object()) bad_member(key, "an object");
  return v;
}
template <std::unsigned_integral T>
T uint_item(const Json& v, const char* array_key) {
  if (!v.is_number_unsigned()) bad_member(std::string(array_key) + "[]", "an unsigned integer");
  const auto x = v.get<uint64_t>();
  if (x > std::numeric_limits<T>::max()) bad_member(std::string(array_key) + "[]", "in range");
  return static_cast<T>(x);
}

}  // namespace

std::string to_text(const Json& j) { return j.dump(2) + '\n'; }

Json parse_json(std::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    throw std::runtime_error(std::string("json: ") + e.what());
  }
}

Json state_to_json(const SwitchState& s, const swmodel::SlotGeometry& geo) {
  Json ports = Json::array();
  for (size_t p = 0; p < s.links.size(); ++p) {
    const auto& l = s.links[p];
    Json ctr = Json::object();
    for (const auto& c : kLinkCounters) ctr[c.name] = l.counters.*c.field;
    Json slots = Json::array();
    const size_t per_bank = l.slots.size() / 2;
    for (size_t i = 0; i < l.slots.size(); ++i) {
      const Slot& sl = l.slots[i];
      if (!sl.valid) continue;
      // Slot i is bank-major, then bucket, then way (slot_table.hpp loc_index).
      Json o = Json::object();
      o["bank"] = i / per_bank;
      o["bucket"] = i % per_bank / geo.ways;
      o["way"] = i % geo.ways;
      o["fp"] = sl.fp;
      o["phi"] = sl.phi;
      o["w"] = sl.w;
      o["epoch"] = sl.epoch;
      slots.push_back(std::move(o));
    }
    Json tx = Json::object();
    tx["win_start_ns"] = l.tx.win_start;
    tx["win_bytes"] = l.tx.win_bytes;
    tx["rate_mbps"] = l.tx.rate;
    Json o = Json::object();
    o["port"] = p;
    o["up"] = static_cast<bool>(s.port_up[p]);
    o["cap_code"] = l.cap_code;
    o["phi_sum"] = l.phi_sum;
    o["w_sum"] = l.w_sum;
    o["tx"] = std::move(tx);
    o["counters"] = std::move(ctr);
    o["slots"] = std::move(slots);
    ports.push_back(std::move(o));
  }
  Json drops = Json::object();
  for (size_t i = 0; i < swmodel::kDropReasons; ++i) drops[drop_name(static_cast<DropReason>(i))] = s.counters.drops[i];
  Json malformed = Json::object();
  for (size_t i = 1; i < kWireErrors; ++i)
    malformed[std::string(wire::to_string(static_cast<wire::WireError>(i)))] = s.counters.malformed[i];
  Json counters = Json::object();
  counters["ufab_forwarded"] = s.counters.ufab_forwarded;
  counters["l3_forwarded"] = s.counters.l3_forwarded;
  counters["failures_generated"] = s.counters.failures_generated;
  counters["drops"] = std::move(drops);
  counters["malformed"] = std::move(malformed);
  Json j = Json::object();
  j["epoch"] = s.epoch;
  j["counters"] = std::move(counters);
  j["ports"] = std::move(ports);
  return j;
}

SwitchState state_from_json(const Json& j, const swmodel::SlotGeometry& geo) {
  if (!j.is_object()) throw std::runtime_error("state: not a JSON object");
  SwitchState s;
  read_to(j, "epoch", s.epoch);
  const Json& c = object_at(j, "counters");
  read_to(c, "ufab_forwarded", s.counters.ufab_forwarded);
  read_to(c, "l3_forwarded", s.counters.l3_forwarded);
  read_to(c, "failures_generated", s.counters.failures_generated);
  const Json& drops = object_at(c, "drops");
  for (size_t i = 0; i < swmodel::kDropReasons; ++i)
    read_to(drops, drop_name(static_cast<DropReason>(i)), s.counters.drops[i]);
  const Json& malformed = object_at(c, "malformed");
  for (size_t i = 1; i < kWireErrors; ++i)
    read_to(malformed, std::string(wire::to_string(static_cast<wire::WireError>(i))), s.counters.malformed[i]);
  for (const Json& p : array_at(j, "ports")) {
    if (!p.is_object()) throw std::runtime_error("state: a port is not a JSON object");
    if (uint_at(p, "port") != s.links.size()) throw std::runtime_error("state: ports out of order");
    s.port_up.push_back(bool_at(p, "up"));
    swmodel::LinkState::State l;
    read_to(p, "cap_code", l.cap_code);
    read_to(p, "phi_sum", l.phi_sum);
    read_to(p, "w_sum", l.w_sum);
    const Json& tx = object_at(p, "tx");
    read_to(tx, "win_start_ns", l.tx.win_start);
    read_to(tx, "win_bytes", l.tx.win_bytes);
    read_to(tx, "rate_mbps", l.tx.rate);
    const Json& ctr = object_at(p, "counters");
    for (const auto& f : kLinkCounters) read_to(ctr, f.name, l.counters.*f.field);
    l.slots.assign(geo.slots(), Slot{});
    for (const Json& sl : array_at(p, "slots")) {
      if (!sl.is_object()) throw std::runtime_error("state: a slot is not a JSON object");
      const uint64_t bank = uint_at(sl, "bank"), bucket = uint_at(sl, "bucket"), way = uint_at(sl, "way");
      if (bank > 1 || bucket >= geo.buckets_per_bank || way >= geo.ways)
        throw std::runtime_error("state: slot location out of range");
      const size_t i = (bank * geo.buckets_per_bank + bucket) * geo.ways + way;
      l.slots[i] = Slot{true, uint_at<uint32_t>(sl, "fp"), uint_at<uint32_t>(sl, "phi"), uint_at<uint32_t>(sl, "w"),
                        uint_at<uint32_t>(sl, "epoch")};
    }
    s.links.push_back(std::move(l));
  }
  return s;
}

Json case_to_json(const CaseSpec& c) {
  const auto& g = c.config;
  Json caps = Json::array();
  for (uint8_t code : g.cap_codes) caps.push_back(code);
  Json routes = Json::array();
  for (const Route& r : c.routes) {
    Json ports = Json::array();
    for (uint16_t p : r.ports) ports.push_back(p);
    Json o = Json::object();
    o["dst_ip"] = ip_text(r.dst_ip);
    o["ports"] = std::move(ports);
    routes.push_back(std::move(o));
  }
  Json events = Json::array();
  size_t in_index = 0, out_index = 0;
  for (const Event& e : c.events) {
    Json o = Json::object();
    if (e.kind == Event::Kind::tick) {
      o["kind"] = "tick";
      o["time_ns"] = e.time;
    } else {
      o["kind"] = "packet";
      o["in_pcap_index"] = in_index++;
      o["time_ns"] = e.time;
      o["in_port"] = e.in_port;
      o["queue_bytes"] = e.queue_bytes;
      if (e.result.forward) {
        o["result"] = "forward";
        o["out_pcap_index"] = out_index++;
        o["out_port"] = e.result.port;
      } else {
        o["result"] = "drop";
        o["reason"] = drop_name(e.result.reason);
      }
    }
    events.push_back(std::move(o));
  }
  Json config = Json::object();
  config["n_ports"] = g.n_ports;
  config["default_cap_code"] = g.default_cap_code;
  config["cap_codes"] = std::move(caps);
  config["buckets_per_bank"] = g.slots.buckets_per_bank;
  config["ways"] = g.slots.ways;
  config["fp_bits"] = g.slots.fp_bits;
  config["aging_period_ns"] = g.aging_period;
  config["tx_shift"] = g.tx_shift;
  config["udp_port"] = g.udp_port;
  Json j = Json::object();
  j["case"] = c.name;
  j["what"] = c.what;
  j["config"] = std::move(config);
  j["l3_routes"] = std::move(routes);
  j["events"] = std::move(events);
  return j;
}

CaseSpec case_from_json(const Json& j) {
  if (!j.is_object()) throw std::runtime_error("case: not a JSON object");
  CaseSpec c;
  c.name = string_at(j, "case");
  c.what = string_at(j, "what");
  const Json& g = object_at(j, "config");
  read_to(g, "n_ports", c.config.n_ports);
  read_to(g, "default_cap_code", c.config.default_cap_code);
  for (const Json& code : array_at(g, "cap_codes")) c.config.cap_codes.push_back(uint_item<uint8_t>(code, "cap_codes"));
  read_to(g, "buckets_per_bank", c.config.slots.buckets_per_bank);
  read_to(g, "ways", c.config.slots.ways);
  read_to(g, "fp_bits", c.config.slots.fp_bits);
  read_to(g, "aging_period_ns", c.config.aging_period);
  read_to(g, "tx_shift", c.config.tx_shift);
  read_to(g, "udp_port", c.config.udp_port);
  for (const Json& r : array_at(j, "l3_routes")) {
    if (!r.is_object()) throw std::runtime_error("case: a route is not a JSON object");
    Route route{ip_from_text(string_at(r, "dst_ip")), {}};
    for (const Json& p : array_at(r, "ports")) route.ports.push_back(uint_item<uint16_t>(p, "ports"));
    c.routes.push_back(std::move(route));
  }
  for (const Json& e : array_at(j, "events")) {
    if (!e.is_object()) throw std::runtime_error("case: an event is not a JSON object");
    Event ev;
    read_to(e, "time_ns", ev.time);
    const std::string& kind = string_at(e, "kind");
    if (kind == "tick") {
      ev.kind = Event::Kind::tick;
    } else if (kind == "packet") {
      read_to(e, "in_port", ev.in_port);
      read_to(e, "queue_bytes", ev.queue_bytes);
      const std::string& result = string_at(e, "result");
      if (result == "forward")
        ev.result = swmodel::Decision::to(uint_at<uint16_t>(e, "out_port"));
      else if (result == "drop")
        ev.result = swmodel::Decision::drop(drop_from_name(string_at(e, "reason")));
      else
        throw std::runtime_error("case: unknown event result " + result);
    } else {
      throw std::runtime_error("case: unknown event kind " + kind);
    }
    c.events.push_back(ev);
  }
  return c;
}

}  // namespace ufab::p4vec
