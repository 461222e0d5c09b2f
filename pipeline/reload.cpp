#include "pipeline/reload.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

namespace ufab::pipeline {

namespace {

// A style-independent rendering of a YAML node (flow and block forms of the
// same content compare equal).
// A key in one text and not in the other reads as an invalid node here,
// whose Type() throws: it renders as absent.
std::string canon(const YAML::Node& n) {
  if (!n.IsDefined()) return "(absent)";
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return n.Scalar();
    case YAML::NodeType::Sequence: {
      std::string s = "[";
      for (const YAML::Node& e : n) s += canon(e) + ",";
      return s + "]";
    }
    case YAML::NodeType::Map: {
      std::string s = "{";
      for (const auto& kv : n) s += kv.first.Scalar() + ":" + canon(kv.second) + ",";
      return s + "}";
    }
    default: return "~";
  }
}

std::string where(const std::string& file, const YAML::Node& n) {
  std::ostringstream s;
  s << file;
  if (n.IsDefined() && n.Mark().line >= 0) s << ':' << n.Mark().line + 1 << ':' << n.Mark().column + 1;
  return s.str();
}

const char* kRestart = "changed, needs a restart; nothing applied";

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string diff_config(const edge::EdgeConfig& cfg, const std::string& running_text, const std::vector<double>& live_bps,
                        const std::vector<int>& live_class, std::string& new_text, std::vector<TenantChange>& changes) {
  new_text = read_text(cfg.file);
  edge::EdgeConfig next;
  try {
    next = edge::parse_config(new_text, cfg.file);
  } catch (const edge::ConfigError& e) {
    return std::string("invalid configuration: ") + e.what() + " (nothing applied)";
  }
  YAML::Node a, b;
  try {
    a = YAML::Load(running_text);
    b = YAML::Load(new_text);
  } catch (const YAML::Exception& e) {
    return cfg.file + ": " + e.what();
  }
  std::set<std::string> keys;
  for (const auto& kv : a) keys.insert(kv.first.Scalar());
  for (const auto& kv : b) keys.insert(kv.first.Scalar());
  for (const std::string& k : keys) {
    if (k == "tenants") continue;
    if (canon(a[k]) != canon(b[k])) return where(cfg.file, b[k]) + ": " + k + ": " + kRestart;
  }
  const YAML::Node ta = a["tenants"], tb = b["tenants"];
  if (ta.size() != tb.size()) return where(cfg.file, tb) + ": tenants: added or removed; " + kRestart;
  for (size_t i = 0; i < tb.size(); ++i) {
    std::set<std::string> fields;
    for (const auto& kv : ta[i]) fields.insert(kv.first.Scalar());
    for (const auto& kv : tb[i]) fields.insert(kv.first.Scalar());
    for (const std::string& f : fields) {
      if (f == "guarantee_gbps" || f == "weight_class") continue;
      if (canon(ta[i][f]) != canon(tb[i][f]))
        return where(cfg.file, tb[i][f].IsDefined() ? tb[i][f] : tb[i]) + ": tenants[" + std::to_string(i) + "]." + f +
               ": " + kRestart;
    }
  }
  for (size_t t = 0; t < next.tenants.size(); ++t) {
    const edge::TenantCfg& n = next.tenants[t];
    const int cls = n.weight_from_guarantee ? TenantChange::kFromGuarantee : static_cast<int>(n.weight_class);
    if (n.guarantee_bps != live_bps[t] || cls != live_class[t])
      changes.push_back(TenantChange{n.vni, live_bps[t], n.guarantee_bps, live_class[t], cls});
  }
  return "";
}

}  // namespace ufab::pipeline
