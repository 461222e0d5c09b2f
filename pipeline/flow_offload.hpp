// rte_flow classification offload (§4.1: the NIC classifies VM frames into
// VM-pairs and the edge reads the result instead of hashing; design-notes §5).
//
// Rules, built per VM-side port:
//  - one per VM-pair whose local VM sits behind the port:
//        pattern  eth / [vlan vid] / ipv4 src is <local VM> dst is <remote VM> / end
//                 (QinQ: eth type is 0x88a8 / vlan S / vlan C / ipv4 ...)
//        actions  MARK id = <worker, pair index> / QUEUE <the owner's RX queue> / end
//    (the owner's own queue where the port has an RX queue per worker,
//    layout.hpp RxMode::steered; else queue 0);
//    With the rule installed, a frame of the pair arrives with
//    RTE_MBUF_F_RX_FDIR_ID and mbuf.hash.fdir.hi = the mark: the port's RX
//    lcore hands the frame to the worker the mark names (no parsing, no
//    lookup; dispatch.cpp), and that worker's vm_rx takes the pair from the
//    mark instead of the lookup (classify_cache.hpp, rte_hash). The mark is
//        worker << kMarkWorkerShift | index of the pair in the worker's shard
//    (24 bits in all: the MARK width of common NICs, e.g. mlx5);
//  - on each fabric port, one rule steering μFAB control frames (probes,
//    responses, finishes; shim `next` = control) to the control queue:
//        pattern  eth / ipv4 dst is <this edge> / udp dst is <uFAB port> /
//                 raw relative offset 0: shim byte 0, low nibble = kNextControl / end
//        actions  QUEUE <control queue> / end
//
// Each port is probed with rte_flow_validate, form by form, most capable
// first: `mark` (MARK + QUEUE), then `steer` (QUEUE only: the queue is chosen
// in hardware, the pair in software). A form whose rules all validate is
// created rule by rule; if the PMD refuses one, the ones created are
// destroyed and the next form is tried. A port where no form holds
// classifies in software (cache and rte_hash, as without offload). Every
// refused validate/create call is counted; the decision is printed once per
// port at start-up and again in the final report.
#pragma once

#include <rte_flow.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace ufab::pipeline {

class EdgeState;

// One rte_flow rule with the storage its items and actions point into.
// Built in place (the pointers refer to the object itself): not copyable.
struct FlowRule {
  FlowRule() = default;
  FlowRule(const FlowRule&) = delete;
  FlowRule& operator=(const FlowRule&) = delete;

  rte_flow_attr attr{};
  rte_flow_item pattern[6]{};
  rte_flow_action actions[3]{};
  // storage
  rte_flow_item_eth eth_spec{}, eth_mask{};
  rte_flow_item_vlan svlan_spec{}, svlan_mask{};
  rte_flow_item_vlan vlan_spec{}, vlan_mask{};
  rte_flow_item_ipv4 ip_spec{}, ip_mask{};
  rte_flow_item_udp udp_spec{}, udp_mask{};
  rte_flow_item_raw raw_spec{}, raw_mask{};
  uint8_t raw_pattern = 0, raw_pattern_mask = 0;
  rte_flow_action_mark mark{};
  rte_flow_action_queue queue{};
};

// The MARK id of a VM-pair: its worker (< kMarkMaxWorkers) and its index in
// that worker's shard (< 2^kMarkWorkerShift).
inline constexpr uint32_t kMarkWorkerShift = 20;
inline constexpr uint32_t kMarkMaxWorkers = 16;
inline constexpr uint32_t pair_mark(uint16_t worker, uint32_t pair) { return uint32_t{worker} << kMarkWorkerShift | pair; }
inline constexpr uint16_t mark_worker(uint32_t mark) { return static_cast<uint16_t>(mark >> kMarkWorkerShift); }
inline constexpr uint32_t mark_pair(uint32_t mark) { return mark & ((uint32_t{1} << kMarkWorkerShift) - 1); }

// A VM-pair's rule. IPs in host order; vlan 0: untagged; svlan != 0: QinQ
// (eth type 0x88a8 / vlan svlan / vlan vlan).
struct PairRuleSpec {
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t vlan = 0;
  uint32_t mark = 0;      // pair_mark(worker, pair index)
  uint16_t queue = 0;     // the pair's owning RX queue
  bool with_mark = true;  // false: QUEUE only (the `steer` form)
  uint16_t svlan = 0;
};
void build_pair_rule(FlowRule& r, const PairRuleSpec& spec);

// A fabric port's control-frame rule. IP in host order.
struct ControlRuleSpec {
  uint32_t edge_ip = 0;
  uint16_t udp_port = 0;
  uint16_t queue = 0;
};
void build_control_rule(FlowRule& r, const ControlRuleSpec& spec);

// rte_flow_validate / rte_flow_create on port; why gets the PMD's message.
int validate_rule(uint16_t port, const FlowRule& r, std::string* why = nullptr);
rte_flow* create_rule(uint16_t port, const FlowRule& r, std::string* why = nullptr);

enum class OffloadMode : uint8_t { software, steer, mark };
const char* to_string(OffloadMode m);

struct PortOffload {
  OffloadMode mode = OffloadMode::software;
  uint32_t validated = 0;  // rte_flow_validate calls that succeeded
  uint32_t installed = 0;  // rules in place now
  uint32_t refused = 0;    // rte_flow_validate/create calls the PMD refused
  std::string reason;      // the last refusal
  std::vector<rte_flow*> flows;
};

struct FlowOffload {
  std::vector<PortOffload> ports;  // indexed by DPDK port id
  bool marks(uint16_t port) const { return port < ports.size() && ports[port].mode == OffloadMode::mark; }
  uint64_t installed() const;
  uint64_t refused() const;
};

// Before the port is configured: asks the PMD to deliver MARK ids in the
// mbufs (rte_eth_rx_metadata_negotiate; PMDs without it need nothing).
void negotiate_rx_mark(uint16_t port);

// After the ports started: probes and installs the rules of every VM-side
// port (the pairs of every shard, each marked with its worker) and of each
// fabric port. The rules and counters go into shards[0]->offload; every
// shard gets the ports' modes, so each worker knows which ports mark.
// A pair's rule steers to its owner's RX queue where the port has one per
// worker (Layout::rx_queues), else to queue 0 (the port's RX lcore dispatches).
// Prints one line per port. More workers than kMarkMaxWorkers, or a shard
// too large for the mark, keeps classification in software (printed).
void install_offload(std::span<EdgeState* const> shards);
// Destroys the rules (before the ports close).
void remove_offload(EdgeState& s);

// "ufab-edge offload port=P mode=M validated= installed= refused= marked= [reason=...]"
void print_offload(std::FILE* out, const FlowOffload& o, uint64_t marked);

}  // namespace ufab::pipeline
