#include "edge/config.hpp"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

#include "control/vm_pair.hpp"
#include "probe/wire.hpp"
#include "sched/weight_class.hpp"

namespace ufab::edge {

namespace {
bool same_path(const PathCfg& a, const PathCfg& b) {
  return a.labels == b.labels && a.udp_src_port == b.udp_src_port && a.port == b.port;
}
}  // namespace

bool HostCfg::same_as(const HostCfg& o) const {
  if (ip != o.ip || mac != o.mac || base_rtt_ns != o.base_rtt_ns || paths.size() != o.paths.size() ||
      !same_path(reply_path, o.reply_path))
    return false;
  for (size_t i = 0; i < paths.size(); ++i)
    if (!same_path(paths[i], o.paths[i])) return false;
  return true;
}

const TenantCfg* EdgeConfig::tenant(uint32_t vni) const {
  for (const TenantCfg& t : tenants)
    if (t.vni == vni && !t.removed) return &t;
  return nullptr;
}

size_t EdgeConfig::tenant_index(uint32_t vni) const { return static_cast<size_t>(tenant(vni) - tenants.data()); }

ClassMapping EdgeConfig::weight_class_of(double guarantee_bps) const {
  if (!(guarantee_bps > 0) || !std::isfinite(guarantee_bps))
    return ClassMapping{0, weight_classes.class_weights()[0], weight_unit_bps(), INFINITY};
  return weight_classes.map(guarantee_bps);
}

namespace {

// Error reporting: "file:line:col: field: what" (yaml-cpp marks are 0-based).
class Where {
 public:
  explicit Where(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void fail(const YAML::Node& n, const std::string& field, const std::string& what) const {
    std::ostringstream s;
    s << file_;
    if (n.IsDefined() && n.Mark().line >= 0) s << ':' << n.Mark().line + 1 << ':' << n.Mark().column + 1;
    s << ": " << printable(field) << ": " << printable(what);
    throw ConfigError(s.str());
  }
  // "file:line:col" of n (a message made later: resolve_ports).
  std::string at(const YAML::Node& n) const {
    std::ostringstream s;
    s << file_;
    if (n.IsDefined() && n.Mark().line >= 0) s << ':' << n.Mark().line + 1 << ':' << n.Mark().column + 1;
    return s.str();
  }
  // Field names and values come from the file: a control byte in them (a
  // NUL cut the message short at what()) is written as \xNN.
  static std::string printable(const std::string& in) {
    std::string out;
    for (const char ch : in) {
      const auto c = static_cast<unsigned char>(ch);
      if (c >= 0x20 && c != 0x7f) {
        out += ch;
      } else {
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        out += hex;
      }
    }
    return out;
  }
  // A required key of map m (the error points at the map).
  YAML::Node need(const YAML::Node& m, const char* key, const std::string& field) const {
    const YAML::Node n = m[key];
    if (!n.IsDefined() || n.IsNull()) fail(m, field + "." + key, "missing");
    return n;
  }
  void only_keys(const YAML::Node& m, const std::string& field, std::initializer_list<std::string_view> keys) const {
    if (!m.IsMap()) fail(m, field, "must be a mapping");
    for (const auto& kv : m) {
      if (!kv.first.IsScalar()) fail(kv.first, field, "a key that is not a name");
      const std::string k = kv.first.Scalar();
      bool known = false;
      for (const std::string_view x : keys) known = known || x == k;
      if (!known) fail(kv.first, field + "." + k, "unknown key");
    }
  }

 private:
  std::string file_;
};

std::string scalar(const Where& w, const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) w.fail(n, field, "must be a scalar");
  return n.Scalar();
}

uint64_t u64(const Where& w, const YAML::Node& n, const std::string& field, uint64_t lo, uint64_t hi) {
  const std::string s = scalar(w, n, field);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) w.fail(n, field, "'" + s + "' is not a non-negative integer");
  if (v < lo || v > hi)
    w.fail(n, field, "'" + s + "' is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

double real(const Where& w, const YAML::Node& n, const std::string& field, double lo, double hi) {
  const std::string s = scalar(w, n, field);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) w.fail(n, field, "'" + s + "' is not a number");
  if (v < lo || v > hi) {
    char range[64];  // %g: "[0.001, 1000]", not std::to_string's "[0.001000, 1000.000000]"
    std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    w.fail(n, field, "'" + s + "' is out of range " + range);
  }
  return v;
}

bool boolean(const Where& w, const YAML::Node& n, const std::string& field) {
  const std::string s = scalar(w, n, field);
  if (s == "true") return true;
  if (s == "false") return false;
  w.fail(n, field, "'" + s + "' is not true or false");
}

uint32_t ipv4(const Where& w, const YAML::Node& n, const std::string& field) {
  const std::string s = scalar(w, n, field);
  uint32_t ip = 0;
  size_t b = 0;
  for (int part = 0; part < 4; ++part) {
    const size_t e = part == 3 ? s.size() : s.find('.', b);
    unsigned v = 256;
    if (e != std::string::npos && e > b) {
      const auto [end, ec] = std::from_chars(s.data() + b, s.data() + e, v);
      if (ec != std::errc() || end != s.data() + e) v = 256;
    }
    if (v > 255) w.fail(n, field, "'" + s + "' is not an IPv4 address");
    ip = ip << 8 | v;
    b = e + 1;
  }
  return ip;
}

// An IPv6 address a VM may have: global unicast (2000::/3) or unique local
// (fc00::/7, RFC 4193). Refused: the unspecified and loopback addresses,
// IPv4-mapped and -compatible ones, multicast (ff00::/8), link-local
// (fe80::/10: every vNIC has its own, and the fabric carries a tenant's
// configured addresses only) and the deprecated site-local fec0::/10.
Ip6 ipv6(const Where& w, const YAML::Node& n, const std::string& field) {
  const std::string s = scalar(w, n, field);
  Ip6 a{};
  if (inet_pton(AF_INET6, s.c_str(), a.data()) != 1) w.fail(n, field, "'" + s + "' is not an IPv6 address");
  if ((a[0] & 0xe0) != 0x20 && (a[0] & 0xfe) != 0xfc)
    w.fail(n, field, "'" + s + "' is not a unicast global (2000::/3) or unique-local (fc00::/7) IPv6 address");
  return a;
}

Mac mac(const Where& w, const YAML::Node& n, const std::string& field) {
  const std::string s = scalar(w, n, field);
  Mac m{};
  if (s.size() != 17) w.fail(n, field, "'" + s + "' is not a MAC address (aa:bb:cc:dd:ee:ff)");
  for (size_t i = 0; i < 6; ++i) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data() + 3 * i, s.data() + 3 * i + 2, v, 16);
    if (ec != std::errc() || end != s.data() + 3 * i + 2 || (i < 5 && s[3 * i + 2] != ':'))
      w.fail(n, field, "'" + s + "' is not a MAC address (aa:bb:cc:dd:ee:ff)");
    m[i] = static_cast<uint8_t>(v);
  }
  return m;
}

