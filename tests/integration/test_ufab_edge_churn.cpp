// Runtime changes under load: ufab-edge with a control lcore and two
// workers while every port replays its frames without end (net_pcap
// infinite_rx), and the running configuration changes round after round
// (issue 4 items 4 and 5; docs/design.md §20–§22). Each round:
//  1. /ufab/port_add attaches net_pcap2 (port 2), flooding a3's frames;
//  2. a reload (/ufab/reload, or SIGHUP on odd rounds) to the second file: local VM a2 removed, a3 added on
//     port `net_pcap2` (by name), remote VM b2 removed and b3 added, host hB
//     changed (its RTT and a second path; its pairs start over), the
//     tenant's guarantee 2 -> 3 Gb/s (the host's change takes every pair
//     to it first, so a2 leaves with none of its own), tenant 200 (VLAN 20)
//     added with local VM e1 and remote VM f1 (pipeline/tenants.hpp);
//     then a reload to the third file: tenant 200 re-tagged VLAN 20 -> 21,
//     e1 changed with it (its pairs start over);
//  3. /ufab/tenant_set, /ufab/tenant_class (a class, then auto),
//     /ufab/path_drain and /ufab/path_undrain of hB's second path;
//  4. /ufab/pairs and /ufab/stats read, the stats balanced (rx + generated =
//     tx + queued + dropped + absorbed) while both workers run;
//  5. /ufab/reload back to the first file (each change undone, tenant 200
//     removed);
//  6. /ufab/port_remove,2 detaches it.
// Meanwhile the VM port carries a1's and a2's frames to b1, b2 and b3, a1's
// to a2 (switched locally), e1's tagged 20 and 21, and a stranger's; the fabric port data for a1,
// a2 and a3, probes for a1 and a3, a response to a1 -> b1 and a finish-ack
// to a1 -> b2. Frames for VMs and pairs that are not there at the moment
// are counted under their reasons (tenant 200's tagged frames unknown_vlan
// while it is away). Checked: every command is answered ok
// with the changes it made; the edge stops on SIGTERM with exit 0 and a
// final report that balances; frames were sent, delivered, switched and
// answered; port 2 counted across all its attachments; a reload (command
// and SIGHUP) and a port attach after SIGTERM are refused, not applied. Under the sanitizer
// build (deploy/ufab test --sanitize) this is also a race and use-after-free
// probe for the commands the workers run between bursts.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
// UFAB_CHURN_ROUNDS: the number of rounds (default 8).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

constexpr uint32_t kA1 = 0xc0a80001, kB1 = 0xc0a80002, kA2 = 0xc0a80003, kB2 = 0xc0a80004, kA3 = 0xc0a80005,
                   kB3 = 0xc0a80006, kStranger = 0xc0a80063, kE1 = 0xc0a80201, kF1 = 0xc0a80208;
constexpr uint32_t kHostB = 0x0a000002;
constexpr uint32_t pair_id(uint32_t from, uint32_t to) { return from << 16 | to; }

const char* kHead = R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  flows_per_pair: 2
  idle_finish_ms: 5
  # Room for what the rounds add while the removed pairs' finishes (which
  # nothing acks) run out their retries: enough for 150 rounds.
  spare_local_vms: 1024
  spare_remote_vms: 2048
  spare_pairs: 2048
)";

// The first file: a1 and a2 on port 0, b1 and b2 behind hB.
std::string first_file() {
  return std::string(kHead) + R"(tenants:
  - {vni: 100, guarantee_gbps: 2}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a2, id: 3, tenant: 100, mac: "02:00:00:00:0a:03", ip: 192.168.0.3, port: 0}
hosts:
  - name: hB
    ip: 10.0.0.2
    mac: 02:00:00:00:00:02
    base_rtt_us: 100
    paths: [[1]]
    reply_path: [0]
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}
)";
}

// The second: a2 gone, a3 on the port attached at runtime (by its device
// name), b2 gone, b3 new, hB with another RTT and a second path, the
// guarantee raised, and tenant 200 (VLAN 20) with local VM e1 and remote
// VM f1.
std::string second_file() {
  return std::string(kHead) + R"(tenants:
  - {vni: 100, guarantee_gbps: 3}
  - {vni: 200, guarantee_gbps: 1, vlan: 20}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
  - {name: a3, id: 5, tenant: 100, mac: "02:00:00:00:0a:05", ip: 192.168.0.5, port: net_pcap2}
  - {name: e1, id: 7, tenant: 200, mac: "02:00:00:00:0e:01", ip: 192.168.2.1, port: 0}
hosts:
  - name: hB
    ip: 10.0.0.2
    mac: 02:00:00:00:00:02
    base_rtt_us: 200
    paths: [[1], [5]]
    reply_path: [0]
remote_vms:
  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}
  - {name: b3, id: 6, tenant: 100, ip: 192.168.0.6, host: hB}
  - {name: f1, id: 8, tenant: 200, ip: 192.168.2.8, host: hB}
)";
}

