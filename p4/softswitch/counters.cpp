#include "p4/softswitch/counters.hpp"

#include <cinttypes>

#include "probe/wire.hpp"

namespace ufab::core {

std::string_view to_string(CoreDrop d) {
  switch (d) {
    case CoreDrop::queue_full: return "queue_full";
    case CoreDrop::tx_full: return "tx_full";
    case CoreDrop::oversize: return "oversize";
    case CoreDrop::no_room: return "no_room";
    case CoreDrop::link_down: return "link_down";
    case CoreDrop::too_big: return "too_big";
    case CoreDrop::count_: break;
  }
  return "?";
}

std::string_view to_string(swmodel::DropReason r) {
  using swmodel::DropReason;
  switch (r) {
    case DropReason::malformed: return "malformed";
    case DropReason::route_exhausted: return "route_exhausted";
    case DropReason::bad_port: return "bad_port";
    case DropReason::port_down: return "port_down";
    case DropReason::no_route: return "no_route";
    case DropReason::failure_unroutable: return "failure_unroutable";
    case DropReason::count_: break;
  }
  return "?";
}

uint64_t CoreStats::rx() const {
  uint64_t n = 0;
  for (const PortStats& p : ports) n += p.rx;
  return n;
}

uint64_t CoreStats::tx() const {
  uint64_t n = 0;
  for (const PortStats& p : ports) n += p.tx;
  return n;
}

uint64_t CoreStats::core_drops() const {
  uint64_t n = 0;
  for (const uint64_t d : drops) n += d;
  return n;
}

uint64_t model_drops(const swmodel::SwitchCounters& c) {
  uint64_t n = 0;
  for (const uint64_t d : c.drops) n += d;
  return n;
}

void print_stats(std::FILE* out, const char* tag, Nanos t, const CoreStats& s, const swmodel::SwitchModel& m) {
  const swmodel::SwitchCounters& c = m.counters();
  std::fprintf(out, "ufab-core %s t=%.3fs rx=%" PRIu64 " tx=%" PRIu64 " queued=%" PRIu64 " dropped=%" PRIu64, tag,
               static_cast<double>(t) / static_cast<double>(kSec), s.rx(), s.tx(), s.queued,
               model_drops(c) + s.core_drops());
  for (size_t i = 0; i < swmodel::kDropReasons; ++i)
    if (c.drops[i] != 0)
      std::fprintf(out, " drop.%s=%" PRIu64, to_string(static_cast<swmodel::DropReason>(i)).data(), c.drops[i]);
  for (size_t i = 0; i < kCoreDrops; ++i)
    if (s.drops[i] != 0) std::fprintf(out, " drop.%s=%" PRIu64, to_string(static_cast<CoreDrop>(i)).data(), s.drops[i]);
  for (size_t i = 0; i < swmodel::kWireErrorSlots; ++i)
    if (c.malformed[i] != 0)
      std::fprintf(out, " malformed.%s=%" PRIu64, wire::to_string(static_cast<wire::WireError>(i)).data(),
                   c.malformed[i]);
  std::fprintf(out, " ufab_fwd=%" PRIu64 " l3_fwd=%" PRIu64 " failures=%" PRIu64 "\n", c.ufab_forwarded,
               c.l3_forwarded, c.failures_generated);
  std::fflush(out);
}

void print_port_stats(std::FILE* out, const CoreStats& s, const swmodel::SwitchModel& m) {
  for (size_t p = 0; p < s.ports.size(); ++p) {
    const PortStats& ps = s.ports[p];
    const swmodel::LinkState& l = m.link(static_cast<uint16_t>(p));
    const swmodel::LinkCounters& lc = l.counters();
    std::fprintf(out,
                 "ufab-core port %zu rx=%" PRIu64 " tx=%" PRIu64 " tx_bytes=%" PRIu64 " queue_full=%" PRIu64
                 " peak_queue_bytes=%" PRIu64 " probes_stamped=%" PRIu64 " inserted=%" PRIu64 " updated=%" PRIu64
                 " uncounted=%" PRIu64 " aged=%" PRIu64 " Phi_l=%" PRIu64 " W_l=%" PRIu64 "\n",
                 p, ps.rx, ps.tx, ps.tx_bytes, ps.queue_full, ps.peak_queue_bytes, lc.probes_stamped,
                 lc.pairs_inserted, lc.pairs_updated, lc.pairs_uncounted, lc.pairs_aged, l.phi_sum(), l.w_sum());
  }
  std::fflush(out);
}

}  // namespace ufab::core
