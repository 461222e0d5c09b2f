// Remote VMs added, removed or moved at runtime (a reload: SIGHUP or
// /ufab/reload; pipeline/reload.hpp finds the changes). A VM of a tenant
// starts, stops or migrates on another host while this edge runs: its
// VM-pairs (one per local VM of the tenant, on that local VM's worker) are
// made or taken out without a restart, and nothing else is touched.
//
//  - Added: an entry is appended to cfg.remote_vms (reserved at start-up
//    for params.spare_remote_vms more: workers index it while the control
//    lcore appends, so it never moves), then each worker makes its pairs
//    (EdgeState::add_pair, the constructor's own) in a free slot or a new
//    one of the params.spare_pairs it keeps, and adds the VM's ARP and
//    neighbour discovery entries. The pair starts as a start-up pair does:
//    selecting a path (§3.5) at its first frame.
//  - Removed: each worker takes the VM's ARP/ND entries out and removes
//    its pairs (EdgeState::remove_pair): out of the classification tables
//    (its frames are then unknown_pair), its queued frames freed and
//    counted as dropped (pair_removed: the VM they were for is gone),
//    unpublished for Alg. 1, and finished (§4.2: the switches release its
//    window and token sums). The slot is free once its finish is acked or
//    given up (EdgeState::reclaim, at the next reload). The entry stays,
//    marked removed, so that every other index holds.
//  - Changed (the same VM id with another host, address, MAC, name or
//    tenant): removed, then added as a new entry with new pairs.
//  - A host changed (the same name with another address, MAC, base RTT or
//    paths): removed and added as a new entry, and each VM on it changed,
//    since its pairs' paths, windows and RTTs stood on the old ones.
//
// All or nothing: the room (entries, each worker's slots) is checked before
// anything is applied, and a reload that needs more is refused naming the
// parameter. Refused as well while a port classifies by rte_flow MARK
// rules, which name pair slots (flow_offload.hpp): that needs a restart.
// Each worker's part runs as a command between two of its bursts
// (Edge::on_worker), so the data path takes no lock and a worker's tables
// change only on its own lcore. Local VMs: local_vms.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "control/clock.hpp"
#include "pipeline/reload.hpp"

namespace ufab::pipeline {

class Edge;
class EdgeState;

// Applies d.hosts, d.vms (diff_remote) and d.local_vms (diff_local,
// local_vms.hpp) to the running edge, all or nothing: the room is checked
// first; then hosts, remote VMs leaving, local VMs leaving, remote VMs
// added, local VMs added (paired with every remote VM of their tenant,
// those just added too). `out` gets one line per change. Returns "" or why
// nothing was applied.
std::string apply_vms(Edge& e, const ReloadDiff& d, Nanos now, std::vector<std::string>& out);

// A pair a reload makes: local VM v, remote VM entry r (config indices),
// overall index `global`.
struct NewPair {
  size_t v, r;
  uint32_t global;
};
// Worker s's part of `made` (the pairs of the local VMs it owns), each with
// its host's paths drained as they are now; slot_of[i]: the slot of
// made[i], or EdgeState::kNoSlot (not s's, or no slot left).
void make_pairs(Edge& e, EdgeState& s, const std::vector<NewPair>& made, std::vector<uint32_t>& slot_of);
// The reply's count for one VM added: "N pair(s)" over the pairs of `made`
// that `mine` selects, with ", M not made" when some found no slot and
// " (why)" when making them failed.
template <class Mine>
std::string pairs_made(const std::vector<NewPair>& made, const std::vector<uint32_t>& slot_of, const std::string& failed,
                       const Mine& mine) {
  size_t added = 0, wanted = 0;
  for (size_t i = 0; i < made.size(); ++i) {
    if (!mine(made[i])) continue;
    ++wanted;
    added += slot_of[i] != UINT32_MAX;  // EdgeState::kNoSlot
  }
  std::string s = std::to_string(added) + " pair(s)";
  if (added != wanted) s += ", " + std::to_string(wanted - added) + " not made";
  if (!failed.empty()) s += " (" + failed + ")";
  return s;
}

}  // namespace ufab::pipeline
