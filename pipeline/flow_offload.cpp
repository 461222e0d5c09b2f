#include "pipeline/flow_offload.hpp"

#include <algorithm>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <cinttypes>
#include <cstring>

#include "pipeline/edge_state.hpp"
#include "pipeline/vlan.hpp"
#include "probe/wire.hpp"

namespace ufab::pipeline {

namespace {

void set_item(rte_flow_item& it, rte_flow_item_type type, const void* spec = nullptr, const void* mask = nullptr) {
  it.type = type;
  it.spec = spec;
  it.mask = mask;
}

std::string why_of(const rte_flow_error& e, int rc) {
  std::string s = e.message != nullptr ? e.message : "refused";
  s += " (";
  s += std::strerror(rc < 0 ? -rc : rc);
  s += ")";
  return s;
}

// Validates every rule of one form, then creates them; false (nothing left
// installed) at the first refusal.
template <typename Build>
bool try_form(uint16_t port, PortOffload& po, size_t n, Build build) {
  for (size_t i = 0; i < n; ++i) {
    FlowRule r;
    build(r, i);
    if (validate_rule(port, r, &po.reason) != 0) {
      ++po.refused;
      return false;
    }
    ++po.validated;
  }
  for (size_t i = 0; i < n; ++i) {
    FlowRule r;
    build(r, i);
    rte_flow* f = create_rule(port, r, &po.reason);
    if (f == nullptr) {
      ++po.refused;
      rte_flow_error err{};
      for (rte_flow* g : po.flows) rte_flow_destroy(port, g, &err);
      po.flows.clear();
      po.installed = 0;
      return false;
    }
    po.flows.push_back(f);
    ++po.installed;
  }
  return true;
}

void print_port(std::FILE* out, uint16_t port, const PortOffload& po, uint64_t marked) {
  std::fprintf(out, "ufab-edge offload port=%u mode=%s validated=%" PRIu32 " installed=%" PRIu32 " refused=%" PRIu32,
               port, to_string(po.mode), po.validated, po.installed, po.refused);
  if (po.mode == OffloadMode::mark) std::fprintf(out, " marked=%" PRIu64, marked);
  if (po.mode != OffloadMode::mark && !po.reason.empty()) std::fprintf(out, " reason=\"%s\"", po.reason.c_str());
  std::fputc('\n', out);
}

}  // namespace

void build_pair_rule(FlowRule& r, const PairRuleSpec& spec) {
  r.attr.ingress = 1;
  size_t i = 0;
  if (spec.svlan != 0) {  // QinQ: the S-tag's TPID, the S-tag, then the C-tag below
    r.eth_spec.type = rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ);
    r.eth_mask.type = UINT16_MAX;
    set_item(r.pattern[i++], RTE_FLOW_ITEM_TYPE_ETH, &r.eth_spec, &r.eth_mask);
    r.svlan_spec.tci = rte_cpu_to_be_16(spec.svlan & kVlanVidMask);
    r.svlan_mask.tci = rte_cpu_to_be_16(kVlanVidMask);
    set_item(r.pattern[i++], RTE_FLOW_ITEM_TYPE_VLAN, &r.svlan_spec, &r.svlan_mask);
  } else {
    set_item(r.pattern[i++], RTE_FLOW_ITEM_TYPE_ETH);
  }
  if (spec.vlan != 0) {
    r.vlan_spec.tci = rte_cpu_to_be_16(spec.vlan & kVlanVidMask);
    r.vlan_mask.tci = rte_cpu_to_be_16(kVlanVidMask);
    set_item(r.pattern[i++], RTE_FLOW_ITEM_TYPE_VLAN, &r.vlan_spec, &r.vlan_mask);
  }
  r.ip_spec.hdr.src_addr = rte_cpu_to_be_32(spec.src_ip);
  r.ip_spec.hdr.dst_addr = rte_cpu_to_be_32(spec.dst_ip);
  r.ip_mask.hdr.src_addr = UINT32_MAX;
  r.ip_mask.hdr.dst_addr = UINT32_MAX;
  set_item(r.pattern[i++], RTE_FLOW_ITEM_TYPE_IPV4, &r.ip_spec, &r.ip_mask);
  set_item(r.pattern[i], RTE_FLOW_ITEM_TYPE_END);

