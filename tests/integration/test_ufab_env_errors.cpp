// Bad environments get clear errors (issue 7 item 5): each case runs the
// real binary or script and checks that it fails (no hang, no crash) with a
// message naming what is missing and how to fix it.
//  - ufab-edge without --no-huge on a machine with no free hugepages;
//  - a vhost-user socket that does not exist (virtio-user in client mode);
//  - net_af_xdp on an interface that does not exist / an xdp_prog= file that
//    does not exist (the refused XDP attach is in test_ufab_edge_xdp);
//  - ufab-sidecar: OVS not running (status), OVS-DPDK not installed (start),
//    a configuration error (file:line), an unreadable configuration.
// And what needs no environment at all: ufab-edge's --version and --help
// answer before the EAL starts (so without hugepages or --no-huge), with
// or without EAL arguments before them.
//
// argv[1]: ufab-edge (empty: not built, 77), argv[2]: deploy/sidecar/ufab-sidecar.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

const char* kConfig = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
)";

struct Out {
  RunResult r;
  std::string err;
};

Out run(const std::vector<std::string>& argv, const std::string& dir, const std::string& name) {
  Out o;
  o.r = run_with_deadline(argv, dir + "/" + name + ".out", dir + "/" + name + ".err", 30);
  o.err = read_file(dir + "/" + name + ".err");
  std::printf("-- %s: exit %d%s\n%s", name.c_str(), o.r.exit_code, o.r.timed_out ? " (timed out)" : "", o.err.c_str());
  return o;
}

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

