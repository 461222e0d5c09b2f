#include "pipeline/entries.hpp"

#include "pipeline/edge.hpp"

namespace ufab::pipeline {

FreeEntries free_entries(Edge& e) {
  const edge::EdgeConfig& c = e.cfg;
  std::vector<uint8_t> remote(c.remote_vms.size(), 0), local(c.vms.size(), 0), host(c.hosts.size(), 0),
      tenant(c.tenants.size(), 0);
  e.on_workers([&](EdgeState& s) {
    s.reclaim();
    for (uint32_t p = 0; p < s.pairs.size(); ++p) {
      if (s.slot[p] == EdgeState::Slot::free) continue;
      remote[s.meta[p].remote_vm] = 1;
      local[s.meta[p].local_vm] = 1;
      host[s.meta[p].host] = 1;      // a removed pair's finish leaves on its host's routes
      tenant[s.meta[p].tenant] = 1;  // ... with its tenant's VNI
    }
  });
  FreeEntries f;
  for (uint32_t r = 0; r < remote.size(); ++r)
    if (c.remote_vms[r].removed && !remote[r]) f.remote_vms.push_back(r);
  for (uint32_t v = 0; v < local.size(); ++v)
    if (c.vms[v].removed && !local[v]) f.local_vms.push_back(v);
  for (uint32_t h = 0; h < host.size(); ++h)
    if (c.hosts[h].removed && !host[h]) f.hosts.push_back(h);
  for (uint32_t t = 0; t < tenant.size(); ++t)
    if (c.tenants[t].removed && !tenant[t]) f.tenants.push_back(t);
  return f;
}

}  // namespace ufab::pipeline
