#include "edge/dpdk/preflight.hpp"

#include <net/if.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include "edge/dpdk/xdp.hpp"

namespace ufab::dpdk {

namespace {

struct Vdev {
  std::string driver;  // name before the first comma, without the instance number: net_af_xdp
  std::string name;    // net_af_xdp0
  std::vector<std::pair<std::string, std::string>> kv;
  std::string get(const std::string& k) const {
    for (const auto& [key, v] : kv)
      if (key == k) return v;
    return {};
  }
  bool has(const std::string& k) const {
    for (const auto& [key, v] : kv)
      if (key == k) return true;
    return false;
  }
};

Vdev parse_vdev(const std::string& s) {
  Vdev d;
  std::stringstream in(s);
  std::string item;
  std::getline(in, d.name, ',');
  d.driver = d.name;
  while (!d.driver.empty() && d.driver.back() >= '0' && d.driver.back() <= '9') d.driver.pop_back();
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    d.kv.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
  }
  return d;
}

bool is_socket(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

void check_vhost(const Vdev& d, const std::string& path, bool we_serve, Preflight& out) {
  if (path.empty()) return;  // the PMD itself names the missing argument
  if (we_serve) {
    out.notes.push_back(d.name + ": server mode: the EAL waits until a vhost-user client connects to " + path +
                        " (e.g. an OVS dpdkvhostuserclient port with options:vhost-server-path=" + path + ")");
    return;
  }
  if (!is_socket(path))
    throw EnvironmentError(d.name + ": vhost-user socket " + path +
                           (std::filesystem::exists(path) ? " is not a socket" : " does not exist") +
                           ": start the vhost-user backend that creates it first (an OVS dpdkvhostuser port, or a "
                           "net_vhost/QEMU server), or let this process create it: server=1 (virtio-user) and connect "
                           "the peer as a client (OVS dpdkvhostuserclient)");
}

std::string af_packet_args(const Vdev& d) {
  std::string suffix = d.name.substr(d.driver.size());
  std::string s = "net_af_packet" + suffix + ",iface=" + d.get("iface");
  if (d.has("queue_count")) s += ",qpairs=" + d.get("queue_count");
  return s;
}

// net_af_xdp: interface, program file, and whether XDP attaches at all.
std::string check_af_xdp(const Vdev& d, const std::string& arg, Preflight& out) {
  const std::string iface = d.get("iface");
  if (iface.empty()) return arg;
  const unsigned ifindex = if_nametoindex(iface.c_str());
  if (ifindex == 0)
    throw EnvironmentError(d.name + ": interface " + iface + " does not exist in this network namespace ('ip link' lists them)");
  const std::string prog = d.get("xdp_prog");
  if (!prog.empty() && !std::filesystem::exists(prog))
    throw EnvironmentError(d.name + ": xdp_prog=" + prog + " does not exist (build it: ninja -C BUILD edge/ufab_steer.bpf.o)");
  const int rc = try_xdp_attach(ifindex);
  if (rc == 0 || rc == -ENOSYS) return arg;
  const std::string why = "XDP cannot attach to " + iface + ": " + xdp_attach_hint(iface, rc);
  const char* no_fallback = std::getenv("UFAB_AF_XDP_NO_FALLBACK");
  if (no_fallback != nullptr && std::string_view(no_fallback) == "1")
    throw EnvironmentError(d.name + ": " + why + " (UFAB_AF_XDP_NO_FALLBACK=1: no af_packet fallback)");
  const std::string repl = af_packet_args(d);
  out.notes.push_back(d.name + ": " + why + "; falling back to " + repl +
                      ": the port gets a copy of every frame on " + iface +
                      " (non-uFAB ones are dropped as not_ufab) and the kernel also sees the uFAB frames");
  return repl;
}

bool has_arg(std::span<char* const> eal, std::string_view a) {
  for (char* s : eal)
    if (std::string_view(s) == a || std::string_view(s).substr(0, a.size() + 1) == std::string(a) + "=") return true;
  return false;
}

}  // namespace

HugepageState read_hugepage_state() {
  HugepageState h;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/kernel/mm/hugepages", ec)) {
    std::ifstream f(e.path() / "free_hugepages");
    long n = 0;
    if (f >> n) h.free_pages += n;
  }
  std::ifstream mounts("/proc/mounts");
  std::string dev, dir, type;
  std::string rest;
  while (mounts >> dev >> dir >> type && std::getline(mounts, rest))
    if (type == "hugetlbfs") h.hugetlbfs_mounted = true;
  return h;
}

Preflight preflight_eal_args(std::span<char* const> argv) {
  Preflight out;
  size_t end = argv.size();
  for (size_t i = 1; i < argv.size(); ++i)
    if (std::string_view(argv[i]) == "--") {
      end = i;
      break;
    }
  const std::span<char* const> eal = argv.subspan(0, end);

  if (!has_arg(eal, "--no-huge")) {
    const HugepageState h = read_hugepage_state();
    if (h.free_pages == 0)
      throw EnvironmentError(
          "no free hugepages (every /sys/kernel/mm/hugepages/*/free_hugepages is 0) and --no-huge was not given: reserve "
          "some (echo 512 > /proc/sys/vm/nr_hugepages, or dpdk-hugepages.py --setup 1G) and mount hugetlbfs (mount -t "
          "hugetlbfs nodev /dev/hugepages), or run without hugepages: --no-huge -m 256");
    if (!h.hugetlbfs_mounted && !has_arg(eal, "--in-memory"))
      throw EnvironmentError(
          "hugepages are reserved but no hugetlbfs is mounted: mount -t hugetlbfs nodev /dev/hugepages (or pass "
          "--in-memory, or --no-huge -m 256)");
  }

  for (size_t i = 0; i < argv.size(); ++i) {
    std::string a = argv[i];
    if (i >= end || i == 0) {
      out.args.push_back(a);
      continue;
    }
    std::string value;
    bool split = false;
    if (a == "--vdev" && i + 1 < end) {
      value = argv[i + 1];
      split = true;
    } else if (a.rfind("--vdev=", 0) == 0) {
      value = a.substr(7);
    } else {
      out.args.push_back(a);
      continue;
    }
    const Vdev d = parse_vdev(value);
    if (d.driver == "net_virtio_user" || d.driver == "virtio_user")
      check_vhost(d, d.get("path"), d.get("server") == "1", out);
    else if ((d.driver == "net_vhost" || d.driver == "eth_vhost") && d.get("client") == "1")
      check_vhost(d, d.get("iface"), false, out);
    else if (d.driver == "net_af_xdp" || d.driver == "eth_af_xdp")
      value = check_af_xdp(d, value, out);
    if (split) {
      out.args.push_back(a);
      ++i;
      out.args.push_back(value);
    } else {
      out.args.push_back("--vdev=" + value);
    }
  }
  return out;
}

}  // namespace ufab::dpdk
