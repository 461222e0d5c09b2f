// ufab-edge's counters: per port and per drop reason, and the packet
// conservation check (issue 4 §5): every frame received is sent, queued,
// dropped for one reason, or absorbed (a response, finish-ack or failure
// notice that ends at its VmPair). Probes the edge originates are counted as
// generated, so
//     rx + generated == tx + queued + dropped + absorbed
// holds at every instant between two loop iterations.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "control/clock.hpp"

namespace ufab::pipeline {

enum class Drop : uint8_t {
  spoofed,         // a uFAB frame (probe, response, tunnel data) from a VM-side port
  malformed,       // truncated or invalid uFAB frame, multi-segment mbuf, bad inner frame
  not_ufab,        // a non-uFAB frame on the fabric port
  not_ipv4,        // a VM frame that is not IPv4 (no pair to classify it into)
  unknown_pair,    // no VM-pair for (port, src IP, dst IP), or a message for a pair we do not have
  unknown_vm,      // decapsulated frame for a VNI/IP with no local VM
  incoming_full,   // receiver-side pair table full (params.max_incoming)
  queue_full,      // the pair's flow FIFO or the scheduler's pool is full
  mbuf_exhausted,  // no mbuf for a probe
  no_headroom,     // no room in the mbuf to prepend the encapsulation
  tx_full,         // the PMD did not take the frame
  link_down,       // the PMD did not take the frame, and the port's link was down (port_link.hpp: e.g. the VM of a
                   // vhost-user port gone); tx_full where the PMD raises no link events
  ring_full,       // the ring to the owning worker (or to a port's TX lcore) was full
  unknown_vlan,    // an 802.1Q-tagged VM frame whose VLAN id names no tenant
  arp_unanswered,  // a VM's ARP frame the edge does not answer (vm_arp.cpp): not a request, not from the VM's
                   // own address, an announcement, or for an address no remote VM of the tenant with a MAC has
  nd_unanswered,   // a VM's neighbour solicitation the edge does not answer (vm_ipv6.cpp): duplicate address
                   // detection, a sender MAC no local VM has there, or a target no remote VM with a MAC has
  local_scope,     // a VM frame for its own link, with no pair (local_scope.hpp): IPv4 multicast or broadcast,
                   // IPv6 multicast or link-local, an unspecified source (DHCP, IGMP, MLD, router solicitations)
  pair_removed,    // a VM frame queued for a VM-pair whose remote VM a reload removed or moved (remote_vms.hpp)
  too_big,         // a VM frame above the VM MTU (edge.fabric_mtu less the encapsulation; too_big.hpp), answered
                   // with an ICMP "fragmentation needed" / ICMPv6 "packet too big" where that applies (ptb_sent)
  count_,
};
inline constexpr size_t kDrops = static_cast<size_t>(Drop::count_);
std::string_view to_string(Drop d);

struct PortStats {
  uint64_t rx = 0, rx_bytes = 0;
  uint64_t tx = 0, tx_bytes = 0;
  std::array<uint64_t, kDrops> drops{};
  bool counted() const {
    for (const uint64_t d : drops)
      if (d != 0) return true;
    return rx != 0 || tx != 0;
  }
};

struct EdgeStats {
  std::vector<PortStats> ports;  // indexed by DPDK port id
  uint64_t generated = 0;        // probes/queries/finishes the edge originated, and its ptb_sent
  uint64_t absorbed = 0;         // responses/finish-acks/failures handed to a VmPair
  uint64_t encapsulated = 0, decapsulated = 0, reflected = 0;
  uint64_t arp_replied = 0;      // VM ARP requests answered in a remote VM's name (proxy ARP, vm_arp.cpp)
  uint64_t nd_replied = 0;       // VM neighbour solicitations answered in a remote VM's name (vm_ipv6.cpp)
  uint64_t ptb_sent = 0;         // ICMP "fragmentation needed" / "packet too big" sent to VMs (vm_too_big.cpp)
  uint64_t local_delivered = 0;  // VM frames switched to another local VM of the tenant (vm_local.cpp)
  uint64_t incoming_reused = 0;  // receiver-side pair slots a finished pair left, taken by a new one (fabric_rx.cpp)
  uint64_t token_rounds = 0;
  uint64_t token_rounds_stretched = 0;  // Control::stretched
  uint64_t token_vm_assignments = 0;    // Control::vms_assigned: sender VMs recomputed (inputs changed)
  // The pairs' timer work (poll_pairs): pairs polled, and calls that
  // stopped, or did not start, at params.pair_poll_max_share (PollCredit).
  uint64_t pair_polls = 0, pair_poll_cuts = 0;
  uint64_t bypassed = 0;  // VM frames sent on arrival, not queued (params.sched_bypass); also in encap
  // Frames handed to another worker through a ring (dispatch or TX) and
  // taken from one. Summed over the workers, handed_off - taken_over frames
  // are inside the rings (counted as queued).
  uint64_t handed_off = 0, taken_over = 0;
  uint64_t marked = 0;           // VM frames classified by their rte_flow MARK (no hash lookup)
  // VM frames looked up in the classification table (rte_hash): those the
  // worker's cache did not hold (params.classify_cache; all with it off).
  uint64_t classify_lookups = 0;
  // Per-worker RX queues (layout.hpp, RxMode): frames polled from this
  // worker's own queue of a port, and those of them another worker owns
  // (handed over through its ring; also counted in handed_off).
  uint64_t rxq_polled = 0, misqueued = 0;

  void drop(uint16_t port, Drop d) { ++ports[port].drops[static_cast<size_t>(d)]; }
  uint64_t rx() const;
  uint64_t tx() const;
  uint64_t dropped() const;
  uint64_t dropped(Drop d) const;
  // Adds another worker's counters (same number of ports).
  void add(const EdgeStats& o);
  // Frames in the rings between workers (over the sum of every worker's stats).
  uint64_t in_rings() const { return handed_off - taken_over; }
};

// "ufab-edge <tag> t=... rx= tx= queued= dropped= absorbed= generated= conserved=1 drop.<reason>=..."
void print_stats(std::FILE* out, const char* tag, Nanos t, const EdgeStats& s, uint64_t queued);
// One line per port.
// One line per port; with `shown`, only the ports it marks and those with a
// count (a port removed at runtime, ports.hpp, keeps its counters).
void print_port_stats(std::FILE* out, const EdgeStats& s, const std::vector<uint8_t>* shown = nullptr);

}  // namespace ufab::pipeline