std::vector<uint16_t> labels(const Where& w, const YAML::Node& n, const std::string& field) {
  if (!n.IsSequence() || n.size() == 0 || n.size() > wire::kMaxLabels)
    w.fail(n, field, "must be a list of 1.." + std::to_string(wire::kMaxLabels) + " egress ports");
  std::vector<uint16_t> out;
  for (size_t i = 0; i < n.size(); ++i)
    out.push_back(static_cast<uint16_t>(u64(w, n[i], field + "[" + std::to_string(i) + "]", 0, 65535)));
  return out;
}

std::string port_list(const std::vector<uint16_t>& ports) {
  std::string s;
  for (const uint16_t p : ports) {
    if (!s.empty()) s.append(", ");
    s.append(std::to_string(p));
  }
  if (ports.size() != 1) s = "[" + s + "]";
  return s;
}

// default_port: the port a path that names none leaves on.
PathCfg path(const Where& w, const YAML::Node& n, const std::string& field, size_t index, const EdgeConfig& c,
             uint16_t default_port) {
  PathCfg p;
  p.port = default_port;
  if (n.IsSequence()) {
    p.labels = labels(w, n, field);
  } else {
    w.only_keys(n, field, {"labels", "udp_src_port", "port"});
    p.labels = labels(w, w.need(n, "labels", field), field + ".labels");
    if (n["udp_src_port"]) p.udp_src_port = static_cast<uint16_t>(u64(w, n["udp_src_port"], field + ".udp_src_port", 1, 65535));
    if (n["port"]) {
      p.port = static_cast<uint16_t>(u64(w, n["port"], field + ".port", 0, 1023));
      if (!c.is_fabric_port(p.port))
        w.fail(n["port"], field + ".port", "is not a fabric port (edge.fabric_port: " + port_list(c.fabric_ports) + ")");
    }
  }
  if (p.udp_src_port == 0) p.udp_src_port = static_cast<uint16_t>(0xc000 + index);
  return p;
}

template <typename F>
void each(const Where& w, const YAML::Node& root, const char* key, F&& f) {
  const YAML::Node list = root[key];
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) w.fail(list, key, "must be a list");
  for (size_t i = 0; i < list.size(); ++i) f(list[i], std::string(key) + "[" + std::to_string(i) + "]");
}

