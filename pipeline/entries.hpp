// Entries of cfg.remote_vms, cfg.vms, cfg.hosts and cfg.tenants a reload
// may take (remote_vms.hpp, local_vms.hpp, tenants.hpp). A removed entry stays, so that every
// other index holds; once no pair slot names it (its pairs removed and
// their finishes done: EdgeState::reclaim), it is free, and the next VM or
// host added takes it before the room reserved at start-up
// (params.spare_remote_vms, spare_local_vms, spare_hosts, spare_tenants). So those budgets
// bound how many entries there are at once, not how many changes an edge
// sees in its life.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ufab::pipeline {

class Edge;

struct FreeEntries {
  // Removed entries no slot names, ascending.
  std::vector<uint32_t> remote_vms, local_vms, hosts, tenants;
  // The next entry of a list: a free one (taken), else UINT32_MAX (append).
  static uint32_t take(std::vector<uint32_t>& free, std::size_t& next) { return next < free.size() ? free[next++] : UINT32_MAX; }
};

// Runs EdgeState::reclaim on every worker (a command each), then finds the
// removed entries that no pair slot, on any worker, names.
FreeEntries free_entries(Edge& e);

}  // namespace ufab::pipeline
