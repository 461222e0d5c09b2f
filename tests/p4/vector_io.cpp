// Conformance-vector files (vector_io.hpp).
#include "tests/p4/vector_io.hpp"

#include <pcap/pcap.h>

#include <cstdio>
#include <cstdlib>
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

}  // namespace

Json state_to_json(const SwitchState& s, const swmodel::SlotGeometry& geo) {
  Json ports = Json::array();
  for (size_t p = 0; p < s.links.size(); ++p) {
    const auto& l = s.links[p];
    Json ctr = Json::object();
    for (const auto& c : kLinkCounters) ctr.add(c.name, Json::number(l.counters.*c.field));
    Json slots = Json::array();
    const size_t per_bank = l.slots.size() / 2;
    for (size_t i = 0; i < l.slots.size(); ++i) {
      const Slot& sl = l.slots[i];
      if (!sl.valid) continue;
      // Slot i is bank-major, then bucket, then way (slot_table.hpp loc_index).
      slots.push(Json::object()
                     .add("bank", Json::number(i / per_bank))
                     .add("bucket", Json::number(i % per_bank / geo.ways))
                     .add("way", Json::number(i % geo.ways))
                     .add("fp", Json::number(sl.fp))
                     .add("phi", Json::number(sl.phi))
                     .add("w", Json::number(sl.w))
                     .add("epoch", Json::number(sl.epoch)));
    }
    ports.push(Json::object()
                   .add("port", Json::number(p))
                   .add("up", Json::boolean(s.port_up[p]))
                   .add("cap_code", Json::number(l.cap_code))
                   .add("phi_sum", Json::number(l.phi_sum))
                   .add("w_sum", Json::number(l.w_sum))
                   .add("tx", Json::object()
                                  .add("win_start_ns", Json::number(l.tx.win_start))
                                  .add("win_bytes", Json::number(l.tx.win_bytes))
                                  .add("rate_mbps", Json::number(l.tx.rate)))
                   .add("counters", std::move(ctr))
                   .add("slots", std::move(slots)));
  }
  Json drops = Json::object();
  for (size_t i = 0; i < swmodel::kDropReasons; ++i)
    drops.add(drop_name(static_cast<DropReason>(i)), Json::number(s.counters.drops[i]));
  Json malformed = Json::object();
  for (size_t i = 1; i < kWireErrors; ++i)
    malformed.add(std::string(wire::to_string(static_cast<wire::WireError>(i))), Json::number(s.counters.malformed[i]));
  return Json::object()
      .add("epoch", Json::number(s.epoch))
      .add("counters", Json::object()
                           .add("ufab_forwarded", Json::number(s.counters.ufab_forwarded))
                           .add("l3_forwarded", Json::number(s.counters.l3_forwarded))
                           .add("failures_generated", Json::number(s.counters.failures_generated))
                           .add("drops", std::move(drops))
                           .add("malformed", std::move(malformed)))
      .add("ports", std::move(ports));
}

SwitchState state_from_json(const Json& j, const swmodel::SlotGeometry& geo) {
  SwitchState s;
  s.epoch = static_cast<uint32_t>(j.at("epoch").u());
  const Json& c = j.at("counters");
  s.counters.ufab_forwarded = c.at("ufab_forwarded").u();
  s.counters.l3_forwarded = c.at("l3_forwarded").u();
  s.counters.failures_generated = c.at("failures_generated").u();
  for (size_t i = 0; i < swmodel::kDropReasons; ++i)
    s.counters.drops[i] = c.at("drops").at(drop_name(static_cast<DropReason>(i))).u();
  for (size_t i = 1; i < kWireErrors; ++i)
    s.counters.malformed[i] = c.at("malformed").at(wire::to_string(static_cast<wire::WireError>(i))).u();
  for (const Json& p : j.at("ports").arr()) {
    if (p.at("port").u() != s.links.size()) throw std::runtime_error("state: ports out of order");
    s.port_up.push_back(p.at("up").b());
    swmodel::LinkState::State l;
    l.cap_code = static_cast<uint8_t>(p.at("cap_code").u());
    l.phi_sum = p.at("phi_sum").u();
    l.w_sum = p.at("w_sum").u();
    l.tx.win_start = p.at("tx").at("win_start_ns").u();
    l.tx.win_bytes = p.at("tx").at("win_bytes").u();
    l.tx.rate = static_cast<uint32_t>(p.at("tx").at("rate_mbps").u());
    for (const auto& f : kLinkCounters) l.counters.*f.field = p.at("counters").at(f.name).u();
    l.slots.assign(geo.slots(), Slot{});
    for (const Json& sl : p.at("slots").arr()) {
      const uint64_t bank = sl.at("bank").u(), bucket = sl.at("bucket").u(), way = sl.at("way").u();
      if (bank > 1 || bucket >= geo.buckets_per_bank || way >= geo.ways)
        throw std::runtime_error("state: slot location out of range");
      const size_t i = (bank * geo.buckets_per_bank + bucket) * geo.ways + way;
      l.slots[i] = Slot{true, static_cast<uint32_t>(sl.at("fp").u()), static_cast<uint32_t>(sl.at("phi").u()),
                        static_cast<uint32_t>(sl.at("w").u()), static_cast<uint32_t>(sl.at("epoch").u())};
    }
    s.links.push_back(std::move(l));
  }
  return s;
}

