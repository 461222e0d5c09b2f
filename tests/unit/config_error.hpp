// Shared by the ufab-edge configuration tests: the message parse_config()
// throws for a configuration text ("" when it is accepted).
#pragma once

#include <string>

#include "edge/config.hpp"

namespace ufab::edge::testing {

inline std::string error_of(const std::string& text) {
  try {
    parse_config(text, "t.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A small configuration: this edge (fabric port 1), `params` and `tenants`
// and `vms` (the lines under each key; empty params: no params key), host
// hB with one path, and remote VM b1 (id 9) of tenant 100 behind it.
inline std::string small_config(const std::string& params, const std::string& tenants, const std::string& vms) {
  return std::string("edge: {fabric_port: 1, ip: 10.0.0.1, mac: \"02:00:00:00:00:01\"}\n") +
         (params.empty() ? "" : "params:\n" + params) +
         "tenants:\n" + tenants +
         "vms:\n" + vms +
         "hosts:\n"
         "  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: 20, paths: [[1]]}\n"
         "remote_vms:\n"
         "  - {name: b1, id: 9, tenant: 100, ip: 192.168.0.2, host: hB}\n";
}

}  // namespace ufab::edge::testing