long free_hugepages() {
  long total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/kernel/mm/hugepages", ec)) {
    std::ifstream f(e.path() / "free_hugepages");
    long n = 0;
    if (f >> n) total += n;
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string edge = argv[1], sidecar = argv[2];
  char tmpl[] = "/tmp/ufab_env_err.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl, prefix = "ufabenverr" + std::to_string(getpid());
  write_text(dir + "/edge.yaml", kConfig);
  const std::string vm = "net_null9";
  auto edge_cmd = [&](std::vector<std::string> eal, const std::string& fabric_vdev) {
    std::vector<std::string> c = {edge};
    c.insert(c.end(), eal.begin(), eal.end());
    c.insert(c.end(), {"--file-prefix", prefix, "-l", "0", "--vdev", vm, "--vdev", fabric_vdev, "--", "--config",
                       dir + "/edge.yaml", "--stats-interval", "0"});
    return c;
  };
  const std::vector<std::string> nohuge = {"--no-huge", "-m", "256", "--no-pci"};

  // --version and --help: exit 0 before the EAL (whatever the hugepages).
  for (const auto& [name, argv] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"version", {edge, "--version"}},
           {"version_after_eal", {edge, "-l", "0", "--vdev", vm, "--", "--version"}},
           {"help", {edge, "--help"}}}) {
    const Out t = run(argv, dir, name);
    const std::string out = read_file(dir + "/" + name + ".out");
    const bool version = name != "help";
    ITEST_CHECK(t.r.exit_code == 0 && !t.r.timed_out && t.err.empty() &&
                    (version ? out.rfind("ufab-edge ", 0) == 0 && has(out, " (git ") && has(out, "), DPDK 22.11") &&
                                   std::count(out.begin(), out.end(), '\n') == 1
                             : out.rfind("usage: ufab-edge [EAL options] -- --config FILE", 0) == 0 &&
                                   has(out, "  --version ")),
                "%s: exit %d, stdout: %s", name.c_str(), t.r.exit_code, out.c_str());
  }

  // No hugepages, and --no-huge not given.
  if (free_hugepages() == 0) {
    const Out o = run(edge_cmd({"--no-pci"}, "net_null0"), dir, "hugepages");
    ITEST_CHECK(o.r.exit_code == 1 && has(o.err, "no free hugepages") && has(o.err, "/proc/sys/vm/nr_hugepages") &&
                    has(o.err, "--no-huge -m 256"),
                "no hugepages: what is missing and both fixes");
  } else {
    std::printf("-- hugepages: not checked, this machine has %ld free hugepages\n", free_hugepages());
  }

  // A vhost-user socket nobody created (virtio-user in client mode).
  const std::string sock = dir + "/no-such-vhost.sock";
  Out o = run(edge_cmd(nohuge, "net_virtio_user0,path=" + sock + ",queues=1"), dir, "vhost");
  ITEST_CHECK(o.r.exit_code == 1 && has(o.err, "net_virtio_user0: vhost-user socket " + sock + " does not exist") &&
                  has(o.err, "server=1") && has(o.err, "dpdkvhostuserclient"),
              "missing vhost socket: names the socket and both ways to fix it");
  // The --vdev=... spelling is checked as well.
  {
    std::vector<std::string> c = {edge, "--no-huge", "-m", "256", "--no-pci", "--file-prefix", prefix, "-l", "0",
                                  "--vdev=net_virtio_user0,path=" + sock, "--", "--config", dir + "/edge.yaml"};
    const Out e = run(c, dir, "vhost_eq");
    ITEST_CHECK(e.r.exit_code == 1 && has(e.err, "vhost-user socket " + sock + " does not exist"), "--vdev=: same check");
  }

  // AF_XDP on a missing interface, and a missing program file.
  o = run(edge_cmd(nohuge, "net_af_xdp0,iface=nosuchif9"), dir, "xdp_iface");
  ITEST_CHECK(o.r.exit_code == 1 && has(o.err, "net_af_xdp0: interface nosuchif9 does not exist"), "missing interface");
  o = run(edge_cmd(nohuge, "net_af_xdp0,iface=lo,xdp_prog=" + dir + "/none.o"), dir, "xdp_prog");
  ITEST_CHECK(o.r.exit_code == 1 && has(o.err, "xdp_prog=" + dir + "/none.o does not exist") &&
                  has(o.err, "ufab_steer.bpf.o"),
              "missing XDP program: names the file and how to build it");
  remove_dpdk_runtime(prefix);

  // ufab-sidecar: OVS not running.
  o = run({"/usr/bin/env", "UFAB_SIDECAR_DIR=" + dir + "/ovs", sidecar, "status"}, dir, "ovs_status");
  ITEST_CHECK(o.r.exit_code == 1 && has(o.err, "OVS is not running in " + dir + "/ovs") && has(o.err, "ufab-sidecar start"),
              "status without OVS: says it is not running and how to start it");
  // OVS-DPDK not installed (the binary's path overridden to a missing one).
  write_text(dir + "/sc.conf", "bridge br0\nedge e100 100 " + dir + "/e100.sock\n");
  o = run({"/usr/bin/env", "UFAB_SIDECAR_DIR=" + dir + "/ovs", "UFAB_OVS_VSWITCHD=" + dir + "/no-vswitchd", sidecar, "start",
           dir + "/sc.conf"},
          dir, "ovs_missing");
  ITEST_CHECK(o.r.exit_code == 1 && (has(o.err, "apt-get install openvswitch-switch-dpdk")), "OVS-DPDK missing: the package to install");
  // Configuration errors: file:line and the item.
  write_text(dir + "/bad.conf", "bridge br0\nvm v1 100 02:00:00:00:0a:01 dpdkvhostuserclient vhost-server-path=/x\n");
  o = run({"/usr/bin/env", "UFAB_SIDECAR_DIR=" + dir + "/ovs", sidecar, "flows", dir + "/bad.conf"}, dir, "conf_edge");
  ITEST_CHECK(o.r.exit_code == 1 && has(o.err, "vm v1: bridge br0 has no edge port for tenant 100"), "vm without its edge port");
  write_text(dir + "/bad2.conf", "bridge br0\nedge e1 100 /x.sock\nvm v1 100 02:00:00:00:0a dpdk\n");
  o = run({"/usr/bin/env", "UFAB_SIDECAR_DIR=" + dir + "/ovs", sidecar, "flows", dir + "/bad2.conf"}, dir, "conf_mac");
  ITEST_CHECK(o.r.exit_code == 1 && has(o.err, dir + "/bad2.conf:3: vm v1: '02:00:00:00:0a' is not a MAC address"),
              "bad MAC: file:line");
  o = run({"/usr/bin/env", "UFAB_SIDECAR_DIR=" + dir + "/ovs", sidecar, "flows", dir + "/none.conf"}, dir, "conf_missing");
  ITEST_CHECK(o.r.exit_code == 1 && has(o.err, dir + "/none.conf: cannot read it"), "missing configuration");
  // And the rules a good configuration gives (hand-written expectation).
  write_text(dir + "/good.conf",
             "bridge br0\nedge e100 100 /s/e100.sock\nedge e200 200 /s/e200.sock\n"
             "vm v1 100 02:00:00:00:0a:01 dpdkvhostuserclient vhost-server-path=/s/v1.sock\n"
             "vm v2 200 02:00:00:00:0a:02 dpdkvhostuserclient vhost-server-path=/s/v2.sock\n");
  const RunResult g = run_with_deadline({sidecar, "flows", dir + "/good.conf"}, dir + "/good.out", dir + "/good.err", 30);
  ITEST_CHECK(g.exit_code == 0 && read_file(dir + "/good.out") ==
                                      "# bridge br0\n"
                                      "priority=0,actions=drop\n"
                                      "priority=100,in_port=3,actions=output:1\n"
                                      "priority=100,in_port=1,dl_dst=02:00:00:00:0a:01,actions=output:3\n"
                                      "priority=100,in_port=4,actions=output:2\n"
                                      "priority=100,in_port=2,dl_dst=02:00:00:00:0a:02,actions=output:4\n",
              "flows of a good configuration:\n%s", read_file(dir + "/good.out").c_str());

  if (g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: every bad environment named with its fix\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", g_failures, dir.c_str());
  return 1;
}