void load_edge(const Where& w, const YAML::Node& e, EdgeConfig& c) {
  w.only_keys(e, "edge", {"fabric_port", "ip", "mac", "udp_port", "fabric_rate_mbps", "fabric_mtu"});
  // One port, or a list of distinct ports (uplinks; the first is the paths' default).
  const YAML::Node fp = w.need(e, "fabric_port", "edge");
  c.fabric_ports.clear();
  if (fp.IsSequence()) {
    if (fp.size() == 0 || fp.size() > EdgeConfig::kMaxFabricPorts)
      w.fail(fp, "edge.fabric_port", "must be a port or a list of 1.." + std::to_string(EdgeConfig::kMaxFabricPorts) + " ports");
    for (size_t i = 0; i < fp.size(); ++i) {
      const std::string f = "edge.fabric_port[" + std::to_string(i) + "]";
      const auto p = static_cast<uint16_t>(u64(w, fp[i], f, 0, 1023));
      if (c.is_fabric_port(p)) w.fail(fp[i], f, "port " + std::to_string(p) + " is listed twice");
      c.fabric_ports.push_back(p);
    }
  } else {
    c.fabric_ports.push_back(static_cast<uint16_t>(u64(w, fp, "edge.fabric_port", 0, 1023)));
  }
  c.ip = ipv4(w, w.need(e, "ip", "edge"), "edge.ip");
  c.mac = mac(w, w.need(e, "mac", "edge"), "edge.mac");
  if (e["udp_port"]) c.udp_port = static_cast<uint16_t>(u64(w, e["udp_port"], "edge.udp_port", 1, 65535));
  if (e["fabric_rate_mbps"])
    c.fabric_rate_mbps = static_cast<uint32_t>(u64(w, e["fabric_rate_mbps"], "edge.fabric_rate_mbps", 0, 1600000));
  if (e["fabric_mtu"])
    c.fabric_mtu = static_cast<uint16_t>(
        u64(w, e["fabric_mtu"], "edge.fabric_mtu", EdgeConfig::kMinFabricMtu, EdgeConfig::kMaxFabricMtu));
}

