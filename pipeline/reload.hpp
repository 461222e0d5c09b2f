// Reloading ufab-edge's configuration at runtime (SIGHUP or /ufab/reload):
// the file is read and validated as at start-up (file:line:col: field:
// what), then compared with the configuration the edge runs. What can change
// without a restart: a tenant's guarantee_gbps (Alg. 1's phi_alpha) and its
// weight_class (a class, or auto: from the guarantee, against the unit the
// edge started with), with queued packets kept; the remote VMs, added,
// removed or changed, and the hosts, added, removed or changed (remote_vms.hpp); the
// local VMs, added, removed or changed, on the edge's VM-side ports
// (local_vms.hpp); tenants added or removed, with their VMs, or re-tagged
// (tenants.hpp). Anything else (the edge's own address and ports,
// parameters) is rejected naming the first field that differs, and nothing
// is applied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edge/config.hpp"

namespace ufab::pipeline {

// A tenant whose guarantee or weight class differs from what is in force.
struct TenantChange {
  static constexpr int kFromGuarantee = -1;  // weight_class auto
  uint32_t vni = 0;
  double old_bps = 0, new_bps = 0;
  int old_class = 0, new_class = 0;  // 0..7 or kFromGuarantee
};

// A host the file adds or removes, matched by name. A host in both with
// another address, MAC, base RTT or paths is changed: removed and added
// anew, and each remote VM on it changed (its pairs start over: their
// paths, windows and RTTs stood on the old ones).
struct HostChange {
  bool added = true;
  uint32_t running = 0;  // removed: its index in the running cfg.hosts
  edge::HostCfg host;    // added: the file's entry
  std::string fields;    // a changed host's removal and addition: what differs, e.g. "paths [[2]] -> [[3]]"
};

// A VM the file adds, removes or changes, matched by its VM id (the wire's
// name for it): changed when any of its fields differs. A remote VM's:
// name, tenant, MAC, addresses, host (a VM that moved to another host); a
// local VM's: name, tenant, MAC, addresses, port.
struct VmChange {
  enum class Kind : uint8_t { added, removed, changed };
  Kind kind = Kind::added;
  uint32_t running = 0;  // removed, changed: its index in the running cfg.remote_vms (cfg.vms)
  // added, changed: the file's entry; a remote VM's host an index into the
  // running cfg.hosts once the hosts added are appended (in HostChange order).
  edge::VmCfg vm;
  std::string fields;    // changed: what differs, e.g. "host hB -> hC, ip 192.168.1.1 -> 192.168.1.9"
  std::string at;        // local VMs added, changed: where the file has it ("file:line:col: vms[i]"), for an error
};

// A running tenant whose tags (vlan, qinq) the file changes (tenants.hpp):
// it keeps its entry, guarantee, class and VNI; its local VMs change with
// it (their classification keys and delivery tags stand on the tags).
struct TenantRetag {
  uint32_t running = 0;           // its index in the running cfg.tenants
  uint16_t vlan = 0, svlan = 0;   // the file's tags (svlan != 0: QinQ [svlan, vlan])
};

// A tenant's tags as the reload's reply names them: "untagged", "vlan 20",
// "qinq [4, 40]".
std::string tags_text(uint16_t svlan, uint16_t vlan);

// What a reload changes.
struct ReloadDiff {
  std::vector<TenantChange> tenants;
  // Tenants matched by VNI (tenants.hpp): the file's new ones in its order,
  // and the running indices of those it no longer has.
  std::vector<edge::TenantCfg> tenants_added;
  std::vector<uint32_t> tenants_removed;
  std::vector<TenantRetag> tenants_retagged;
  std::vector<HostChange> hosts;  // removals in the running order, then additions in the file's
  std::vector<VmChange> vms;        // remote VMs
  std::vector<VmChange> local_vms;  // local VMs (local_vms.hpp)
  bool empty() const {
    return tenants.empty() && tenants_added.empty() && tenants_removed.empty() && tenants_retagged.empty() &&
           hosts.empty() && vms.empty() && local_vms.empty();
  }
};

// The running configuration's hosts and remote VMs (those not removed)
// against the file's: the hosts' changes (removals, a changed host's
// among them, in the running order; then additions in the file's, a
// changed host's new entry among them), then the remote VMs' (removals and
// changes in the running order, then additions in the file's order).
void diff_remote(const edge::EdgeConfig& running, const edge::EdgeConfig& next, ReloadDiff& d);

// The running configuration's local VMs (those not removed) against the
// file's, by id: removals and changes in the running order, then additions
// in the file's order. A VM whose tenant's tags changed is changed
// ("tags vlan 20 -> vlan 21"). vm_at[i]: where the file's vms[i] is
// ("file:line:col: vms[i]").
void diff_local(const edge::EdgeConfig& running, const edge::EdgeConfig& next, const std::vector<std::string>& vm_at,
                ReloadDiff& d);

// Reads cfg.file again. live_bps, live_class: the guarantees and weight
// classes in force (by running tenant index; kFromGuarantee for auto).
// Tenants are matched by VNI: one the file adds or drops is in
// tenants_added / tenants_removed; one in both whose tags (vlan, qinq)
// differ is in tenants_retagged. Returns ""
// and the changes, or the reason nothing can be applied. by_name: the
// local VMs' ports named by device (edge::resolve_ports; empty: the file
// names none, e.g. the unit tests without an EAL).
std::string diff_config(const edge::EdgeConfig& cfg, const std::string& running_text, const std::vector<double>& live_bps,
                        const std::vector<int>& live_class, std::string& new_text, ReloadDiff& d,
                        const edge::PortByName& by_name = {});

// The whole file as text ("" when it cannot be read).
std::string read_text(const std::string& path);

}  // namespace ufab::pipeline
