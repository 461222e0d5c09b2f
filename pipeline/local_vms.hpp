// Local VMs added, removed or changed at runtime (a reload: SIGHUP or
// /ufab/reload; reload.hpp's diff_local finds the changes, by VM id). A VM
// boots on this host behind a VM-side port the edge already has (a
// vhost-user socket kept for it, or a port several VMs share, as behind
// OVS), stops, or moves to another port, while the edge runs:
//
//  - Added: a free entry of cfg.vms is taken (entries.hpp) or one is
//    appended (reserved at start-up for params.spare_local_vms more, as
//    remote_vms.hpp does for remote VMs),
//    owned by the worker with the fewest live pairs (a changed VM keeps its
//    worker). Every worker adds it to the tables each has for every local VM
//    (decapsulation, dispatch, local switching, IPv6: EdgeState::add_local_vm);
//    its owner makes its pairs, one per remote VM of its tenant. Alg. 1
//    starts for it with its tenant's tokens as in force now. Last, the
//    layout's VM id names it, so fabric frames for it are dispatched to its
//    owner and its probes find it.
//  - Removed: its VM id first stops naming it (its probes and data from the
//    fabric are then unknown_vm), then every worker takes it out of its
//    tables, and its owner removes its pairs as a remote VM's removal does
//    (queued frames dropped as pair_removed, finish, slot reused once done)
//    and lets its receiver-side slots go. The entry stays, marked removed.
//  - Changed (the same id with another name, tenant, MAC, address or port):
//    removed, then added as a new entry, on the same worker.
//
// The port must be one of the edge's VM-side ports (every DPDK port that is
// not a fabric port is polled as one, with or without VMs: layout.cpp).
// The VM ports' RSS redirection (rss_reta.hpp) is programmed again after
// the change; where it cannot be, a new VM's frames on a `spread` port may
// land on another worker's queue and are handed to its owner (misqueued).
// Refused, like remote VM changes, while a port classifies by rte_flow
// MARK rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "control/clock.hpp"
#include "pipeline/reload.hpp"

namespace ufab::pipeline {

class Edge;

// The workers of the local VMs a reload adds, by entry of d.local_vms
// (added or changed; removed entries hold nothing).
struct LocalPlan {
  std::vector<uint16_t> owner;
};

// Local VMs (cfg.vms indices) that d removes or changes.
std::vector<uint8_t> leaving_local(const edge::EdgeConfig& c, const ReloadDiff& d);

// Checks what d.local_vms needs: entries (free_entries removed ones no
// slot names, entries.hpp, then params.spare_local_vms), ports that exist;
// picks each new VM's worker (live[w]: worker w's live pairs, need[w]: the
// slots other additions take there) and adds its pairs' slots to need. ""
// or why nothing can be applied (the caller adds "; nothing applied").
std::string plan_local(const Edge& e, const ReloadDiff& d, const std::vector<size_t>& live, size_t free_entries,
                       std::vector<size_t>& need, LocalPlan& plan);
// The local VMs d removes or changes (gone = leaving_local(c, d)) leave
// (apply_vms, after the remote VMs'; the caller then clears the
// classification caches).
void remove_local(Edge& e, const ReloadDiff& d, const std::vector<uint8_t>& gone, Nanos now,
                  std::vector<std::string>& out);
// The local VMs d adds or changes join, on plan's workers (after the remote
// VMs'), in the entries of `free` (removed ones no slot names) first.
void add_local(Edge& e, const ReloadDiff& d, const LocalPlan& plan, std::vector<uint32_t>& free,
               std::vector<std::string>& out);

}  // namespace ufab::pipeline