Json case_to_json(const CaseSpec& c) {
  const auto& g = c.config;
  Json caps = Json::array();
  for (uint8_t code : g.cap_codes) caps.push(Json::number(code));
  Json routes = Json::array();
  for (const Route& r : c.routes) {
    Json ports = Json::array();
    for (uint16_t p : r.ports) ports.push(Json::number(p));
    routes.push(Json::object().add("dst_ip", Json::string(ip_text(r.dst_ip))).add("ports", std::move(ports)));
  }
  Json events = Json::array();
  size_t in_index = 0, out_index = 0;
  for (const Event& e : c.events) {
    Json o = Json::object();
    if (e.kind == Event::Kind::tick) {
      o.add("kind", Json::string("tick")).add("time_ns", Json::number(e.time));
    } else {
      o.add("kind", Json::string("packet"))
          .add("in_pcap_index", Json::number(in_index++))
          .add("time_ns", Json::number(e.time))
          .add("in_port", Json::number(e.in_port))
          .add("queue_bytes", Json::number(e.queue_bytes));
      if (e.result.forward)
        o.add("result", Json::string("forward"))
            .add("out_pcap_index", Json::number(out_index++))
            .add("out_port", Json::number(e.result.port));
      else
        o.add("result", Json::string("drop")).add("reason", Json::string(drop_name(e.result.reason)));
    }
    events.push(std::move(o));
  }
  return Json::object()
      .add("case", Json::string(c.name))
      .add("what", Json::string(c.what))
      .add("config", Json::object()
                         .add("n_ports", Json::number(g.n_ports))
                         .add("default_cap_code", Json::number(g.default_cap_code))
                         .add("cap_codes", std::move(caps))
                         .add("buckets_per_bank", Json::number(g.slots.buckets_per_bank))
                         .add("ways", Json::number(g.slots.ways))
                         .add("fp_bits", Json::number(g.slots.fp_bits))
                         .add("aging_period_ns", Json::number(g.aging_period))
                         .add("tx_shift", Json::number(g.tx_shift))
                         .add("udp_port", Json::number(g.udp_port)))
      .add("l3_routes", std::move(routes))
      .add("events", std::move(events));
}

CaseSpec case_from_json(const Json& j) {
  CaseSpec c;
  c.name = j.at("case").s();
  c.what = j.at("what").s();
  const Json& g = j.at("config");
  c.config.n_ports = static_cast<uint16_t>(g.at("n_ports").u());
  c.config.default_cap_code = static_cast<uint8_t>(g.at("default_cap_code").u());
  for (const Json& code : g.at("cap_codes").arr()) c.config.cap_codes.push_back(static_cast<uint8_t>(code.u()));
  c.config.slots = {static_cast<uint32_t>(g.at("buckets_per_bank").u()), static_cast<uint32_t>(g.at("ways").u()),
                    static_cast<uint32_t>(g.at("fp_bits").u())};
  c.config.aging_period = g.at("aging_period_ns").u();
  c.config.tx_shift = static_cast<uint32_t>(g.at("tx_shift").u());
  c.config.udp_port = static_cast<uint16_t>(g.at("udp_port").u());
  for (const Json& r : j.at("l3_routes").arr()) {
    Route route{ip_from_text(r.at("dst_ip").s()), {}};
    for (const Json& p : r.at("ports").arr()) route.ports.push_back(static_cast<uint16_t>(p.u()));
    c.routes.push_back(std::move(route));
  }
  for (const Json& e : j.at("events").arr()) {
    Event ev;
    ev.time = e.at("time_ns").u();
    if (e.at("kind").s() == "tick") {
      ev.kind = Event::Kind::tick;
    } else {
      ev.in_port = static_cast<uint16_t>(e.at("in_port").u());
      ev.queue_bytes = e.at("queue_bytes").u();
      ev.result = e.at("result").s() == "forward"
                      ? swmodel::Decision::to(static_cast<uint16_t>(e.at("out_port").u()))
                      : swmodel::Decision::drop(drop_from_name(e.at("reason").s()));
    }
    c.events.push_back(ev);
  }
  return c;
}

}  // namespace ufab::p4vec
