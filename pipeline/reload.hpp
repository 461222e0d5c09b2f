// Reloading ufab-edge's configuration at runtime (SIGHUP or /ufab/reload):
// the file is read and validated as at start-up (file:line:col: field:
// what), then compared with the configuration the edge runs. What can change
// without a restart: a tenant's guarantee_gbps (Alg. 1's phi_alpha) and its
// weight_class (a class, or auto: from the guarantee, against the unit the
// edge started with); queued packets are kept. Anything else (ports, VMs,
// hosts, paths, parameters, tenants added or removed) is rejected naming the
// first field that differs, and nothing is applied.
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

// Reads cfg.file again. live_bps, live_class: the guarantees and weight
// classes in force (by tenant index; kFromGuarantee for auto). Returns ""
// and the changes, or the reason nothing can be applied.
std::string diff_config(const edge::EdgeConfig& cfg, const std::string& running_text, const std::vector<double>& live_bps,
                        const std::vector<int>& live_class, std::string& new_text, std::vector<TenantChange>& changes);

// The whole file as text ("" when it cannot be read).
std::string read_text(const std::string& path);

}  // namespace ufab::pipeline
