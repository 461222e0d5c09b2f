// ufab-edge's YAML configuration (design-notes §5): this edge's fabric
// address, the tenants with their hose-model guarantees (§3.1, turned into
// bandwidth tokens with B_u, §3.3), the local VMs and the VM-side port each
// sits behind, the remote hosts with their candidate source-route paths
// (§3.5) and base RTT, the remote VMs, and the edge parameters (§4.1, §5.1).
// Plain C++ (yaml-cpp, no DPDK): loaded before the EAL starts, so a bad file
// is rejected at once. Every error names the file, the line and the field.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "control/params.hpp"
#include "edge/qinq_tenants.hpp"
#include "sched/weight_class.hpp"

namespace ufab::edge {

using Mac = std::array<uint8_t, 6>;
using Ip6 = std::array<uint8_t, 16>;  // network order, as in the frames

struct TenantCfg {
  uint32_t vni = 0;             // tenant id on the wire (24 bits)
  double guarantee_bps = 0;     // hose-model minimum bandwidth of each VM
  uint32_t weight_class = 0;    // scheduler WFQ class 0..7 (§4.1): the file's, or EdgeConfig::weight_class_of(guarantee)
  bool weight_from_guarantee = true;  // weight_class absent or "auto": the class follows the guarantee
  uint16_t vlan = 0;            // 802.1Q VLAN id naming the tenant on the VM side (1..4094); 0: untagged
  uint16_t svlan = 0;           // QinQ (tenants[].qinq: [S, C]): the 802.1ad S-VLAN id, vlan the C-VLAN id; 0: no S-tag
  // Taken out by a reload (pipeline/tenants.hpp). Its entry stays, so that
  // the tenant indices of the others (PairMeta::tenant, the schedulers'
  // tenant ids) hold; tenant(vni) no longer finds it.
  bool removed = false;
  double tokens(double unit_bw_Bps) const { return guarantee_bps / 8.0 / unit_bw_Bps; }
};

struct VmCfg {
  std::string name;
  uint16_t id = 0;              // fabric-wide VM id, 1..65535 (wire pair id = src id << 16 | dst id)
  uint32_t vni = 0;             // its tenant
  Mac mac{};                    // its vNIC's MAC; remote VMs: optional (all zero: none), the proxy ARP answer
  uint32_t ip = 0;              // host order
  Ip6 ip6{};                    // optional IPv6 address (all zero: none); its IPv6 frames are the pair's too
  uint16_t port = 0;            // local VMs: the DPDK port of its vNIC (resolve_ports: from port_name)
  std::string port_name;        // local VMs: `port:` given as a DPDK device name (e.g. net_vhost3), "" for an id
  std::string port_at;          // "file:line:col" of `port:`, for resolve_ports' messages
  uint16_t vlan = 0;            // local VMs: its tenant's VLAN id (0: untagged); with QinQ the C-VLAN id
  uint16_t svlan = 0;           // local VMs: its tenant's QinQ S-VLAN id (0: no S-tag)
  uint32_t host = 0;            // remote VMs: index into EdgeConfig::hosts
  // Taken out by a reload (remote VMs: pipeline/remote_vms.hpp; local VMs:
  // pipeline/local_vms.hpp). Its entry stays, so that the indices of the
  // others (PairMeta::local_vm, remote_vm) hold; only the control lcore
  // reads or writes this.
  bool removed = false;
};

struct PathCfg {
  std::vector<uint16_t> labels;  // source route: egress port at each hop (wire-format §4)
  uint16_t udp_src_port = 0;     // outer UDP source port (ECMP pinning, design-notes §4.5)
  uint16_t port = 0;             // the fabric port (uplink) its frames leave on; default the first fabric port
};

struct HostCfg {
  std::string name;
  uint32_t ip = 0;               // outer (underlay) address
  Mac mac{};                     // outer destination MAC (the peer or the first-hop switch)
  uint64_t base_rtt_ns = 0;      // T of every pair to this host (§3.4)
  std::vector<PathCfg> paths;    // candidate paths, at most 8 (control/vm_pair.hpp)
  PathCfg reply_path;            // route for responses and finish-acks to this host
  // Taken out by a reload (pipeline/remote_vms.hpp); its entry stays, so
  // that the other indices hold. Only the control lcore reads or writes it.
  bool removed = false;
  bool same_as(const HostCfg& o) const;  // every field but the name and `removed`
};

struct EdgeConfig {
  std::string file;
  // this edge
  // Its fabric-side ports (uplinks), edge.fabric_port: one port or a list of
  // up to kMaxFabricPorts. Every one is polled for fabric frames; a path
  // leaves on the one it names (PathCfg::port), by default the first.
  static constexpr size_t kMaxFabricPorts = 8;
  std::vector<uint16_t> fabric_ports{0};
  uint16_t fabric_port() const { return fabric_ports[0]; }  // the paths' default uplink
  bool is_fabric_port(uint16_t p) const {
    for (const uint16_t f : fabric_ports)
      if (f == p) return true;
    return false;
  }
  uint32_t ip = 0;
  Mac mac{};
  uint16_t udp_port = 7341;
  uint32_t fabric_rate_mbps = 0;      // pace data to the fabric at the NIC rate (0: as fast as the port takes it)
  // edge.fabric_mtu: the fabric links' MTU, set on the fabric ports (default
  // 1600, what overlays such as VXLAN ask of their underlay). A VM frame is
  // carried whole in one fabric frame, so the VM MTU is this less the
  // largest encapsulation: outer IPv4 20 + UDP 8 + shim 8 + route 2 + 2 per
  // label (15 at most, wire::kMaxLabels, so whatever routes a reload brings
  // fit) + the VM frame's own Ethernet header 14 = 82 bytes. The range
  // keeps the VM MTU at least IPv6's 1280 and a fabric frame within a 9216 B
  // jumbo frame. Frames above the VM MTU: pipeline/too_big.hpp.
  static constexpr uint32_t kVmMtuOverhead = 82, kMinFabricMtu = 1280 + kVmMtuOverhead, kMaxFabricMtu = 9200;
  uint16_t fabric_mtu = 1600;
  uint32_t vm_mtu() const { return fabric_mtu - kVmMtuOverhead; }
  uint32_t max_vm_frame() const { return vm_mtu() + 14; }  // untagged, as the edge carries it
  // parameters
  EdgeParams params;
  uint64_t token_period_ns = 32'000;  // Alg. 1 period (§5.1: 32 us)
  // With control and the worker on one lcore: the largest share of that
  // lcore Alg. 1 rounds may take (pipeline/worker.cpp); a round that took c
  // puts the next one max(period, c * (1 - s) / s) later.
  double token_round_max_share = 0.25;
  // While frames arrive (received in the worker's iteration), the largest share
  // of a worker its pairs' timer work (poll_pairs: per-RTT ticks, losses,
  // finishes) may take; the due pairs left wait for the next iterations, and
  // a late tick weighs the RTTs it spans (docs/design.md §15). 1: no bound.
  double pair_poll_max_share = 0.25;
  uint32_t burst = 32;
  uint32_t mbufs = 16383;
  uint32_t queue_capacity = 64;       // packets per flow FIFO
  uint32_t flows_per_pair = 4;
  uint32_t max_incoming = 4096;       // receiver-side pairs (TokenAdmission)
  // Room for what reloads add (pipeline/remote_vms.hpp, local_vms.hpp):
  // remote VM, host and local VM entries beyond those at start-up, and VM-pair
  // slots per worker beyond its pairs at start-up. A removed entry is
  // reused once no pair slot names it (pipeline/entries.hpp), a removed
  // pair's slot once its finish is done: these bound what exists at once,
  // not how many changes an edge sees. Sized at start-up, so a reload that
  // needs more is refused, naming which, and applies nothing.
  uint32_t spare_remote_vms = 1024;
  uint32_t spare_pairs = 256;
  uint32_t spare_hosts = 64;
  uint32_t spare_local_vms = 64;
  uint32_t spare_tenants = 64;  // tenant entries (pipeline/tenants.hpp), also the schedulers' extra tenant ids
  uint64_t seed = 1;
  // false: benchmarks only (deploy/ufab bench edge). The scheduler's windows
  // stay open (every pair's in-flight bytes are forgiven each token period),
  // for a fabric where nothing answers probes; probes, tokens and timers
  // still run. Measures scheduler + classify + encap, not window gating.
  bool window_gating = true;
  // A VM frame leaves on arrival, without being queued, when the worker's
  // scheduler has no eligible pair, the frame's pair has nothing queued and
  // its window admits it, and neither the fabric nor the pairs are paced
  // (HierScheduler::try_bypass; docs/design.md §16). false: every frame goes
  // through the queues (WFQ orders even the frames of one RX burst).
  bool sched_bypass = true;
  // A per-worker exact-match cache in front of the classification table
  // (pipeline/classify_cache.hpp). false: every VM frame is looked up in
  // rte_hash.
  bool classify_cache = true;
  // Per-VM-pair pacing at w / T (sched/pair_pacing.hpp). The paper's edge
  // gates by the window only and its NIC runs at the links' rate; an edge
  // whose port is faster than the fabric's links (the emulated fabric) paces
  // each pair so that its window spreads over one base RTT.
  // With it the window gate rounds the window up to whole packets
  // (HierSchedulerConfig::window_whole_packets).
  bool pair_pacing = false;
  uint64_t pair_pacing_depth_ns = 10'000;  // a paced pair's burst allowance (time at its rate)
  // Acks between responses: every this many ns the worker moves each pair's
  // acknowledged-byte mark (control/sent_history.hpp: bytes sent one RTT
  // ago have left) and its window into the scheduler. 0: only on responses
  // and token ticks; with one probe outstanding per L_w bytes a window-
  // limited pair then gets acks about once per RTT, in a lump.
  uint64_t ack_sweep_ns = 0;
  // The 8 WFQ classes' weights, which are the schedulers' class weights,
  // and the guarantee (b/s) each stands for: by default 1, 2, 4, ..., 128
  // times params.weight_unit_gbps (itself by default the smallest positive
  // guarantee of the tenants whose class follows their guarantee); with
  // params.weight_span_gbps: [lo, hi] spread geometrically over it
  // (WeightClassMap::spanning), for a smaller error over a narrower range.
  WeightClassMap weight_classes{WeightClassMap().class_weights(), 1e9};
  bool weight_span = false;          // weight_span_gbps given
  bool weight_unit_given = false;    // weight_unit_gbps given
  // The guarantee class 0 stands for.
  double weight_unit_bps() const { return weight_classes.class_weights()[0] * weight_classes.unit(); }
  // The class of a tenant whose weight_class follows its guarantee: the
  // nearest in log space (§4.1: a VF's hose-model weight picks one of 8
  // weighted queues; design-notes §4.7), with the relative mapping error.
  // A guarantee of 0 gets class 0 with an infinite error.
  ClassMapping weight_class_of(double guarantee_bps) const;
  // topology
  std::vector<TenantCfg> tenants;
  std::vector<VmCfg> vms;             // local
  std::vector<HostCfg> hosts;         // remote
  std::vector<VmCfg> remote_vms;
  // VLAN id -> tenant index, -1 when no tenant has it (index 0 and 4095 stay
  // -1). Reloads write an entry (__atomic, pipeline/tenants.hpp) while the
  // workers read it (vlan_tenant).
  std::vector<int32_t> tenant_of_vlan = std::vector<int32_t>(4096, -1);
  // QinQ tenants: tenant index by (S-VLAN id, C-VLAN id); written by reloads
  // while the workers read it (qinq_tenants.hpp).
  QinqTenants tenant_of_qinq;
  int32_t qinq_tenant(uint16_t svid, uint16_t cvid) const { return tenant_of_qinq.find(svid, cvid); }

