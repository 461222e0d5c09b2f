// ufab-edge rejects an invalid configuration at start-up (issue 4 §6), before
// the EAL starts, with exit code 2 and a message naming the file, the line
// and the field. One valid file is mutated one line at a time; the valid
// file itself must get past the configuration (to the EAL, which fails here
// on purpose: no ports).
//
// argv[1]: path of ufab-edge, or empty when it was not built (exit 77).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

// Line numbers matter: the cases below name them.
const std::vector<std::string> kValid = {
    "edge:",                                                                             // 1
    "  fabric_port: 1",                                                                  // 2
    "  ip: 10.0.0.1",                                                                    // 3
    "  mac: 02:00:00:00:00:01",                                                          // 4
    "params:",                                                                           // 5
    "  eta: 0.95",                                                                       // 6
    "tenants:",                                                                          // 7
    "  - vni: 100",                                                                      // 8
    "    guarantee_gbps: 2",                                                             // 9
    "vms:",                                                                              // 10
    "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}",  // 11
    "hosts:",                                                                            // 12
    "  - name: hB",                                                                      // 13
    "    ip: 10.0.0.2",                                                                  // 14
    "    mac: 02:00:00:00:00:02",                                                        // 15
    "    base_rtt_us: 20",                                                               // 16
    "    paths: [[1]]",                                                                  // 17
    "remote_vms:",                                                                       // 18
    "  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}",                    // 19
};

struct Case {
  size_t line;              // 1-based line to replace
  std::string text;         // its new text
  std::string want_where;   // ":LINE:" expected in the message
  std::string want_field;   // field named in the message
};

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  char tmpl[] = "/tmp/ufab_edge_cfg.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const std::vector<Case> cases = {
      {3, "  ip: 10.0.0.300", ":3:", "edge.ip"},
      {4, "  mac: 02:00:00:00:00", ":4:", "edge.mac"},
      {6, "  eta: 1.5", ":6:", "params.eta"},
      {6, "  etaa: 0.9", ":6:", "params.etaa: unknown key"},
      {6, "  window_gating: off", ":6:", "params.window_gating"},
      {6, "  pair_pacing: sometimes", ":6:", "params.pair_pacing"},
      {6, "  pair_pacing_depth_us: -1", ":6:", "params.pair_pacing_depth_us"},
      {6, "  ack_sweep_us: 20000000", ":6:", "params.ack_sweep_us"},
      {9, "    guarantee_gbps: lots", ":9:", "tenants[0].guarantee_gbps"},
      {11, "  - {name: a1, id: 1, tenant: 7, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}", ":11:",
       "vms[0].tenant"},
      {11, "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 1}", ":11:",
       "vms[0].port"},
      {11, "  - {name: a1, id: 1, tenant: 100, mac: \"01:00:5e:00:00:01\", ip: 192.168.0.1, port: 0}", ":11:",
       "vms[0].mac: must be a unicast MAC"},
      {14, "    ip: 10.0.0.1", ":14:", "hosts[0].ip: is this edge's own edge.ip"},
      // A case may add a line after the one it replaces.
      {17, "    paths: [[1]]\n  - {name: hC, ip: 10.0.0.2, mac: \"02:00:00:00:00:03\", base_rtt_us: 20, paths: [[1]]}",
       ":18:", "hosts[1].ip: host 'hB' has this IP"},
      {19, "  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}\n  - {name: b2, id: 3, tenant: 100, ip: 192.168.0.2, host: hB}",
       ":20:", "remote_vms[1].ip: remote VM b1 of tenant 100 has this IP"},
      {16, "    base_rtt_us: -3", ":16:", "hosts[0].base_rtt_us"},
      {17, "    paths: [[1, 70000]]", ":17:", "hosts[0].paths[0][1]"},
      {17, "    paths: []", ":17:", "hosts[0].paths"},
      {19, "  - {name: b1, id: 1, tenant: 100, ip: 192.168.0.2, host: hB}", ":19:", "remote_vms[0].id"},
      {19, "  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hC}", ":19:", "remote_vms[0].host"},
      {19, "  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2}", ":19:", "remote_vms[0].host: missing"},
      {13, "  - name: [hB", ":", "syntax"},
  };
  int n = 0;
  for (const Case& c : cases) {
    std::vector<std::string> lines = kValid;
    lines[c.line - 1] = c.text;
    const std::string file = dir + "/bad" + std::to_string(n++) + ".yaml";
    write_text(file, join(lines));
    const RunResult r = run_with_deadline({argv[1], "--no-huge", "--", "--config", file}, dir + "/out", dir + "/err", 20);
    const std::string err = read_file(dir + "/err");
    std::printf("line %zu -> %s", c.line, err.c_str());
    ITEST_CHECK(!r.timed_out && r.exit_code == 2, "exit code %d for line %zu", r.exit_code, c.line);
    ITEST_CHECK(err.find(file + c.want_where) != std::string::npos, "message does not name %s%s", file.c_str(),
                c.want_where.c_str());
    ITEST_CHECK(err.find(c.want_field) != std::string::npos, "message does not name the field %s",
                c.want_field.c_str());
  }
  // A missing file, an option error.
  RunResult r = run_with_deadline({argv[1], "--", "--config", dir + "/nope.yaml"}, dir + "/out", dir + "/err", 20);
  ITEST_CHECK(r.exit_code == 2 && read_file(dir + "/err").find("nope.yaml: cannot open") != std::string::npos,
              "missing file");
  r = run_with_deadline({argv[1], "--", "--config"}, dir + "/out", dir + "/err", 20);
  ITEST_CHECK(r.exit_code == 2 && read_file(dir + "/err").find("--config") != std::string::npos, "option error");
  // The valid file passes the configuration stage: the failure is then about ports.
  write_text(dir + "/good.yaml", join(kValid));
  const std::string prefix = "ufabedgecfg" + std::to_string(getpid());
  std::vector<std::string> cmd = {argv[1]};
  for (const std::string& s : edge_eal(prefix, "0")) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--", "--config", dir + "/good.yaml"});
  r = run_with_deadline(cmd, dir + "/out", dir + "/err", 30);
  remove_dpdk_runtime(prefix);
  const std::string err = read_file(dir + "/err");
  ITEST_CHECK(r.exit_code == 2 && err.find("no DPDK ports") != std::string::npos, "valid file: %s", err.c_str());
  // A VM's port named by a device the EAL does not have (two net_null ports).
  {
    std::vector<std::string> lines = kValid;
    lines[10].replace(lines[10].find("port: 0"), 7, "port: net_vhost7");
    write_text(dir + "/named.yaml", join(lines));
    std::vector<std::string> named = {argv[1]};
    for (const std::string& s : edge_eal(prefix, "0")) named.push_back(s);
    named.insert(named.end(), {"--vdev", "net_null0", "--vdev", "net_null1", "--", "--config", dir + "/named.yaml"});
    r = run_with_deadline(named, dir + "/out", dir + "/err", 30);
    remove_dpdk_runtime(prefix);
    const std::string e2 = read_file(dir + "/err");
    ITEST_CHECK(r.exit_code == 2 && e2.find("ufab-edge: invalid configuration: " + dir +
                                            "/named.yaml:11:85: vms[0].port: no DPDK port named 'net_vhost7'") !=
                                        std::string::npos,
                "named port: exit %d: %s", r.exit_code, e2.c_str());
  }
  if (ufab::itest::g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: %zu invalid configurations rejected with file, line and field\n", cases.size());
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", ufab::itest::g_failures, dir.c_str());
  return 1;
}