void load_params(const Where& w, const YAML::Node& p, EdgeConfig& c) {
  if (!p.IsDefined() || p.IsNull()) return;
  w.only_keys(p, "params",
              {"unit_bw_gbps", "eta", "probe_every_bytes", "token_period_us", "violation_rtts", "freeze_max_rtts",
               "probe_timeout_rtts", "finish_max_retries", "idle_finish_ms", "reorder_avoidance", "burst", "mbufs",
               "queue_capacity", "flows_per_pair", "max_incoming", "seed", "window_gating", "sched_bypass", "pair_pacing",
               "pair_pacing_depth_us", "ack_sweep_us", "classify_cache",
               "probe_on_window_full", "probe_timeout_max_rtts", "token_round_max_share", "pair_poll_max_share",
               "weight_unit_gbps", "weight_span_gbps", "spare_remote_vms", "spare_pairs", "spare_hosts", "spare_local_vms",
               "spare_tenants"});
  EdgeParams& e = c.params;
  const auto has = [&](const char* k) { return p[k].IsDefined() && !p[k].IsNull(); };
  const auto f = [](const char* k) { return std::string("params.") + k; };
  if (has("unit_bw_gbps")) e.unit_bw_Bps = real(w, p["unit_bw_gbps"], f("unit_bw_gbps"), 1e-3, 1000) * 1e9 / 8;
  if (has("weight_unit_gbps")) {
    const double unit = real(w, p["weight_unit_gbps"], f("weight_unit_gbps"), 1e-6, 1e4) * 1e9;
    c.weight_classes = WeightClassMap(WeightClassMap().class_weights(), unit);
    c.weight_unit_given = true;
  }
  if (has("weight_span_gbps")) {
    const YAML::Node sp = p["weight_span_gbps"];
    if (has("weight_unit_gbps")) w.fail(sp, f("weight_span_gbps"), "give weight_unit_gbps or weight_span_gbps, not both");
    if (!sp.IsSequence() || sp.size() != 2) w.fail(sp, f("weight_span_gbps"), "must be [lo, hi] in Gb/s");
    const double lo = real(w, sp[0], f("weight_span_gbps[0]"), 1e-6, 1e4), hi = real(w, sp[1], f("weight_span_gbps[1]"), 1e-6, 1e4);
    if (!(hi > lo) || hi / lo > kMaxClassWeight)
      w.fail(sp, f("weight_span_gbps"), "needs lo < hi <= " + std::to_string(kMaxClassWeight) + " x lo");
    c.weight_classes = WeightClassMap::spanning(lo * 1e9, hi * 1e9);
    c.weight_span = true;
  }
  if (has("eta")) e.eta = real(w, p["eta"], f("eta"), 0.01, 1.0);
  if (has("probe_every_bytes")) e.probe_every_bytes = u64(w, p["probe_every_bytes"], f("probe_every_bytes"), 64, 1u << 30);
  if (has("token_period_us")) c.token_period_ns = u64(w, p["token_period_us"], f("token_period_us"), 1, 1'000'000) * kUs;
  if (has("token_round_max_share"))
    c.token_round_max_share = real(w, p["token_round_max_share"], f("token_round_max_share"), 0.01, 1.0);
  if (has("pair_poll_max_share"))
    c.pair_poll_max_share = real(w, p["pair_poll_max_share"], f("pair_poll_max_share"), 0.01, 1.0);
  if (has("violation_rtts")) e.violation_rtts = static_cast<uint32_t>(u64(w, p["violation_rtts"], f("violation_rtts"), 1, 1000));
  if (has("freeze_max_rtts")) e.freeze_max_rtts = static_cast<uint32_t>(u64(w, p["freeze_max_rtts"], f("freeze_max_rtts"), 1, 1000));
  if (has("probe_timeout_rtts"))
    e.probe_timeout_rtts = static_cast<uint32_t>(u64(w, p["probe_timeout_rtts"], f("probe_timeout_rtts"), 1, 1000));
  if (has("probe_timeout_max_rtts")) {
    // The cap of the doubling loss timeout (docs/design.md §14); equal to
    // probe_timeout_rtts: no doubling.
    e.probe_timeout_max_rtts =
        static_cast<uint32_t>(u64(w, p["probe_timeout_max_rtts"], f("probe_timeout_max_rtts"), 1, 1'000'000));
    if (e.probe_timeout_max_rtts < e.probe_timeout_rtts)
      w.fail(p["probe_timeout_max_rtts"], f("probe_timeout_max_rtts"),
             "must be >= probe_timeout_rtts (" + std::to_string(e.probe_timeout_rtts) + ")");
  }
  if (has("finish_max_retries"))
    e.finish_max_retries = static_cast<uint32_t>(u64(w, p["finish_max_retries"], f("finish_max_retries"), 0, 100));
  if (has("idle_finish_ms")) e.idle_finish_ns = u64(w, p["idle_finish_ms"], f("idle_finish_ms"), 1, 3'600'000) * kMs;
  if (has("reorder_avoidance")) e.reorder_avoidance = boolean(w, p["reorder_avoidance"], f("reorder_avoidance"));
  if (has("burst")) c.burst = static_cast<uint32_t>(u64(w, p["burst"], f("burst"), 1, 64));
  if (has("mbufs")) c.mbufs = static_cast<uint32_t>(u64(w, p["mbufs"], f("mbufs"), 255, 1u << 22));
  if (has("queue_capacity")) c.queue_capacity = static_cast<uint32_t>(u64(w, p["queue_capacity"], f("queue_capacity"), 1, 4096));
  if (has("flows_per_pair")) c.flows_per_pair = static_cast<uint32_t>(u64(w, p["flows_per_pair"], f("flows_per_pair"), 1, 64));
  if (has("max_incoming")) c.max_incoming = static_cast<uint32_t>(u64(w, p["max_incoming"], f("max_incoming"), 1, 1u << 20));
  if (has("spare_remote_vms"))
    c.spare_remote_vms = static_cast<uint32_t>(u64(w, p["spare_remote_vms"], f("spare_remote_vms"), 0, 65535));
  if (has("spare_local_vms"))
    c.spare_local_vms = static_cast<uint32_t>(u64(w, p["spare_local_vms"], f("spare_local_vms"), 0, 65535));
  if (has("spare_tenants"))
    c.spare_tenants = static_cast<uint32_t>(u64(w, p["spare_tenants"], f("spare_tenants"), 0, 65535));
  if (has("spare_hosts")) c.spare_hosts = static_cast<uint32_t>(u64(w, p["spare_hosts"], f("spare_hosts"), 0, 65535));
  if (has("spare_pairs")) c.spare_pairs = static_cast<uint32_t>(u64(w, p["spare_pairs"], f("spare_pairs"), 0, 1u << 20));
  if (has("seed")) c.seed = u64(w, p["seed"], f("seed"), 0, UINT64_MAX);
  if (has("window_gating")) c.window_gating = boolean(w, p["window_gating"], f("window_gating"));
  if (has("sched_bypass")) c.sched_bypass = boolean(w, p["sched_bypass"], f("sched_bypass"));
  if (has("classify_cache")) c.classify_cache = boolean(w, p["classify_cache"], f("classify_cache"));
  if (has("pair_pacing")) c.pair_pacing = boolean(w, p["pair_pacing"], f("pair_pacing"));
  if (has("pair_pacing_depth_us"))
    c.pair_pacing_depth_ns = u64(w, p["pair_pacing_depth_us"], f("pair_pacing_depth_us"), 0, 10'000'000) * kUs;
  // The window-full probe exists to unblock a pair its window holds; with
  // window_gating off no window holds anything, so by default the probes
  // follow the §4.1 rule alone (one per L_w bytes).
  e.probe_on_window_full = has("probe_on_window_full")
                               ? boolean(w, p["probe_on_window_full"], f("probe_on_window_full"))
                               : c.window_gating;
  if (has("ack_sweep_us")) c.ack_sweep_ns = u64(w, p["ack_sweep_us"], f("ack_sweep_us"), 0, 10'000'000) * kUs;
  if (uint64_t{c.queue_capacity} * c.flows_per_pair > 65536)
    w.fail(p, "params.queue_capacity", "queue_capacity * flows_per_pair must be <= 65536");
}