  int32_t vlan_tenant(uint16_t vid) const { return __atomic_load_n(&tenant_of_vlan[vid], __ATOMIC_RELAXED); }

  // The tenant with this VNI, not removed (nullptr: none).
  const TenantCfg* tenant(uint32_t vni) const;
  size_t tenant_index(uint32_t vni) const;  // precondition: tenant(vni) != nullptr
};

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An IPv4 address (host order, as in VmCfg::ip and HostCfg::ip) as "a.b.c.d".
std::string ip4_text(uint32_t ip);
// An IPv6 address as inet_ntop writes it ("::" for all zero).
std::string ip6_text(const Ip6& a);
// A MAC as "02:00:00:00:0a:01".
std::string mac_text(const Mac& m);

// One line on the tenants' WFQ weight classes: how many follow their
// guarantee (against which unit) with the largest mapping error and its
// tenant, how many map with more error than a guarantee within the classes'
// range can (41.4%: beyond 1..128 units), how many the file gives.
std::string weight_classes_line(const EdgeConfig& c);

// A DPDK port by device name ("net_vhost3", a PCI address): its id, or
// nullopt when the EAL has no such port (edge/main.cpp: rte_eth_dev_get_port_by_name).
using PortByName = std::function<std::optional<uint16_t>(const std::string& name)>;
// Local VMs whose `port:` names a device get its id. Throws ConfigError
// ("file:line:col: vms[i].port: no DPDK port named 'net_vhost9'", or one
// that is a fabric port; an empty by_name knows no device). Once the EAL
// runs: at start-up and at each reload.
void resolve_ports(EdgeConfig& c, const PortByName& by_name);

// Loads and validates. Throws ConfigError("file:line:col: field: what").
EdgeConfig load_config(const std::string& path);
// The same from a string (file is only used in messages).
EdgeConfig parse_config(const std::string& text, const std::string& file);

}  // namespace ufab::edge
