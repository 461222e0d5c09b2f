#include "pipeline/stats.hpp"

#include <cinttypes>

namespace ufab::pipeline {

std::string_view to_string(Drop d) {
  switch (d) {
    case Drop::spoofed: return "spoofed";
    case Drop::malformed: return "malformed";
    case Drop::not_ufab: return "not_ufab";
    case Drop::not_ipv4: return "not_ipv4";
    case Drop::unknown_pair: return "unknown_pair";
    case Drop::unknown_vm: return "unknown_vm";
    case Drop::incoming_full: return "incoming_full";
    case Drop::queue_full: return "queue_full";
    case Drop::mbuf_exhausted: return "mbuf_exhausted";
    case Drop::no_headroom: return "no_headroom";
    case Drop::tx_full: return "tx_full";
    case Drop::link_down: return "link_down";
    case Drop::ring_full: return "ring_full";
    case Drop::unknown_vlan: return "unknown_vlan";
    case Drop::arp_unanswered: return "arp_unanswered";
    case Drop::nd_unanswered: return "nd_unanswered";
    case Drop::local_scope: return "local_scope";
    case Drop::pair_removed: return "pair_removed";
    case Drop::too_big: return "too_big";
    case Drop::count_: break;
  }
  return "?";
}

void EdgeStats::add(const EdgeStats& o) {
  if (ports.size() < o.ports.size()) ports.resize(o.ports.size());
  for (size_t p = 0; p < o.ports.size(); ++p) {
    PortStats& a = ports[p];
    const PortStats& b = o.ports[p];
    a.rx += b.rx, a.rx_bytes += b.rx_bytes, a.tx += b.tx, a.tx_bytes += b.tx_bytes;
    for (size_t d = 0; d < kDrops; ++d) a.drops[d] += b.drops[d];
  }
  generated += o.generated, absorbed += o.absorbed;
  encapsulated += o.encapsulated, decapsulated += o.decapsulated, reflected += o.reflected;
  arp_replied += o.arp_replied, nd_replied += o.nd_replied, local_delivered += o.local_delivered;
  ptb_sent += o.ptb_sent;
  incoming_reused += o.incoming_reused;
  token_rounds += o.token_rounds;
  token_rounds_stretched += o.token_rounds_stretched;
  token_vm_assignments += o.token_vm_assignments;
  pair_polls += o.pair_polls, pair_poll_cuts += o.pair_poll_cuts;
  bypassed += o.bypassed;
  handed_off += o.handed_off, taken_over += o.taken_over;
  marked += o.marked;
  classify_lookups += o.classify_lookups;
  rxq_polled += o.rxq_polled, misqueued += o.misqueued;
}

uint64_t EdgeStats::rx() const {
  uint64_t n = 0;
  for (const PortStats& p : ports) n += p.rx;
  return n;
}

uint64_t EdgeStats::tx() const {
  uint64_t n = 0;
  for (const PortStats& p : ports) n += p.tx;
  return n;
}

uint64_t EdgeStats::dropped(Drop d) const {
  uint64_t n = 0;
  for (const PortStats& p : ports) n += p.drops[static_cast<size_t>(d)];
  return n;
}

uint64_t EdgeStats::dropped() const {
  uint64_t n = 0;
  for (size_t d = 0; d < kDrops; ++d) n += dropped(static_cast<Drop>(d));
  return n;
}

void print_stats(std::FILE* out, const char* tag, Nanos t, const EdgeStats& s, uint64_t queued) {
  const uint64_t rx = s.rx(), tx = s.tx(), dropped = s.dropped();
  const bool conserved = rx + s.generated == tx + queued + dropped + s.absorbed;
  std::fprintf(out,
               "ufab-edge %s t=%" PRIu64 " rx=%" PRIu64 " tx=%" PRIu64 " queued=%" PRIu64 " dropped=%" PRIu64
               " absorbed=%" PRIu64 " generated=%" PRIu64 " conserved=%d encap=%" PRIu64 " decap=%" PRIu64
               " reflected=%" PRIu64 " token_rounds=%" PRIu64 " token_rounds_stretched=%" PRIu64
               " token_vm_assignments=%" PRIu64 " pair_polls=%" PRIu64 " pair_poll_cuts=%" PRIu64 " bypassed=%" PRIu64
               " classify_lookups=%" PRIu64 " arp_replied=%" PRIu64 " nd_replied=%" PRIu64 " local_delivered=%" PRIu64
               " incoming_reused=%" PRIu64 " ptb_sent=%" PRIu64,
               tag, t, rx, tx, queued, dropped, s.absorbed, s.generated, conserved ? 1 : 0, s.encapsulated,
               s.decapsulated, s.reflected, s.token_rounds, s.token_rounds_stretched, s.token_vm_assignments,
               s.pair_polls, s.pair_poll_cuts, s.bypassed, s.classify_lookups, s.arp_replied,
               s.nd_replied, s.local_delivered, s.incoming_reused, s.ptb_sent);
  for (size_t d = 0; d < kDrops; ++d)
    if (const uint64_t n = s.dropped(static_cast<Drop>(d)); n != 0)
      std::fprintf(out, " drop.%s=%" PRIu64, to_string(static_cast<Drop>(d)).data(), n);
  std::fputc('\n', out);
  std::fflush(out);
}

void print_port_stats(std::FILE* out, const EdgeStats& s, const std::vector<uint8_t>* shown) {
  for (size_t p = 0; p < s.ports.size(); ++p) {
    const PortStats& ps = s.ports[p];
    if (shown != nullptr && (p >= shown->size() || (*shown)[p] == 0) && !ps.counted()) continue;
    std::fprintf(out, "ufab-edge port=%zu rx=%" PRIu64 " rx_bytes=%" PRIu64 " tx=%" PRIu64 " tx_bytes=%" PRIu64, p, ps.rx,
                 ps.rx_bytes, ps.tx, ps.tx_bytes);
    for (size_t d = 0; d < kDrops; ++d)
      if (ps.drops[d] != 0) std::fprintf(out, " drop.%s=%" PRIu64, to_string(static_cast<Drop>(d)).data(), ps.drops[d]);
    std::fputc('\n', out);
  }
  std::fflush(out);
}

}  // namespace ufab::pipeline