  size_t a = 0;
  r.mark.id = spec.mark;
  r.queue.index = spec.queue;
  if (spec.with_mark) r.actions[a++] = rte_flow_action{RTE_FLOW_ACTION_TYPE_MARK, &r.mark};
  r.actions[a++] = rte_flow_action{RTE_FLOW_ACTION_TYPE_QUEUE, &r.queue};
  r.actions[a] = rte_flow_action{RTE_FLOW_ACTION_TYPE_END, nullptr};
}

void build_control_rule(FlowRule& r, const ControlRuleSpec& spec) {
  r.attr.ingress = 1;
  set_item(r.pattern[0], RTE_FLOW_ITEM_TYPE_ETH);
  r.ip_spec.hdr.dst_addr = rte_cpu_to_be_32(spec.edge_ip);
  r.ip_mask.hdr.dst_addr = UINT32_MAX;
  set_item(r.pattern[1], RTE_FLOW_ITEM_TYPE_IPV4, &r.ip_spec, &r.ip_mask);
  r.udp_spec.hdr.dst_port = rte_cpu_to_be_16(spec.udp_port);
  r.udp_mask.hdr.dst_port = UINT16_MAX;
  set_item(r.pattern[2], RTE_FLOW_ITEM_TYPE_UDP, &r.udp_spec, &r.udp_mask);
  // The shim's first byte, right after the UDP header: version << 4 | next
  // (docs/wire-format.md §2); the low nibble says control or data.
  r.raw_pattern = wire::kNextControl;
  r.raw_pattern_mask = 0x0f;
  r.raw_spec.relative = 1;
  r.raw_spec.offset = 0;
  r.raw_spec.length = 1;
  r.raw_spec.pattern = &r.raw_pattern;
  r.raw_mask.relative = 1;
  r.raw_mask.offset = -1;
  r.raw_mask.length = UINT16_MAX;
  r.raw_mask.pattern = &r.raw_pattern_mask;
  set_item(r.pattern[3], RTE_FLOW_ITEM_TYPE_RAW, &r.raw_spec, &r.raw_mask);
  set_item(r.pattern[4], RTE_FLOW_ITEM_TYPE_END);
  r.queue.index = spec.queue;
  r.actions[0] = rte_flow_action{RTE_FLOW_ACTION_TYPE_QUEUE, &r.queue};
  r.actions[1] = rte_flow_action{RTE_FLOW_ACTION_TYPE_END, nullptr};
}

int validate_rule(uint16_t port, const FlowRule& r, std::string* why) {
  rte_flow_error err{};
  const int rc = rte_flow_validate(port, &r.attr, r.pattern, r.actions, &err);
  if (rc != 0 && why != nullptr) *why = why_of(err, rc);
  return rc;
}

rte_flow* create_rule(uint16_t port, const FlowRule& r, std::string* why) {
  rte_flow_error err{};
  rte_flow* f = rte_flow_create(port, &r.attr, r.pattern, r.actions, &err);
  if (f == nullptr && why != nullptr) *why = why_of(err, rte_errno);
  return f;
}

const char* to_string(OffloadMode m) {
  switch (m) {
    case OffloadMode::software: return "software";
    case OffloadMode::steer: return "steer";
    case OffloadMode::mark: return "mark";
  }
  return "?";
}

uint64_t FlowOffload::installed() const {
  uint64_t n = 0;
  for (const PortOffload& p : ports) n += p.installed;
  return n;
}

uint64_t FlowOffload::refused() const {
  uint64_t n = 0;
  for (const PortOffload& p : ports) n += p.refused;
  return n;
}

void negotiate_rx_mark(uint16_t port) {
  uint64_t features = RTE_ETH_RX_METADATA_USER_MARK;
  (void)rte_eth_rx_metadata_negotiate(port, &features);  // -ENOTSUP: the PMD needs no negotiation
}