VmCfg load_vm(const Where& w, const YAML::Node& n, const std::string& f, const EdgeConfig& c, bool local) {
  if (local)
    w.only_keys(n, f, {"name", "id", "tenant", "mac", "ip", "ip6", "port"});
  else
    w.only_keys(n, f, {"name", "id", "tenant", "mac", "ip", "ip6", "host"});
  VmCfg v;
  v.name = scalar(w, w.need(n, "name", f), f + ".name");
  v.id = static_cast<uint16_t>(u64(w, w.need(n, "id", f), f + ".id", 1, 65535));
  const YAML::Node t = w.need(n, "tenant", f);
  v.vni = static_cast<uint32_t>(u64(w, t, f + ".tenant", 0, (1u << 24) - 1));
  if (c.tenant(v.vni) == nullptr) w.fail(t, f + ".tenant", "no tenant with vni " + std::to_string(v.vni));
  v.ip = ipv4(w, w.need(n, "ip", f), f + ".ip");
  if (n["ip6"]) v.ip6 = ipv6(w, n["ip6"], f + ".ip6");
  if (local) {
    // The VM's vNIC: the destination of what the edge delivers and answers
    // to it, and the key that names the VM of a neighbour solicitation
    // (pipeline/ipv6_tables.hpp).
    v.mac = mac(w, w.need(n, "mac", f), f + ".mac");
    if (v.mac == Mac{} || (v.mac[0] & 1) != 0) w.fail(n["mac"], f + ".mac", "must be a unicast MAC, not all zeros");
    // The vNIC's DPDK port: its id, or its device name (resolve_ports, once
    // the EAL has the ports: a port attached at runtime takes the lowest free id).
    const YAML::Node pn = w.need(n, "port", f);
    const std::string ps = scalar(w, pn, f + ".port");
    if (!ps.empty() && ps.find_first_not_of("0123456789") != std::string::npos) {
      if (ps.size() >= 64 ||
          ps.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:.-") != std::string::npos)
        w.fail(pn, f + ".port", "'" + ps + "' is neither a port id nor a DPDK device name");
      v.port_name = ps;
      v.port_at = w.at(pn);
    } else {
      v.port = static_cast<uint16_t>(u64(w, pn, f + ".port", 0, 1023));
      if (c.is_fabric_port(v.port)) w.fail(pn, f + ".port", "is a fabric port");
    }
  } else {
    // The MAC this edge answers ARP requests for the VM's address with
    // (pipeline/vm_arp.cpp): its vNIC's, so one a VM may send to.
    if (n["mac"]) {
      v.mac = mac(w, n["mac"], f + ".mac");
      if (v.mac == Mac{} || (v.mac[0] & 1) != 0) w.fail(n["mac"], f + ".mac", "must be a unicast MAC, not all zeros");
    }
    const YAML::Node h = w.need(n, "host", f);
    const std::string hn = scalar(w, h, f + ".host");
    bool found = false;
    for (size_t i = 0; i < c.hosts.size() && !found; ++i)
      if (c.hosts[i].name == hn) {
        v.host = static_cast<uint32_t>(i);
        found = true;
      }
    if (!found) w.fail(h, f + ".host", "no host named '" + hn + "'");
  }
  return v;
}

}  // namespace

