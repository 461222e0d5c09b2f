// Tenants added and removed at runtime (a reload: SIGHUP or /ufab/reload;
// reload.hpp matches tenants by VNI). A tenant whose first VM boots on this
// host, or whose last one leaves it, comes or goes without a restart; its
// VMs come and go in the same reload (local_vms.hpp, remote_vms.hpp).
//
//  - Added: an entry of cfg.tenants (a removed one no pair slot names any
//    more, else appended within params.spare_tenants, reserved at start-up:
//    workers index it while the control lcore appends, so it never moves),
//    Alg. 1's guarantee for it, its weight class in every worker's
//    scheduler (a tenant id the schedulers were sized for at start-up), then
//    its tags in the VLAN map (or its S/C ids in the QinQ map,
//    edge/qinq_tenants.hpp), so that its tagged frames are no longer
//    unknown_vlan. Its class follows the file: a class, or auto (from its
//    guarantee, against the unit the edge started with, as a guarantee
//    changed at runtime). All this before the reload's VMs are added, which
//    find the tenant by its VNI.
//  - Removed: after the reload's VMs are gone (every VM of the tenant, since
//    the file has none of them: its frames are unknown_pair or unknown_vm),
//    its tags leave the map (unknown_vlan from then on) and the entry is
//    marked removed. Its pairs' finishes still carry its VNI (control_tx
//    reads the entry), so the entry is taken again only once no pair slot
//    names it (entries.hpp).
//  - Re-tagged (its vlan or qinq changed, or given or taken away): it keeps
//    its entry, so its guarantee, class, tokens and VNI do not change. Its
//    local VMs' classification keys and delivery tags stand on the tags, so
//    each of them is changed by the same reload (removed, then added anew
//    with the new tags: its pairs start over, its queued frames are
//    pair_removed; reload.cpp's diff_local). Once they are, the tag maps
//    move: every re-tagged tenant's new tags in, then its old ones out
//    where they still name it, so two tenants may swap tags and no tag is
//    ever unmapped in between. Until then frames with the new tags are
//    unknown_vlan, and frames with the old ones classify as before.
//
// The room (entries) is checked before anything is applied; a tenant added
// by a reload that is then refused (apply_vms: room for VMs or pairs) is
// taken out again, and the running tenants' tags put back (an added tenant
// may have taken the tags of one the file removes or re-tags), so the
// reload applies nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/reload.hpp"

namespace ufab::pipeline {

class Edge;

// Adds d.tenants_added, or none when they do not fit (free entries and
// the room left): returns "" or why (naming params.spare_tenants). `made`
// gets their entries, in the order of d.tenants_added; `out` one line per
// tenant.
std::string add_tenants(Edge& e, const ReloadDiff& d, std::vector<uint32_t>& made, std::vector<std::string>& out);

// Moves re-tagged tenants' tags (after the reload's VMs are applied).
// `out` gets one line per tenant: "tenant 300 re-tagged: vlan 30 -> vlan 31".
void retag_tenants(Edge& e, const std::vector<TenantRetag>& which, std::vector<std::string>& out);

// A refused reload: takes the tenants add_tenants made out again and puts
// back the tags of the running tenants (one of those may have taken them).
void undo_added_tenants(Edge& e, const std::vector<uint32_t>& added);

// Takes tenants out (their VMs gone): the VLAN map, the entry, Alg. 1's
// inputs. `out` (may be null) gets one line per tenant.
void remove_tenants(Edge& e, const std::vector<uint32_t>& which, std::vector<std::string>* out);

}  // namespace ufab::pipeline
