#include "pipeline/reload.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

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

constexpr const char* kRestart = "changed, needs a restart; nothing applied";

}  // namespace

std::string tags_text(uint16_t svlan, uint16_t vlan) {
  if (svlan != 0) return "qinq [" + std::to_string(svlan) + ", " + std::to_string(vlan) + "]";
  return vlan != 0 ? "vlan " + std::to_string(vlan) : "untagged";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

std::string ip6_or_none(const edge::Ip6& a) { return a == edge::Ip6{} ? "none" : edge::ip6_text(a); }

// What differs between two entries of one VM ("" when nothing): the fields
// every VM has, then `last`, x -> y (a remote VM's host, a local VM's port).
std::string vm_fields(const edge::VmCfg& a, const edge::VmCfg& b, const char* last, const std::string& x,
                      const std::string& y) {
  std::string out;
  const auto note = [&](const char* field, const std::string& from, const std::string& to) {
    if (from == to) return;
    if (!out.empty()) out += ", ";
    out += std::string(field) + " " + from + " -> " + to;
  };
  note("name", a.name, b.name);
  note("tenant", std::to_string(a.vni), std::to_string(b.vni));
  note("mac", edge::mac_text(a.mac), edge::mac_text(b.mac));
  note("ip", edge::ip4_text(a.ip), edge::ip4_text(b.ip));
  note("ip6", ip6_or_none(a.ip6), ip6_or_none(b.ip6));
  note(last, x, y);
  return out;
}

std::string labels_text(const std::vector<uint16_t>& labels) {
  std::string s = "[";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i != 0) s += ", ";
    s += std::to_string(labels[i]);
  }
  return s + "]";
}

// What differs between two entries of one host (HostCfg::same_as is false).
std::string host_fields(const edge::HostCfg& a, const edge::HostCfg& b) {
  std::string out;
  const auto note = [&](const char* field, const std::string& from, const std::string& to) {
    if (from == to) return;
    if (!out.empty()) out += ", ";
    out += std::string(field) + " " + from + " -> " + to;
  };
  const auto paths = [](const std::vector<edge::PathCfg>& ps) {
    std::string s = "[";
    for (size_t i = 0; i < ps.size(); ++i) {
      if (i != 0) s += ", ";
      s += labels_text(ps[i].labels);
    }
    return s + "]";
  };
  // Each path's UDP source port and uplink ("udp/port"), which the labels do not show.
  const auto ports = [](const std::vector<edge::PathCfg>& ps) {
    std::string s;
    for (const edge::PathCfg& p : ps) {
      if (!s.empty()) s += " ";
      s += std::to_string(p.udp_src_port);
      s += "/";
      s += std::to_string(p.port);
    }
    return s;
  };
  const auto reply = [&](const edge::PathCfg& p) { return labels_text(p.labels) + " " + ports({p}); };
  note("ip", edge::ip4_text(a.ip), edge::ip4_text(b.ip));
  note("mac", edge::mac_text(a.mac), edge::mac_text(b.mac));
  note("base_rtt_us", std::to_string(a.base_rtt_ns / 1000), std::to_string(b.base_rtt_ns / 1000));
  note("paths", paths(a.paths), paths(b.paths));
  if (paths(a.paths) == paths(b.paths)) note("paths' udp_src_port/port", ports(a.paths), ports(b.paths));
  note("reply_path", reply(a.reply_path), reply(b.reply_path));
  return out;
}

// The running list's VMs (those not removed) against the file's, by VM id:
// removals and changes in the running order, then additions in the file's.
// fields(a, b): what differs ("" when nothing); entry(i): the file's i-th
// VM as the change carries it; at[i] (when given): where the file has it.
template <class Fields, class Entry>
void diff_by_id(const std::vector<edge::VmCfg>& running, const std::vector<edge::VmCfg>& next, const Fields& fields,
                const Entry& entry, const std::vector<std::string>* at, std::vector<VmChange>& out) {
  std::unordered_map<uint16_t, size_t> in_next;
  for (size_t i = 0; i < next.size(); ++i) in_next[next[i].id] = i;
  std::set<uint16_t> running_ids;
  for (size_t r = 0; r < running.size(); ++r) {
    const edge::VmCfg& a = running[r];
    if (a.removed) continue;
    running_ids.insert(a.id);
    VmChange ch;
    ch.running = static_cast<uint32_t>(r);
    const auto it = in_next.find(a.id);
    if (it == in_next.end()) {
      ch.kind = VmChange::Kind::removed;
      ch.vm = a;
      out.push_back(std::move(ch));
      continue;
    }
    ch.fields = fields(a, next[it->second]);
    if (ch.fields.empty()) continue;
    ch.kind = VmChange::Kind::changed;
    ch.vm = entry(it->second);
    if (at != nullptr) ch.at = (*at)[it->second];
    out.push_back(std::move(ch));
  }
  for (size_t i = 0; i < next.size(); ++i) {
    if (running_ids.count(next[i].id) != 0) continue;
    VmChange ch;
    ch.vm = entry(i);
    if (at != nullptr) ch.at = (*at)[i];
    out.push_back(std::move(ch));
  }
}

}  // namespace