EdgeConfig parse_config(const std::string& text, const std::string& file) {
  const Where w(file);
  // yaml-cpp ends the stream at a NUL byte and reads what comes before it
  // alone (the rest of the file unread): refused where it is.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t line_start = text.rfind('\n', nul);
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(nul), '\n'));
    const size_t col = line_start == std::string::npos ? nul + 1 : nul - line_start;
    throw ConfigError(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": (text): a NUL byte");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                      ": syntax: " + e.msg);
  }
  if (!root.IsMap()) {
    const bool marked = root.IsDefined() && root.Mark().line >= 0;
    throw ConfigError(file + ":" + std::to_string(marked ? root.Mark().line + 1 : 1) + ":" +
                      std::to_string(marked ? root.Mark().column + 1 : 1) +
                      ": (top level): must be a mapping (edge:, params:, tenants:, vms:, hosts:, remote_vms:)");
  }
  EdgeConfig c;
  c.file = file;
  try {
    w.only_keys(root, "(top level)", {"edge", "params", "tenants", "vms", "hosts", "remote_vms"});
    load_edge(w, w.need(root, "edge", "(top level)"), c);
    load_params(w, root["params"], c);

    // Room for the file's tenants and those reloads add (pipeline/tenants.hpp).
    c.tenant_of_qinq = QinqTenants((root["tenants"].IsSequence() ? root["tenants"].size() : 0) + c.spare_tenants);
    each(w, root, "tenants", [&](const YAML::Node& n, const std::string& f) {
      w.only_keys(n, f, {"vni", "guarantee_gbps", "weight_class", "vlan", "qinq"});
      TenantCfg t;
      const YAML::Node vni = w.need(n, "vni", f);
      t.vni = static_cast<uint32_t>(u64(w, vni, f + ".vni", 0, (1u << 24) - 1));
      if (c.tenant(t.vni) != nullptr) w.fail(vni, f + ".vni", "duplicate tenant " + std::to_string(t.vni));
      t.guarantee_bps = real(w, w.need(n, "guarantee_gbps", f), f + ".guarantee_gbps", 0, 1e4) * 1e9;
      if (const YAML::Node wc = n["weight_class"]; wc && !wc.IsNull() && !(wc.IsScalar() && wc.Scalar() == "auto")) {
        if (wc.IsScalar() && (wc.Scalar().empty() || wc.Scalar().find_first_not_of("0123456789") != std::string::npos))
          w.fail(wc, f + ".weight_class", "'" + wc.Scalar() + "' is not a class 0.." + std::to_string(kWeightClasses - 1) + " or auto");
        t.weight_class = static_cast<uint32_t>(u64(w, wc, f + ".weight_class", 0, kWeightClasses - 1));
        t.weight_from_guarantee = false;
      }
      if (n["vlan"]) {  // 802.1Q VID; 0 and 4095 are reserved
        t.vlan = static_cast<uint16_t>(u64(w, n["vlan"], f + ".vlan", 1, 4094));
        if (c.tenant_of_vlan[t.vlan] >= 0)
          w.fail(n["vlan"], f + ".vlan", "VLAN " + std::to_string(t.vlan) + " already names tenant " +
                                             std::to_string(c.tenants[static_cast<size_t>(c.tenant_of_vlan[t.vlan])].vni));
        c.tenant_of_vlan[t.vlan] = static_cast<int32_t>(c.tenants.size());
      }
      if (n["qinq"]) {  // [S, C]: 802.1ad S-tag (TPID 0x88a8) then 802.1Q C-tag
        const YAML::Node q = n["qinq"];
        if (n["vlan"]) w.fail(q, f + ".qinq", "give either vlan or qinq, not both");
        if (!q.IsSequence() || q.size() != 2) w.fail(q, f + ".qinq", "must be [S-VLAN, C-VLAN]");
        t.svlan = static_cast<uint16_t>(u64(w, q[0], f + ".qinq[0]", 1, 4094));
        t.vlan = static_cast<uint16_t>(u64(w, q[1], f + ".qinq[1]", 1, 4094));
        const int32_t other = c.qinq_tenant(t.svlan, t.vlan);
        if (other >= 0)
          w.fail(q, f + ".qinq", "QinQ [" + std::to_string(t.svlan) + ", " + std::to_string(t.vlan) +
                                     "] already names tenant " + std::to_string(c.tenants[static_cast<size_t>(other)].vni));
        c.tenant_of_qinq.insert(t.svlan, t.vlan, static_cast<uint32_t>(c.tenants.size()));
      }
      c.tenants.push_back(t);
    });
    if (c.tenants.empty()) w.fail(root, "tenants", "at least one tenant is needed");
    // Classes from guarantees (§4.1), against the unit of the file or the
    // smallest such guarantee.
    if (!c.weight_span && !c.weight_unit_given) {
      double lo = INFINITY;
      for (const TenantCfg& t : c.tenants)
        if (t.weight_from_guarantee && t.guarantee_bps > 0) lo = std::min(lo, t.guarantee_bps);
      if (std::isfinite(lo)) c.weight_classes = WeightClassMap(WeightClassMap().class_weights(), lo);
    }
    for (TenantCfg& t : c.tenants)
      if (t.weight_from_guarantee) t.weight_class = c.weight_class_of(t.guarantee_bps).cls;

    std::set<uint32_t> ids;
    // The port as written (an id, or a device name resolve_ports checks again once resolved).
    std::set<std::tuple<std::string, uint32_t, uint32_t>> port_ips;  // (port, S-VLAN:VLAN, IP) names a local VM
    std::set<std::tuple<std::string, uint32_t, Ip6>> port_ip6s;       // and (port, S-VLAN:VLAN, IPv6)
    std::set<std::tuple<std::string, uint32_t, Mac>> port_macs;       // and (port, S-VLAN:VLAN, MAC) for ND
    // (VNI, IP) and (VNI, IPv6) name one VM of the tenant, local or remote:
    // fabric_rx delivers by (VNI, destination), and ARP, ND and the pairs'
    // keys by the remote VM's address (the VM's name, to say which).
    // A remote VM may not have a local VM's address either: a pair to it,
    // and an ARP answer to the local VM's gratuitous announcements
    // (pipeline/vm_arp.cpp), would follow.
    struct Holder {
      std::string name;
      bool local;
    };
    std::map<std::pair<uint32_t, uint32_t>, Holder> vni_ips;
    std::map<std::pair<uint32_t, Ip6>, Holder> vni_ip6s;
    const auto unique_address = [&](const YAML::Node& n, const std::string& f, const VmCfg& v, bool local) {
      const auto holder = [&](const Holder& h) {
        const char* kind = !h.local ? "remote VM " : local ? "VM " : "local VM ";
        return kind + h.name + " of tenant " + std::to_string(v.vni);
      };
      const auto [ip, fresh] = vni_ips.emplace(std::pair{v.vni, v.ip}, Holder{v.name, local});
      if (!fresh) w.fail(n["ip"], f + ".ip", holder(ip->second) + " has this IP");
      if (v.ip6 == Ip6{}) return;
      const auto [ip6, fresh6] = vni_ip6s.emplace(std::pair{v.vni, v.ip6}, Holder{v.name, local});
      if (!fresh6) w.fail(n["ip6"], f + ".ip6", holder(ip6->second) + " has this IPv6 address");
    };
    each(w, root, "vms", [&](const YAML::Node& n, const std::string& f) {
      VmCfg v = load_vm(w, n, f, c, true);
      v.vlan = c.tenant(v.vni)->vlan;
      v.svlan = c.tenant(v.vni)->svlan;
      if (!ids.insert(v.id).second) w.fail(n["id"], f + ".id", "duplicate VM id " + std::to_string(v.id));
      const std::string pk = v.port_name.empty() ? "#" + std::to_string(v.port) : v.port_name;
      if (!port_ips.insert({pk, uint32_t{v.svlan} << 16 | v.vlan, v.ip}).second)
        w.fail(n["ip"], f + ".ip", v.vlan != 0 ? "another VM on this port and VLAN has this IP" : "another VM on this port has this IP");
      if (v.ip6 != Ip6{} && !port_ip6s.insert({pk, uint32_t{v.svlan} << 16 | v.vlan, v.ip6}).second)
        w.fail(n["ip6"], f + ".ip6",
               v.vlan != 0 ? "another VM on this port and VLAN has this IPv6 address" : "another VM on this port has this IPv6 address");
      if (!port_macs.insert({pk, uint32_t{v.svlan} << 16 | v.vlan, v.mac}).second)
        w.fail(n["mac"], f + ".mac", v.vlan != 0 ? "another VM on this port and VLAN has this MAC" : "another VM on this port has this MAC");
      unique_address(n, f, v, true);
      c.vms.push_back(std::move(v));
    });
    if (c.vms.empty()) w.fail(root, "vms", "at least one local VM is needed");

    each(w, root, "hosts", [&](const YAML::Node& n, const std::string& f) {
      w.only_keys(n, f, {"name", "ip", "mac", "base_rtt_us", "paths", "reply_path"});
      HostCfg h;
      h.name = scalar(w, w.need(n, "name", f), f + ".name");
      for (const HostCfg& o : c.hosts)
        if (o.name == h.name) w.fail(n["name"], f + ".name", "duplicate host '" + h.name + "'");
      h.ip = ipv4(w, w.need(n, "ip", f), f + ".ip");
      // Probes, responses and data are told apart by their outer source address.
      if (h.ip == c.ip) w.fail(n["ip"], f + ".ip", "is this edge's own edge.ip");
      for (const HostCfg& o : c.hosts)
        if (o.ip == h.ip) w.fail(n["ip"], f + ".ip", "host '" + o.name + "' has this IP");
      h.mac = mac(w, w.need(n, "mac", f), f + ".mac");
      h.base_rtt_ns = static_cast<uint64_t>(real(w, w.need(n, "base_rtt_us", f), f + ".base_rtt_us", 0.1, 1e6) * 1e3);
      const YAML::Node ps = w.need(n, "paths", f);
      if (!ps.IsSequence() || ps.size() == 0 || ps.size() > kMaxCandidatePaths)
        w.fail(ps, f + ".paths", "must be a list of 1.." + std::to_string(kMaxCandidatePaths) + " paths");
      for (size_t i = 0; i < ps.size(); ++i) h.paths.push_back(path(w, ps[i], f + ".paths[" + std::to_string(i) + "]", i, c, c.fabric_port()));
      // A reply path leaves where paths[0] does unless it names its port.
      h.reply_path = n["reply_path"] ? path(w, n["reply_path"], f + ".reply_path", 0, c, h.paths[0].port) : h.paths[0];
      c.hosts.push_back(std::move(h));
    });

    each(w, root, "remote_vms", [&](const YAML::Node& n, const std::string& f) {
      VmCfg v = load_vm(w, n, f, c, false);
      if (!ids.insert(v.id).second) w.fail(n["id"], f + ".id", "duplicate VM id " + std::to_string(v.id));
      unique_address(n, f, v, false);
      c.remote_vms.push_back(std::move(v));
    });
  } catch (const YAML::Exception& e) {  // e.g. a key that is not a scalar
    throw ConfigError(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return c;
}

void resolve_ports(EdgeConfig& c, const PortByName& by_name) {
  if (std::all_of(c.vms.begin(), c.vms.end(), [](const VmCfg& v) { return v.port_name.empty(); })) return;
  for (size_t i = 0; i < c.vms.size(); ++i) {
    VmCfg& v = c.vms[i];
    if (v.port_name.empty()) continue;
    const std::string field = v.port_at + ": vms[" + std::to_string(i) + "].port";
    const std::optional<uint16_t> p = by_name ? by_name(v.port_name) : std::nullopt;
    if (!p) throw ConfigError(field + ": no DPDK port named '" + v.port_name + "' (--vdev, or /ufab/port_add at runtime)");
    if (c.is_fabric_port(*p))
      throw ConfigError(field + ": '" + v.port_name + "' is port " + std::to_string(*p) + ", a fabric port");
    v.port = *p;
  }
  // Two VMs on one port and VLAN with one address: the file named the port
  // one way for one and another way (its id, its device) for the other.
  for (size_t i = 0; i < c.vms.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const VmCfg &a = c.vms[i], &b = c.vms[j];
      if (a.port_name.empty() && b.port_name.empty()) continue;  // checked when parsed
      if (a.port != b.port || a.vlan != b.vlan || a.svlan != b.svlan) continue;
      const char* what = a.ip == b.ip                           ? "IP"
                         : a.ip6 != Ip6{} && a.ip6 == b.ip6      ? "IPv6 address"
                         : a.mac == b.mac                        ? "MAC"
                                                                 : nullptr;
      if (what == nullptr) continue;
      const VmCfg& named = a.port_name.empty() ? b : a;
      throw ConfigError(named.port_at + ": vms[" + std::to_string(&named == &a ? i : j) + "].port: '" +
                        named.port_name + "' is port " + std::to_string(named.port) + ", where " +
                        (&named == &a ? b.name : a.name) + " has the same " + what);
    }
}

EdgeConfig load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path);
}