void install_offload(std::span<EdgeState* const> shards) {
  EdgeState& s = *shards[0];
  FlowOffload& o = s.offload;
  // The start-up ports (every one a VM-side or a fabric port); those
  // attached at runtime (ports.hpp) classify in software.
  size_t n_ports = 0;
  for (const uint16_t p : s.vm_ports) n_ports = std::max<size_t>(n_ports, p + 1u);
  for (const uint16_t p : s.cfg.fabric_ports) n_ports = std::max<size_t>(n_ports, p + 1u);
  o.ports.resize(n_ports);
  bool markable = shards.size() <= kMarkMaxWorkers;
  for (const EdgeState* sh : shards) markable = markable && sh->pairs.size() <= (size_t{1} << kMarkWorkerShift);
  struct Owned {
    const EdgeState* shard;
    uint32_t pair;
  };
  for (const uint16_t port : s.vm_ports) {
    std::vector<Owned> mine;
    for (const EdgeState* sh : shards)
      for (uint32_t p = 0; p < sh->pairs.size(); ++p)
        if (sh->cfg.vms[sh->meta[p].local_vm].port == port) mine.push_back({sh, p});
    PortOffload& po = o.ports[port];
    if (mine.empty()) {
      po.reason = "no VM-pairs behind this port";
    } else if (!markable) {
      po.reason = "more than 16 workers or 2^20 pairs in a shard: the MARK id cannot name them";
    } else {
      for (const OffloadMode mode : {OffloadMode::mark, OffloadMode::steer}) {
        const auto build = [&](FlowRule& r, size_t i) {
          const EdgeState& sh = *mine[i].shard;
          const PairMeta& pm = sh.meta[mine[i].pair];
          PairRuleSpec spec;
          spec.src_ip = sh.cfg.vms[pm.local_vm].ip;
          spec.dst_ip = sh.cfg.remote_vms[pm.remote_vm].ip;
          spec.vlan = sh.cfg.vms[pm.local_vm].vlan;
          spec.svlan = sh.cfg.vms[pm.local_vm].svlan;
          spec.mark = pair_mark(sh.worker, mine[i].pair);
          // The owner's own RX queue where the port has one per worker (layout.hpp).
          spec.queue = s.layout.rx_queues[port] > sh.worker ? sh.worker : 0;
          spec.with_mark = mode == OffloadMode::mark;
          build_pair_rule(r, spec);
        };
        if (try_form(port, po, mine.size(), build)) {
          po.mode = mode;
          break;
        }
      }
    }
    print_port(stdout, port, po, 0);
  }
  const auto build_control = [&](FlowRule& r, size_t) {
    build_control_rule(r, ControlRuleSpec{s.cfg.ip, s.cfg.udp_port, 0});
  };
  for (const uint16_t fp : s.cfg.fabric_ports) {
    PortOffload& po = o.ports[fp];
    if (try_form(fp, po, 1, build_control)) po.mode = OffloadMode::steer;
    print_port(stdout, fp, po, 0);
  }
  std::fflush(stdout);
  for (EdgeState* sh : shards.subspan(1)) {
    sh->offload.ports.resize(o.ports.size());
    for (size_t port = 0; port < o.ports.size(); ++port) sh->offload.ports[port].mode = o.ports[port].mode;
  }
}

void remove_offload(EdgeState& s) {
  for (uint16_t port = 0; port < s.offload.ports.size(); ++port) {
    PortOffload& po = s.offload.ports[port];
    rte_flow_error err{};
    for (rte_flow* f : po.flows) rte_flow_destroy(port, f, &err);
    po.flows.clear();
    po.installed = 0;
  }
}

void print_offload(std::FILE* out, const FlowOffload& o, uint64_t marked) {
  for (uint16_t port = 0; port < o.ports.size(); ++port) print_port(out, port, o.ports[port], marked);
}

}  // namespace ufab::pipeline
