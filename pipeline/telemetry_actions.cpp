// Telemetry actions: tenant_set, tenant_class, path_drain/undrain, reload,
// port_add/port_remove (edge/README.md).
#include <rte_telemetry.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pipeline/ports.hpp"
#include "pipeline/telemetry_fill.hpp"

namespace ufab::pipeline::tel {

namespace {

// A VNI of digits only: strtoul skips blanks, takes a sign and wraps ("-1"
// is ULONG_MAX); and a VNI past 32 bits was cut to another tenant's
// ("4294967396" set VNI 100). "" and the VNI, or what is wrong.
std::string vni_of(const std::string& a, uint32_t& vni) {
  if (a.empty() || a.find_first_not_of("0123456789") != std::string::npos) return "VNI '" + a + "' is not a number";
  const unsigned long v = std::strtoul(a.c_str(), nullptr, 10);
  if (v > UINT32_MAX) return "no tenant with vni " + a;
  vni = static_cast<uint32_t>(v);
  return "";
}

}  // namespace

void fill_tenant_set(Edge& e, const char* params, rte_tel_data* d) {
  const std::vector<std::string> a = split(params);
  char* end = nullptr;
  if (a.size() != 2) return fail(d, "usage: /ufab/tenant_set,VNI,GBPS");
  uint32_t vni = 0;
  if (const std::string err = vni_of(a[0], vni); !err.empty()) return fail(d, err);
  const double gbps = std::strtod(a[1].c_str(), &end);
  if (a[1].empty() || *end != '\0') return fail(d, "GBPS '" + a[1] + "' is not a number");
  if (const std::string err = e.control.set_guarantee(vni, gbps); !err.empty()) return fail(d, err);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data_add_dict_u64(d, "vni", vni);
  add_real(d, "guarantee_gbps", gbps);
  rte_tel_data_add_dict_u64(d, "weight_class", e.control.weight_class[e.cfg.tenant_index(vni)]);
}

void fill_tenant_class(Edge& e, const char* params, rte_tel_data* d) {
  const std::vector<std::string> a = split(params);
  if (a.size() != 2) return fail(d, "usage: /ufab/tenant_class,VNI,CLASS (CLASS 0..7 or auto)");
  uint32_t vni = 0;
  if (const std::string err = vni_of(a[0], vni); !err.empty()) return fail(d, err);
  int cls = Control::kWeightFromGuarantee;
  if (a[1] != "auto") {
    if (a[1].size() != 1 || a[1][0] < '0' || a[1][0] > '7') return fail(d, "CLASS '" + a[1] + "' is not 0..7 or auto");
    cls = a[1][0] - '0';
  }
  std::string moved;
  if (const std::string err = e.control.set_weight_class(vni, cls, &moved); !err.empty()) return fail(d, err);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data_add_dict_u64(d, "vni", vni);
  rte_tel_data_add_dict_u64(d, "weight_class", e.control.weight_class[e.cfg.tenant_index(vni)]);
  rte_tel_data_add_dict_string(d, "weight_class_from", cls == Control::kWeightFromGuarantee ? "guarantee" : "config");
  rte_tel_data_add_dict_int(d, "moved", moved.empty() ? 0 : 1);
}

void fill_drain(Edge& e, const char* params, rte_tel_data* d, bool on) {
  const std::vector<std::string> a = split(params);
  if (a.size() != 2) return fail(d, on ? "usage: /ufab/path_drain,HOST,PATH" : "usage: /ufab/path_undrain,HOST,PATH");
  size_t h = 0;
  if (const std::string err = e.control.set_drained(a[0], a[1], on, &h); !err.empty()) return fail(d, err);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data_add_dict_string(d, "host", e.cfg.hosts[h].name.c_str());
  const size_t k = std::strtoull(a[1].c_str(), nullptr, 10);  // set_drained checked it
  rte_tel_data_add_dict_u64(d, "path", k);
  rte_tel_data_add_dict_int(d, "drained", on ? 1 : 0);
  // Undrained, a path on an uplink whose link is down stays out until it is up (uplinks.cpp).
  const uint16_t port = e.cfg.hosts[h].paths[k].port;
  rte_tel_data_add_dict_int(d, "uplink_down", e.control.uplink_is_down(port) ? 1 : 0);
}

void fill_reload(Edge& e, rte_tel_data* d, Nanos now) {
  const Control::ReloadResult r = e.control.reload(now);
  if (!r.ok) return fail(d, r.error);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data* c = rte_tel_data_alloc();
  if (c == nullptr) return;
  rte_tel_data_start_array(c, RTE_TEL_STRING_VAL);
  for (const std::string& ch : r.changes) rte_tel_data_add_array_string(c, ch.c_str());
  rte_tel_data_add_dict_container(d, "changes", c, 0);
}

void fill_port_add(Edge& e, const char* params, rte_tel_data* d) {
  const std::string devargs = params != nullptr ? params : "";
  uint16_t port = 0;
  std::string line;
  if (const std::string err = add_port(e, devargs, &port, &line); !err.empty()) return fail(d, err);
  std::printf("%s (attached)\n", line.c_str());
  std::fflush(stdout);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data_add_dict_u64(d, "port", port);
  rte_tel_data_add_dict_string(d, "port_line", line.c_str());
  rte_tel_data_add_dict_string(d, "rx_mode", to_string(e.layout.rx_mode[port]));
  rte_tel_data_add_dict_int(d, "rx_worker", e.layout.rx_worker[port]);
}

void fill_port_remove(Edge& e, const char* params, rte_tel_data* d) {
  const std::string a = params != nullptr ? params : "";
  if (a.empty() || a.size() > 5 || a.find_first_not_of("0123456789") != std::string::npos)
    return fail(d, "usage: /ufab/port_remove,PORT (a port id: /ufab/stats lists them)");
  const unsigned long p = std::strtoul(a.c_str(), nullptr, 10);
  if (p > UINT16_MAX) return fail(d, "port " + a + " does not exist");
  if (const std::string err = remove_port(e, static_cast<uint16_t>(p)); !err.empty()) return fail(d, err);
  std::printf("ufab-edge port %lu removed\n", p);
  std::fflush(stdout);
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_int(d, "ok", 1);
  rte_tel_data_add_dict_u64(d, "removed", p);
}

}  // namespace ufab::pipeline::tel