std::string weight_classes_line(const EdgeConfig& c) {
  size_t from = 0, outside = 0;
  const TenantCfg* worst = nullptr;
  double worst_err = 0;
  const double range_err = c.weight_classes.worst_case_rel_error() + 1e-9;
  for (const TenantCfg& t : c.tenants) {
    if (!t.weight_from_guarantee) continue;
    ++from;
    const double err = c.weight_class_of(t.guarantee_bps).rel_error;
    outside += !(std::abs(err) <= range_err);
    if (worst == nullptr || !(std::abs(err) <= std::abs(worst_err))) {
      worst = &t;
      worst_err = err;
    }
  }
  char b[320];
  const WeightClassMap::Weights& cw = c.weight_classes.class_weights();
  int n = c.weight_span
              ? std::snprintf(b, sizeof b,
                              "weight classes: %zu tenant(s) from their guarantee (the classes spread over %.6g..%.6g Gb/s, "
                              "weights %u..%u)",
                              from, c.weight_unit_bps() / 1e9, cw[kWeightClasses - 1] * c.weight_classes.unit() / 1e9, cw[0],
                              cw[kWeightClasses - 1])
              : std::snprintf(b, sizeof b, "weight classes: %zu tenant(s) from their guarantee (class c stands for 2^c x %.6g Gb/s)",
                              from, c.weight_unit_bps() / 1e9);
  if (worst != nullptr)
    n += std::snprintf(b + n, sizeof b - static_cast<size_t>(n), ", largest error %+.1f%% (tenant %u: %.6g Gb/s in class %u)",
                       worst_err * 100, worst->vni, worst->guarantee_bps / 1e9, worst->weight_class);
  if (outside != 0)
    n += std::snprintf(b + n, sizeof b - static_cast<size_t>(n), ", %zu with more than the %.1f%% error of a guarantee within the classes' range",
                       outside, (range_err - 1e-9) * 100);
  std::snprintf(b + n, sizeof b - static_cast<size_t>(n), ", %zu given in the file", c.tenants.size() - from);
  return b;
}

std::string ip4_text(uint32_t ip) {
  char b[16];
  std::snprintf(b, sizeof b, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 0xff, ip >> 8 & 0xff, ip & 0xff);
  return b;
}

std::string ip6_text(const Ip6& a) {
  char b[INET6_ADDRSTRLEN];
  return inet_ntop(AF_INET6, a.data(), b, sizeof b) != nullptr ? b : "?";
}

std::string mac_text(const Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

}  // namespace ufab::edge