// The third: the second with tenant 200 on VLAN 21 (re-tagged).
std::string third_file() {
  std::string f = second_file();
  f.replace(f.find("vlan: 20}"), 9, "vlan: 21}");
  return f;
}

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

// SIGHUP to pid, then the reload line it printed to `out` (at most 4 s;
// "" if none came).
std::string sighup_reload(int pid, const std::string& out) {
  constexpr const char* kLine = "ufab-edge reload ok";
  const size_t before = count(read_file(out), kLine);
  kill(pid, SIGHUP);
  for (int i = 0; i < 200; ++i) {
    const std::string text = read_file(out);
    if (count(text, kLine) > before) {
      const size_t at = text.rfind(kLine);
      return text.substr(at, text.find('\n', at) - at);
    }
    usleep(20'000);
  }
  return "";
}

int rounds_from_env() {
  const char* v = std::getenv("UFAB_CHURN_ROUNDS");
  const int n = v != nullptr ? std::atoi(v) : 8;
  return n > 0 ? n : 8;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string dir = make_test_dir("ufab_edge_churn");
  if (dir.empty()) return 1;
  const std::string prefix = "ufabedgech" + std::to_string(getpid());
  const int rounds = rounds_from_env();
  write_text(dir + "/edge.yaml", first_file());

  std::vector<Frame> vm_in;
  for (int i = 0; i < 8; ++i) {
    const auto seed = static_cast<uint8_t>(i);
    const auto sport = static_cast<uint16_t>(1000 + i);
    vm_in.push_back(vm_frame(kA1, kB1, sport, 64, seed));
    vm_in.push_back(vm_frame(kA2, kB2, sport, 64, seed));
    vm_in.push_back(vm_frame(kA1, kB3, sport, 64, seed));
    vm_in.push_back(vm_frame(kA2, kB1, sport, 64, seed));
  }
  vm_in.push_back(vm_frame(kA1, kA2, 4000, 64, 1));        // local switching while a2 is here
  vm_in.push_back(tagged(vm_frame(kE1, kF1, 4002, 64, 3), 20));  // tenant 200's, while it is here
  vm_in.push_back(tagged(vm_frame(kE1, kF1, 4003, 64, 4), 21));  // and once it is re-tagged
  vm_in.push_back(vm_frame(kStranger, kB1, 4001, 64, 2));  // no VM has this address
  const std::vector<Frame> fab_in = {
      ufab_frame(kHostB, 100, pair_id(2, 1), route({0}), wire::kNextData, vm_frame(kB1, kA1, 2000, 64, 3)),
      ufab_frame(kHostB, 100, pair_id(2, 3), route({0}), wire::kNextData, vm_frame(kB1, kA2, 2001, 64, 4)),
      ufab_frame(kHostB, 100, pair_id(6, 5), route({0}), wire::kNextData, vm_frame(kB3, kA3, 2002, 64, 5)),
      ufab_frame(kHostB, 200, pair_id(8, 7), route({0}), wire::kNextData, vm_frame(kF1, kE1, 2003, 64, 6)),
      control(kHostB, route({0}), message(wire::MsgType::probe, pair_id(2, 1), 128, {1}, 1), 100),
      control(kHostB, route({0}), message(wire::MsgType::probe, pair_id(6, 5), 128, {1}, 1), 100),
      control(kHostB, route({0}), message(wire::MsgType::response, pair_id(1, 2), 128, {1}, 1), 100),
      control(kHostB, route({0}), message(wire::MsgType::finish_ack, pair_id(1, 4), 128, {1}, 1), 100),
  };
  std::vector<Frame> a3_in;
  for (int i = 0; i < 4; ++i) {
    a3_in.push_back(vm_frame(kA3, kB1, static_cast<uint16_t>(3000 + i), 64, static_cast<uint8_t>(i)));
    a3_in.push_back(vm_frame(kA3, kB3, static_cast<uint16_t>(3000 + i), 64, static_cast<uint8_t>(i)));
  }
  write_pcap(dir + "/vm_in.pcap", vm_in);
  write_pcap(dir + "/fab_in.pcap", fab_in);
  write_pcap(dir + "/a3_in.pcap", a3_in);

  std::vector<std::string> cmd = {argv[1]};
  for (const std::string& s : edge_eal_three_lcores(prefix)) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev", "net_pcap0,rx_pcap=" + dir + "/vm_in.pcap,infinite_rx=1,tx_pcap=/dev/null", "--vdev",
                         "net_pcap1,rx_pcap=" + dir + "/fab_in.pcap,infinite_rx=1,tx_pcap=/dev/null", "--", "--config",
                         dir + "/edge.yaml", "--workers", "2", "--stats-interval", "0", "--stop-timeout-ms", "300"});
  const int pid = spawn(cmd, dir + "/out", dir + "/err");
  ITEST_CHECK(wait_for_text(dir + "/out", "VM-pairs", 30), "the edge did not start: %s", read_file(dir + "/err").c_str());

  const std::string a3_port = "/ufab/port_add,net_pcap2,rx_pcap=" + dir + "/a3_in.pcap,infinite_rx=1,tx_pcap=/dev/null";
  int balanced = 0;
  for (int r = 0; r < rounds && itest::g_failures == 0; ++r) {
    const std::string added = telemetry(prefix, a3_port);
    ITEST_CHECK(has(added, "\"ok\":1") && json_number(added, "port") == 2, "round %d: port_add: %s", r, added.c_str());

    write_text(dir + "/edge.yaml", second_file());
    // SIGHUP on odd rounds: the same reload on the control lcore, its
    // changes printed ("ufab-edge reload ok [...]") instead of answered.
    const std::string there = r % 2 == 0 ? telemetry(prefix, "/ufab/reload") : sighup_reload(pid, dir + "/out");
    ITEST_CHECK((has(there, "\"ok\":1") || has(there, "ufab-edge reload ok")) && has(there, "guarantee_gbps 2 -> 3") &&
                    has(there, "local VM a2 removed: ") && has(there, "local VM a3 added (port 2, worker ") &&
                    has(there, "remote VM b2 removed") && has(there, "remote VM b3 added (host hB)") &&
                    has(there, "host hB changed (base_rtt_us 100 -> 200, paths [[1]] -> [[1], [5]])") &&
                    has(there, "tenant 200 added: guarantee_gbps 1, weight_class 0 (from its guarantee), vlan 20") &&
                    has(there, "local VM e1 added (port 0, worker "),
                "round %d: reload to the second file: %s", r, there.c_str());
    write_text(dir + "/edge.yaml", third_file());
    const std::string retag = telemetry(prefix, "/ufab/reload");
    ITEST_CHECK(has(retag, "\"ok\":1") && has(retag, "tenant 200 re-tagged: vlan 20 -> vlan 21") &&
                    has(retag, "local VM e1 changed (tags vlan 20 -> vlan 21): ") &&
                    has(retag, "local VM e1 re-added (port 0, worker ") && !has(retag, "tenant 100"),
                "round %d: reload re-tagging tenant 200: %s", r, retag.c_str());
    const std::string tenants = telemetry(prefix, "/ufab/tenants");
    ITEST_CHECK(has(tenants, "\"vni\":200,\"tags\":\"vlan 21\"") && has(tenants, "\"vni\":100,\"tags\":\"untagged\""),
                "round %d: /ufab/tenants after the re-tag: %.400s", r, tenants.c_str());

    const std::string set = telemetry(prefix, "/ufab/tenant_set,100,4");
    const std::string cls = telemetry(prefix, "/ufab/tenant_class,100,5");
    const std::string aut = telemetry(prefix, "/ufab/tenant_class,100,auto");
    const std::string drain = telemetry(prefix, "/ufab/path_drain,hB,1");
    const std::string undrain = telemetry(prefix, "/ufab/path_undrain,hB,1");
    ITEST_CHECK(has(set, "\"ok\":1") && has(cls, "\"ok\":1") && has(aut, "\"ok\":1") && has(drain, "\"ok\":1") &&
                    has(undrain, "\"ok\":1"),
                "round %d: %s %s %s %s %s", r, set.c_str(), cls.c_str(), aut.c_str(), drain.c_str(), undrain.c_str());

    const std::string pairs = telemetry(prefix, "/ufab/pairs"), stats = telemetry(prefix, "/ufab/stats");
    ITEST_CHECK(has(pairs, "\"a3\""), "round %d: /ufab/pairs lacks a3's pairs: %.300s", r, pairs.c_str());
    ITEST_CHECK(json_number(stats, "conserved") == 1, "round %d: /ufab/stats does not balance: %s", r, stats.c_str());
    balanced += json_number(stats, "conserved") == 1 ? 1 : 0;

    write_text(dir + "/edge.yaml", first_file());
    const std::string back = telemetry(prefix, "/ufab/reload");
    ITEST_CHECK(has(back, "\"ok\":1") && has(back, "guarantee_gbps 4 -> 2") && has(back, "local VM a3 removed: ") &&
                    has(back, "local VM a2 added (port 0, worker ") && has(back, "remote VM b3 removed") &&
                    has(back, "remote VM b2 added (host hB)") &&
                    has(back, "host hB changed (base_rtt_us 200 -> 100, paths [[1], [5]] -> [[1]])") &&
                    has(back, "tenant 200 removed") && has(back, "local VM e1 removed: "),
                "round %d: reload back to the first file: %s", r, back.c_str());

    const std::string removed = telemetry(prefix, "/ufab/port_remove,2");
    ITEST_CHECK(has(removed, "\"ok\":1,\"removed\":2"), "round %d: port_remove: %s", r, removed.c_str());
  }
  const std::string stats = telemetry(prefix, "/ufab/stats");
  // The stop sequence keeps the configuration: a reload (by command or
  // SIGHUP) and a port attach sent after SIGTERM are refused with a reason
  // (or find the edge gone), never applied.
  const size_t applied_before = count(read_file(dir + "/out"), "ufab-edge reload ok");
  kill(pid, SIGTERM);
  {
    std::string raised = first_file();  // a file the running edge would apply: the guarantee 2 -> 5
    raised.replace(raised.find("guarantee_gbps: 2"), 17, "guarantee_gbps: 5");
    write_text(dir + "/edge.yaml", raised);
  }
  usleep(20'000);
  kill(pid, SIGHUP);
  const std::string late_reload = telemetry(prefix, "/ufab/reload"), late_port = telemetry(prefix, a3_port);
  const auto refused = [](const std::string& reply) {
    return reply.empty() || (has(reply, "\"ok\":0") && (has(reply, "the edge is stopping") || has(reply, "not serving")));
  };
  ITEST_CHECK(refused(late_reload) && refused(late_port), "after SIGTERM: %s %s", late_reload.c_str(), late_port.c_str());
  const RunResult res = wait_with_deadline(pid, 60);
  remove_dpdk_runtime(prefix);
  const std::string out = read_file(dir + "/out"), err = read_file(dir + "/err");
  std::printf("%s%s\n", out.c_str(), stats.c_str());
  ITEST_CHECK(!res.timed_out && res.exit_code == 0, "ufab-edge: timed out %d, exit %d: %s", res.timed_out, res.exit_code,
              err.c_str());
  ITEST_CHECK(count(out, "ufab-edge reload ok") == applied_before, "a reload was applied after SIGTERM");
  ITEST_CHECK(balanced == rounds, "/ufab/stats balanced in %d of %d rounds", balanced, rounds);
  auto fin = parse_line(out, "ufab-edge final ");
  auto p2 = parse_line(out, "ufab-edge port=2 ");
  ITEST_CHECK(fin["conserved"] == 1, "the final report does not balance");
  // What each kind of frame did, over the rounds (each at least once).
  ITEST_CHECK(fin["encap"] > 0 && fin["decap"] > 0 && fin["reflected"] > 0, "sent %llu, delivered %llu, probes answered %llu",
              static_cast<unsigned long long>(fin["encap"]), static_cast<unsigned long long>(fin["decap"]),
              static_cast<unsigned long long>(fin["reflected"]));
  ITEST_CHECK(fin["local_delivered"] > 0, "a1's frames to a2 were never switched locally");
  ITEST_CHECK(fin["drop.unknown_pair"] > 0 && fin["drop.unknown_vm"] > 0 && fin["drop.unknown_vlan"] > 0,
              "unknown_pair %llu, unknown_vm %llu, unknown_vlan %llu (tenant 200 away)",
              static_cast<unsigned long long>(fin["drop.unknown_pair"]), static_cast<unsigned long long>(fin["drop.unknown_vm"]),
              static_cast<unsigned long long>(fin["drop.unknown_vlan"]));
  ITEST_CHECK(p2["rx"] > 0, "port 2 counted no frame over its attachments");
  ITEST_CHECK(!has(err, "AddressSanitizer") && !has(err, "runtime error"), "sanitizer reports: %s", err.c_str());
  // Nothing asks ethdev about a detached port (/ufab/stats, the report).
  ITEST_CHECK(!has(err, "Invalid port_id"), "a detached port was asked: %s", err.c_str());
  return conclude(dir, ("ufab_edge_churn: " + std::to_string(rounds) +
                        " rounds of port attach/detach, reloads, tenant and path commands under load on two workers; "
                        "every command applied, every frame counted")
                           .c_str());
}
