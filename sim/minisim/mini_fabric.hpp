// A small discrete-event packet simulator of a uFAB fabric, built only from
// the algorithm core: every sender runs ufab::VmPair, every link is an egress
// port of a swmodel::SwitchModel that stamps real wire-format probes, and the
// receiver reflects probes as responses (probe/reflect.hpp). It drives the
// closed-loop tests and `deploy/ufab demo` until the DPDK dataplane exists.
//
// Model (documented simplifications):
//  - A link is a FIFO queue, a serializer at its capacity and a propagation
//    delay; the probe is stamped when it starts serialization (egress, where
//    the queue depth is known, App. G / §4.2).
//  - Each host paces its NIC at host_bps and serves its pairs round robin
//    among those whose window allows (control messages first).
//  - Responses and finish-acks return to the sender after the reverse
//    propagation delay of the path without queueing (the reverse direction
//    carries no data in these scenarios).
//  - All links belong to one SwitchModel; a label of the source route is the
//    link id. The ingress port of hop 0 is n_links + host.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "control/params.hpp"
#include "control/token_control.hpp"
#include "control/vm_pair.hpp"
#include "p4/model/switch_model.hpp"

namespace ufab::sim {

struct LinkSpec {
  uint64_t cap_bps = 10'000'000'000ull;  // physical capacity C'_l (must have a capacity code)
  Nanos prop = 5 * kUs;                  // propagation delay
};

struct PairSpec {
  std::string name;
  uint32_t host = 0;                          // sending host (shares its NIC)
  uint32_t vni = 1;                           // tenant
  double token = 1;                           // phi (tokens)
  std::vector<std::vector<uint16_t>> paths;   // candidate paths: link ids
  Nanos start = 0, stop = ~Nanos{0};          // demand interval
  double demand_bps = 0;                      // 0: always backlogged
  // Hose model (App. E): when FabricSpec::vm_tokens is set, the pair's token
  // comes from Algorithm 1 run for its source VM and admitted by its
  // destination VM; `token` is then only the starting value.
  uint32_t src_vm = 0, dst_vm = 0;
};

struct FabricSpec {
  std::vector<LinkSpec> links;
  std::vector<PairSpec> pairs;
  uint32_t n_hosts = 1;
  uint64_t host_bps = 10'000'000'000ull;
  uint32_t mtu = 1500;          // data frame bytes on the wire
  Nanos base_rtt = 24 * kUs;    // T, given to every pair
  Nanos poll_every = 2 * kUs;   // VmPair::poll period
  EdgeParams edge{};
  uint32_t switch_tx_shift = 2; // tx-rate interval 8 us << shift
  std::vector<double> vm_tokens;  // phi_alpha per VM id; empty: fixed pair tokens
  Nanos token_period = 32 * kUs;  // Algorithm 1 round period (§5.1)
  Nanos aging_period = 10 * kSec;
  uint64_t seed = 1;
};

struct LinkStats {
  uint64_t queue_bytes = 0;       // now
  uint64_t max_queue_bytes = 0;   // peak
  uint64_t tx_bytes = 0;
  uint64_t dropped = 0;           // dropped at a failed link
};

class MiniFabric {
 public:
  explicit MiniFabric(FabricSpec spec);
  ~MiniFabric();

  // Run the event loop until simulated time t.
  void run_until(Nanos t);
  Nanos now() const { return now_; }

  // Fail or restore a link at the current time (the switch turns probes to
  // it into failure notices; queued packets are dropped).
  void set_link_up(uint16_t link, bool up);

  size_t n_pairs() const { return pairs_.size(); }
  const VmPair& pair(size_t i) const { return *pairs_[i].vm; }
  const PairSpec& pair_spec(size_t i) const { return spec_.pairs[i]; }
  uint64_t delivered_bytes(size_t i) const { return pairs_[i].delivered; }
  uint64_t control_bytes(size_t i) const { return pairs_[i].control_bytes; }
  const LinkStats& link(size_t l) const { return links_[l].stats; }
  // Data bytes in flight on link l: sent minus delivered (measured at the
  // receivers) summed over the pairs whose active path uses l.
  uint64_t inflight_on_link(size_t l) const;
  uint64_t max_inflight_on_link(size_t l) const { return links_[l].max_inflight; }
  void reset_peaks();
  const swmodel::SwitchModel& fabric_switch() const { return *sw_; }
  const FabricSpec& spec() const { return spec_; }

 private:
  struct Packet {
    std::vector<uint8_t> frame;
    uint32_t pair = 0;
    uint16_t in_port = 0;
    uint8_t hops_left = 0;  // links still to cross
    bool control = false;   // a uFAB control message (probe, query, finish)
    int path = 0;           // candidate path index at the sender
  };
  using PacketPtr = std::shared_ptr<Packet>;
  struct Link {
    LinkSpec spec;
    std::queue<PacketPtr> q;
    bool busy = false;
    LinkStats stats;
    uint64_t max_inflight = 0;
  };
  struct PairRt {
    std::unique_ptr<VmPair> vm;
    uint64_t delivered = 0;      // data bytes that reached the receiver
    uint64_t sent = 0;           // data bytes the sender put on the wire
    uint64_t control_bytes = 0;
    Rng dither{1};               // stochastic rounding of the window to packets
    double requested = 0;        // phi_S its last probe asked the receiver for
    double admitted = kTokenUnbound;  // phi_D the receiver VM admits
    uint64_t demand_credit = 0;  // bytes the paced demand allows so far
    Nanos demand_last = 0;
  };
  struct Host {
    bool nic_busy = false;
    size_t rr = 0;
  };
  struct Event {
    Nanos t;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  void at(Nanos t, std::function<void()> fn);
  void host_send(uint32_t host);
  void wake_host(uint32_t host);
  bool backlogged(size_t pair);
  PacketPtr make_packet(size_t pair, int path, bool control, const wire::Message* m);
  void arrive(PacketPtr p, uint16_t in_port);
  void link_enqueue(uint16_t link, PacketPtr p);
  void link_start(uint16_t link);
  void deliver(PacketPtr p);
  void to_sender(size_t pair, const wire::Message& m, Nanos delay);
  void poll_all();
  void token_round();
  Nanos reverse_delay(size_t pair, int path) const;

  FabricSpec spec_;
  std::unique_ptr<swmodel::SwitchModel> sw_;
  std::vector<Link> links_;
  std::vector<PairRt> pairs_;
  std::vector<Host> hosts_;
  std::vector<std::vector<size_t>> host_pairs_;
  std::vector<std::unique_ptr<HostMigrationGate>> gates_;
  std::vector<VmTokens> senders_, receivers_;            // per VM id
  std::vector<std::vector<size_t>> vm_out_, vm_in_;      // pair indices per VM
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  Nanos now_ = 0;
  uint64_t ev_seq_ = 0;
};

}  // namespace ufab::sim
