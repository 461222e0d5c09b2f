// Reloading ufab-edge's configuration at runtime (SIGHUP or /ufab/reload):
// the file is read and validated as at start-up (file:line:col: field:
// what), then compared with the configuration the edge runs. What can change
// without a restart: a tenant's guarantee_gbps (Alg. 1's phi_alpha; queued
// packets are kept). Anything else (ports, VMs, hosts, paths, parameters,
// weight classes, tenants added or removed) is rejected naming the first
// field that differs, and nothing is applied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edge/config.hpp"

namespace ufab::pipeline {

struct TenantChange {
  uint32_t vni = 0;
  double old_bps = 0, new_bps = 0;
};

// Reads cfg.file again. live_bps: the guarantees in force (by tenant index).
// Returns "" and the changes, or the reason nothing can be applied.
std::string diff_config(const edge::EdgeConfig& cfg, const std::string& running_text,
                        const std::vector<double>& live_bps, std::string& new_text, std::vector<TenantChange>& changes);

// The whole file as text ("" when it cannot be read).
std::string read_text(const std::string& path);

}  // namespace ufab::pipeline
