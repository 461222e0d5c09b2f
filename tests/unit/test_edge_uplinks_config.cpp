// ufab-edge configuration: several fabric ports (uplinks). edge.fabric_port
// is one port or a list; each path (and reply path) leaves on the fabric port
// it names (paths[i].port), by default the first of the list.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edge/config.hpp"
#include "tests/unit/config_error.hpp"

namespace {

using ufab::edge::EdgeConfig;
using ufab::edge::parse_config;
using ufab::edge::testing::error_of;

// Line 1: edge; 2-3: tenants; 4-5: vms; 6-8: hosts; 9-11: remote VMs.
std::string config(const std::string& fabric_port, const std::string& vm_port, const std::string& paths_b,
                   const std::string& host_c) {
  return "edge: {fabric_port: " + fabric_port + ", ip: 10.0.0.1, mac: \"02:00:00:00:00:01\"}\n"
         "tenants:\n"
         "  - {vni: 100, guarantee_gbps: 1}\n"
         "vms:\n"
         "  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: " + vm_port + "}\n"
         "hosts:\n"
         "  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: 20, paths: " + paths_b + "}\n"
         "  - {name: hC, ip: 10.0.0.3, mac: \"02:00:00:00:00:03\", base_rtt_us: 20, " + host_c + "}\n"
         "remote_vms:\n"
         "  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}\n"
         "  - {name: c1, id: 3, tenant: 100, ip: 192.168.0.3, host: hC}\n";
}

std::vector<uint16_t> ports_of(const ufab::edge::HostCfg& h) {
  std::vector<uint16_t> out;
  for (const auto& p : h.paths) out.push_back(p.port);
  return out;
}

TEST(EdgeUplinksConfig, OnePortIsEveryPathsUplink) {
  const EdgeConfig c = parse_config(config("1", "0", "[[1]]", "paths: [[2], {labels: [3], port: 1}]"), "t.yaml");
  EXPECT_EQ(c.fabric_ports, std::vector<uint16_t>{1});
  EXPECT_EQ(c.fabric_port(), 1);
  EXPECT_TRUE(c.is_fabric_port(1));
  EXPECT_FALSE(c.is_fabric_port(0));
  EXPECT_EQ(ports_of(c.hosts[0]), std::vector<uint16_t>{1});
  EXPECT_EQ(ports_of(c.hosts[1]), (std::vector<uint16_t>{1, 1}));
  EXPECT_EQ(c.hosts[1].reply_path.port, 1);  // the first path's, by default
}

TEST(EdgeUplinksConfig, AListNamesSeveralUplinksAndPathsPickOne) {
  const EdgeConfig c = parse_config(
      config("[2, 1]", "0", "[[1], {labels: [2], port: 1}]", "paths: [{labels: [3], port: 1}], reply_path: {labels: [4], port: 2}"),
      "t.yaml");
  EXPECT_EQ(c.fabric_ports, (std::vector<uint16_t>{2, 1}));
  EXPECT_EQ(c.fabric_port(), 2);  // the first: the paths' default
  EXPECT_TRUE(c.is_fabric_port(1));
  EXPECT_TRUE(c.is_fabric_port(2));
  EXPECT_FALSE(c.is_fabric_port(0));
  EXPECT_EQ(ports_of(c.hosts[0]), (std::vector<uint16_t>{2, 1}));
  EXPECT_EQ(ports_of(c.hosts[1]), std::vector<uint16_t>{1});
  EXPECT_EQ(c.hosts[1].reply_path.port, 2);
  EXPECT_EQ(c.hosts[0].reply_path.port, 2);  // hB's first path
}

TEST(EdgeUplinksConfig, AReplyPathLeavesWherePathsZeroDoesUnlessItNamesAPort) {
  // fabric_port: [2, 1]; hC's paths[0] is on port 1, not the first fabric port.
  const std::string paths_c = "paths: [{labels: [3], port: 1}, [5]]";
  const EdgeConfig omitted = parse_config(config("[2, 1]", "0", "[[1]]", paths_c), "t.yaml");
  EXPECT_EQ(ports_of(omitted.hosts[1]), (std::vector<uint16_t>{1, 2}));
  EXPECT_EQ(omitted.hosts[1].reply_path.port, 1);
  const EdgeConfig listed = parse_config(config("[2, 1]", "0", "[[1]]", paths_c + ", reply_path: [4]"), "t.yaml");
  EXPECT_EQ(listed.hosts[1].reply_path.port, 1);
  EXPECT_EQ(listed.hosts[1].reply_path.labels, std::vector<uint16_t>{4});
  const EdgeConfig named =
      parse_config(config("[2, 1]", "0", "[[1]]", paths_c + ", reply_path: {labels: [4], port: 2}"), "t.yaml");
  EXPECT_EQ(named.hosts[1].reply_path.port, 2);
}

TEST(EdgeUplinksConfig, BadUplinksNameFileLineAndField) {
  const std::string hc = "paths: [[3]]";
  // A path on a port that is not a fabric port.
  EXPECT_EQ(error_of(config("[2, 1]", "0", "[{labels: [1], port: 3}]", hc)),
            "t.yaml:7:101: hosts[0].paths[0].port: is not a fabric port (edge.fabric_port: [2, 1])");
  EXPECT_EQ(error_of(config("1", "0", "[[1]]", "paths: [[3]], reply_path: {labels: [4], port: 0}")),
            "t.yaml:8:119: hosts[1].reply_path.port: is not a fabric port (edge.fabric_port: 1)");
  // A VM behind a fabric port.
  EXPECT_EQ(error_of(config("[2, 1]", "1", "[[1]]", hc)), "t.yaml:5:85: vms[0].port: is a fabric port");
  // The list itself.
  EXPECT_EQ(error_of(config("[2, 2]", "0", "[[1]]", hc)), "t.yaml:1:25: edge.fabric_port[1]: port 2 is listed twice");
  EXPECT_EQ(error_of(config("[]", "0", "[[1]]", hc)),
            "t.yaml:1:21: edge.fabric_port: must be a port or a list of 1..8 ports");
  EXPECT_EQ(error_of(config("[1, 2, 3, 4, 5, 6, 7, 8, 9]", "0", "[[1]]", hc)),
            "t.yaml:1:21: edge.fabric_port: must be a port or a list of 1..8 ports");
  EXPECT_NE(error_of(config("[1, x]", "0", "[[1]]", hc)).find("t.yaml:1:25: edge.fabric_port[1]: "), std::string::npos);
  EXPECT_NE(error_of(config("[1, 1024]", "0", "[[1]]", hc)).find("t.yaml:1:25: edge.fabric_port[1]: "),
            std::string::npos);
}

}  // namespace
