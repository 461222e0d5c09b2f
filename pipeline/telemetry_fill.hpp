// The answers of ufab-edge's telemetry commands (telemetry.hpp), run on the
// control lcore: views (read every worker's state through commands, edge.hpp)
// and actions (runtime changes through the control lcore, control.hpp).
#pragma once

#include <string>
#include <vector>

#include "control/clock.hpp"
#include "pipeline/edge.hpp"

struct rte_tel_data;

namespace ufab::pipeline::tel {

// helpers
void add_real(rte_tel_data* d, const char* name, double v);
const char* state_name(VmPair::State st);
void fail(rte_tel_data* d, const std::string& why);
std::vector<std::string> split(const char* params);

// views (telemetry_views.cpp)
void fill_stats(Edge& e, rte_tel_data* d);
void fill_tenants(Edge& e, rte_tel_data* d);
void fill_paths(Edge& e, rte_tel_data* d);
void fill_pairs(Edge& e, const char* params, rte_tel_data* d, Nanos now);
void fill_pair(Edge& e, const char* params, rte_tel_data* d, Nanos now);
void fill_workers(Edge& e, rte_tel_data* d);

// actions (telemetry_actions.cpp)
void fill_tenant_set(Edge& e, const char* params, rte_tel_data* d);
void fill_tenant_class(Edge& e, const char* params, rte_tel_data* d);
void fill_drain(Edge& e, const char* params, rte_tel_data* d, bool on);
void fill_reload(Edge& e, rte_tel_data* d, Nanos now);
void fill_port_add(Edge& e, const char* params, rte_tel_data* d);
void fill_port_remove(Edge& e, const char* params, rte_tel_data* d);

}  // namespace ufab::pipeline::tel