void diff_local(const edge::EdgeConfig& running, const edge::EdgeConfig& next, const std::vector<std::string>& vm_at,
                ReloadDiff& d) {
  diff_by_id(
      running.vms, next.vms,
      [](const edge::VmCfg& a, const edge::VmCfg& b) {
        std::string f = vm_fields(a, b, "port", std::to_string(a.port), std::to_string(b.port));
        if (a.vlan != b.vlan || a.svlan != b.svlan)  // its tenant re-tagged
          f += (f.empty() ? "tags " : ", tags ") + tags_text(a.svlan, a.vlan) + " -> " + tags_text(b.svlan, b.vlan);
        return f;
      },
      [&](size_t i) { return next.vms[i]; }, &vm_at, d.local_vms);
}

void diff_remote(const edge::EdgeConfig& running, const edge::EdgeConfig& next, ReloadDiff& d) {
  // Hosts by name. live_host[i]: where next.hosts[i] is (or will be) in the
  // running cfg.hosts: its own index, or appended after the others.
  std::unordered_map<std::string, size_t> in_next;
  for (size_t i = 0; i < next.hosts.size(); ++i) in_next[next.hosts[i].name] = i;
  std::vector<uint32_t> live_host(next.hosts.size(), UINT32_MAX);
  std::vector<std::string> changed(next.hosts.size());  // by the file's index: a changed host's fields
  for (size_t h = 0; h < running.hosts.size(); ++h) {
    const edge::HostCfg& a = running.hosts[h];
    if (a.removed) continue;
    const auto it = in_next.find(a.name);
    if (it == in_next.end()) {
      HostChange ch;
      ch.added = false;
      ch.running = static_cast<uint32_t>(h);
      ch.host = a;
      d.hosts.push_back(std::move(ch));
      continue;
    }
    if (!a.same_as(next.hosts[it->second])) {
      // Changed: removed, then added anew below (a new entry); its VMs change with it.
      HostChange ch;
      ch.added = false;
      ch.running = static_cast<uint32_t>(h);
      ch.host = a;
      ch.fields = changed[it->second] = host_fields(a, next.hosts[it->second]);
      d.hosts.push_back(std::move(ch));
      continue;
    }
    live_host[it->second] = static_cast<uint32_t>(h);
  }
  auto appended = static_cast<uint32_t>(running.hosts.size());
  for (size_t i = 0; i < next.hosts.size(); ++i) {
    if (live_host[i] != UINT32_MAX) continue;
    live_host[i] = appended++;
    HostChange ch;
    ch.host = next.hosts[i];
    ch.fields = changed[i];
    d.hosts.push_back(std::move(ch));
  }

  // Remote VMs by id, each host an index into the running list once the
  // hosts added are appended.
  diff_by_id(
      running.remote_vms, next.remote_vms,
      [&](const edge::VmCfg& a, const edge::VmCfg& b) {
        std::string f = vm_fields(a, b, "host", running.hosts[a.host].name, next.hosts[b.host].name);
        if (!changed[b.host].empty() && running.hosts[a.host].name == next.hosts[b.host].name)
          f += (f.empty() ? "host " : ", host ") + next.hosts[b.host].name + " changed";  // a VM on a changed host
        return f;
      },
      [&](size_t i) {
        edge::VmCfg v = next.remote_vms[i];
        v.host = live_host[v.host];
        return v;
      },
      nullptr, d.vms);
}

std::string diff_config(const edge::EdgeConfig& cfg, const std::string& running_text, const std::vector<double>& live_bps,
                        const std::vector<int>& live_class, std::string& new_text, ReloadDiff& d,
                        const edge::PortByName& by_name) {
  new_text = read_text(cfg.file);
  edge::EdgeConfig next;
  try {
    next = edge::parse_config(new_text, cfg.file);
    edge::resolve_ports(next, by_name);
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
    if (k == "tenants" || k == "hosts" || k == "remote_vms" || k == "vms") continue;  // compared below
    if (canon(a[k]) != canon(b[k])) return where(cfg.file, b[k]) + ": " + k + ": " + kRestart;
  }
  // Tenants by VNI (tenants.hpp): the file's against those in force (not
  // removed), whose entries may have been added by earlier reloads.
  std::vector<uint8_t> kept(cfg.tenants.size(), 0);
  for (size_t i = 0; i < next.tenants.size(); ++i) {
    const edge::TenantCfg& n = next.tenants[i];
    const edge::TenantCfg* run = cfg.tenant(n.vni);
    if (run == nullptr) {
      d.tenants_added.push_back(n);
      continue;
    }
    const size_t t = static_cast<size_t>(run - cfg.tenants.data());
    kept[t] = 1;
    if (run->vlan != n.vlan || run->svlan != n.svlan)
      d.tenants_retagged.push_back(TenantRetag{static_cast<uint32_t>(t), n.vlan, n.svlan});
    const int cls = n.weight_from_guarantee ? TenantChange::kFromGuarantee : static_cast<int>(n.weight_class);
    if (n.guarantee_bps != live_bps[t] || cls != live_class[t])
      d.tenants.push_back(TenantChange{n.vni, live_bps[t], n.guarantee_bps, live_class[t], cls});
  }
  for (size_t t = 0; t < cfg.tenants.size(); ++t) {
    if (cfg.tenants[t].removed || kept[t]) continue;
    d.tenants_removed.push_back(static_cast<uint32_t>(t));
  }
  std::vector<std::string> vm_at;
  for (size_t i = 0; i < next.vms.size(); ++i) vm_at.push_back(where(cfg.file, b["vms"][i]) + ": vms[" + std::to_string(i) + "]");
  diff_local(cfg, next, vm_at, d);
  diff_remote(cfg, next, d);
  return "";
}

}  // namespace ufab::pipeline
