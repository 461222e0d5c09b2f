// ufab-edge runtime reconfiguration (issue 4 items 4-5), with a control lcore
// and one worker on net_pcap ports. 10 frames of a1 -> b1 wait in the
// scheduler (the pair has two candidate paths and no query is ever answered,
// so it never picks one). While they wait:
//  - /ufab/tenant_set,100,5 sets the guarantee (5 tokens per VM in
//    /ufab/tenants); an unknown VNI is refused, and so is one that only
//    wraps to 100 (2^32 + 100, or a negative number);
//  - SIGHUP after the file's guarantee became 3: "reload ok" and 3 in
//    /ufab/tenants;
//  - /ufab/reload with a VM on a port the edge does not have, a key only
//    the new file has, or an invalid value: refused naming file:line and
//    the field, nothing applied;
//  - weight classes (§4.1): /ufab/tenant_class,100,4 then auto (3 Gb/s:
//    class 2), tenant_set 8 moves an auto class to 3, bad classes refused,
//    reload and SIGHUP set a class or auto; /ufab/tenants shows each class
//    as the worker's scheduler holds it;
//  - /ufab/path_drain,hB,1 shows drained=1 in /ufab/paths, bad host/path
//    refused, /ufab/path_undrain clears it;
// and through all of it nothing is lost: queued stays 10, no drops,
// conservation holds. Then remote VMs (pipeline/remote_vms.hpp): SIGHUP adds
// b2 (pair index 1 in /ufab/pairs, 2 pairs in /ufab/tenants); /ufab/reload
// removes b1, whose 10 queued frames are dropped as pair_removed (queued 0,
// dropped 10, conservation holds; /ufab/pair,0 is gone; b1's slot and
// entry free again: spare_pairs 256, remote_vm_room 1024); a reload needing
// 257 pair slots with 256 spare is refused. Local VMs (local_vms.hpp):
// SIGHUP adds a2 on port 0 (its pair to b2 is index 2; local_vm_room 63),
// /ufab/reload removes it. SIGTERM then exits 0.
// Algorithm 1 follows each guarantee: a1 -> b1 is a1's one active pair and
// sends nothing (demand 0 < phi_alpha / 1), so line 7 assigns it the fair
// share phi_alpha: assigned_token 2, then 5 after tenant_set, then 3 after
// SIGHUP. The pair's own inputs never change meanwhile, so this also shows
// that a round which skips unchanged VMs (control.cpp) still recomputes a
// VM whose phi_alpha changed.
//
// argv[1]: path of ufab-edge, or empty when DPDK was not found (exit 77).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

const char* kB1 = "  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}\n";

std::string config(const char* guarantee, const char* weight, const char* extra_vm, const char* remotes = kB1) {
  std::vector<char> text(1600 + std::strlen(remotes));
  char* const buf = text.data();
  std::snprintf(buf, text.size(), R"(edge:
  fabric_port: 1
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
params:
  flows_per_pair: 1
tenants:
  - vni: 100
    guarantee_gbps: %s
    weight_class: %s
  - {vni: 200, guarantee_gbps: 1}
vms:
  - {name: a1, id: 1, tenant: 100, mac: "02:00:00:00:0a:01", ip: 192.168.0.1, port: 0}
%shosts:
  - name: hB
    ip: 10.0.0.2
    mac: 02:00:00:00:00:02
    base_rtt_us: 100
    paths: [[1], [2]]
remote_vms:
%s)",
                guarantee, weight, extra_vm, remotes);
  return buf;
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  char tmpl[] = "/tmp/ufab_edge_rc.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl, prefix = "ufabedgerc" + std::to_string(getpid()), file = dir + "/edge.yaml";
  write_text(file, config("2", "1", ""));
  std::vector<Frame> vm_in;
  for (int i = 0; i < 10; ++i) vm_in.push_back(vm_frame(0xc0a80001, 0xc0a80002, 1000, 400, static_cast<uint8_t>(i)));
  write_pcap(dir + "/vm_in.pcap", vm_in);
  write_pcap(dir + "/fab_in.pcap", {});

  std::vector<std::string> cmd = {argv[1]};
  for (const std::string& s : edge_eal(prefix, "0,1")) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev", "net_pcap0,rx_pcap=" + dir + "/vm_in.pcap,tx_pcap=" + dir + "/vm_out.pcap",
                         "--vdev", "net_pcap1,rx_pcap=" + dir + "/fab_in.pcap,tx_pcap=" + dir + "/fab_out.pcap", "--",
                         "--config", file, "--stats-interval", "0", "--stop-timeout-ms", "200"});
  const int pid = spawn(cmd, dir + "/out", dir + "/err");
  ITEST_CHECK(wait_for_text(dir + "/out", "VM-pairs", 20), "the edge did not start: %s", read_file(dir + "/err").c_str());
  ITEST_CHECK(wait_for_text(dir + "/out",
                            "ufab-edge weight classes: 1 tenant(s) from their guarantee (class c stands for 2^c x 1 Gb/s), "
                            "largest error +0.0% (tenant 200: 1 Gb/s in class 0), 1 given in the file", 5),
              "the weight classes' line: %s", read_file(dir + "/out").c_str());
  std::string log;
  const auto ask = [&](const std::string& c) {
    const std::string r = telemetry(prefix, c);
    log += c + " -> " + r + "\n";
    return r;
  };
  // /ufab/pair,0's assigned_token reaches `want` within 5 s (rounds every 32 us).
  const auto assigned = [&](const char* want, const char* when) {
    const std::string key = std::string("\"assigned_token\":\"") + want + "\"";
    std::string r;
    for (int i = 0; i < 100 && !has(r = telemetry(prefix, "/ufab/pair,0"), key); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    log += "/ufab/pair,0 -> " + r + "\n";
    ITEST_CHECK(has(r, key), "%s: Alg. 1's phi_S, want %s: %s", when, want, r.c_str());
  };
  const auto balanced = [&](const char* when) {
    const std::string st = ask("/ufab/stats");
    ITEST_CHECK(json_number(st, "queued") == 10 && json_number(st, "dropped") == 0 && json_number(st, "conserved") == 1,
                "%s: queued, drops, conservation: %s", when, st.c_str());
  };
  for (int i = 0; i < 200 && json_number(telemetry(prefix, "/ufab/stats"), "rx") != 10; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  balanced("start");
  assigned("2", "start");

  // tenant_set
  std::string r = ask("/ufab/tenant_set,100,5");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"guarantee_gbps\":\"5\""), "tenant_set: %s", r.c_str());
  r = ask("/ufab/tenant_set,999,1");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "no tenant with vni 999"), "tenant_set unknown: %s", r.c_str());
  r = ask("/ufab/tenant_set,100,-2");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "guarantee must be 0..10000 Gb/s"), "tenant_set negative: %s", r.c_str());
  r = ask("/ufab/tenant_set,100,20000");  // above what the file takes
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "guarantee must be 0..10000 Gb/s"), "tenant_set 20000: %s", r.c_str());
  r = ask("/ufab/tenant_set,4294967396,7");  // 2^32 + 100: not VNI 100
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "no tenant with vni 4294967396"), "tenant_set VNI past 32 bits: %s",
              r.c_str());
  r = ask("/ufab/tenant_set,-4294967196,7");  // strtoul wraps it; cut to 32 bits: 100
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "is not a number"), "tenant_set negative VNI: %s", r.c_str());
  r = ask("/ufab/tenants");
  ITEST_CHECK(has(r, "\"tenant100\":{\"vni\":100,\"tags\":\"untagged\",\"guarantee_gbps\":\"5\",\"tokens_per_vm\":\"5\""), "tenants: %s", r.c_str());
  balanced("tenant_set");
  assigned("5", "tenant_set");

  // SIGHUP with a new guarantee
  write_text(file, config("3", "1", ""));
  kill(pid, SIGHUP);
  ITEST_CHECK(wait_for_text(dir + "/out", "ufab-edge reload ok [tenant 100: guarantee_gbps 5 -> 3]", 10), "SIGHUP reload");
  r = ask("/ufab/tenants");
  ITEST_CHECK(has(r, "\"guarantee_gbps\":\"3\",\"tokens_per_vm\":\"3\""), "tenants after SIGHUP: %s", r.c_str());
  balanced("SIGHUP");
  assigned("3", "SIGHUP");

  // Refused reloads: nothing applied.
  write_text(file, config("4", "1", "  - {name: a2, id: 3, tenant: 100, mac: \"02:00:00:00:0a:03\", ip: 192.168.0.3, port: 5}\n"));
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "edge.yaml:14:5: vms[1].port 5 does not exist (2 DPDK ports); nothing applied"),
              "reload with a new VM on a port the edge does not have: %s", r.c_str());
  {
    // A key only the new text has (it threw out of the control lcore before).
    std::string added = config("4", "1", "");
    added.replace(added.find("  flows_per_pair: 1\n"), 20, "  flows_per_pair: 1\n  seed: 7\n");
    write_text(file, added);
  }
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "edge.yaml:6:3: params: changed, needs a restart"),
              "reload with an added key: %s", r.c_str());
  write_text(file, config("-1", "1", ""));
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "edge.yaml:9:") && has(r, "guarantee_gbps"), "reload with a bad value: %s",
              r.c_str());
  r = ask("/ufab/tenants");
  ITEST_CHECK(has(r, "\"guarantee_gbps\":\"3\""), "refused reloads applied nothing: %s", r.c_str());
  write_text(file, config("3", "1", ""));
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"changes\":[]"), "reload without changes: %s", r.c_str());

  // Weight classes (§4.1). Tenant 100's is 1 in the file; tenant 200's
  // follows its guarantee, 1 Gb/s, which is the unit: class 0. Each class
  // shown is the worker's scheduler's.
  const auto tenant100 = [&](const char* cls, const char* from, const char* when) {
    const std::string t = ask("/ufab/tenants");
    // class c has weight 2^c (no weight_span_gbps)
    const std::string want = std::string("\"weight_class\":") + cls + ",\"class_weight\":" +
                             std::to_string(1u << std::stoi(cls)) + ",\"weight_class_from\":\"" + from + "\"";
    ITEST_CHECK(has(t.substr(0, t.find("tenant200")), want), "%s: tenant 100 %s: %s", when, want.c_str(), t.c_str());
    balanced(when);
    return t;
  };
  r = tenant100("1", "config", "classes at start");
  ITEST_CHECK(has(r, "\"tenant200\":{\"vni\":200,\"tags\":\"untagged\",\"guarantee_gbps\":\"1\",\"tokens_per_vm\":\"1\",\"weight_class\":0,"
                     "\"class_weight\":1,\"weight_class_from\":\"guarantee\",\"weight_error\":\"0\""),
              "tenant 200 from its guarantee: %s", r.c_str());
  r = ask("/ufab/tenant_class,100,4");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"weight_class\":4,\"weight_class_from\":\"config\",\"moved\":1"),
              "tenant_class 4: %s", r.c_str());
  tenant100("4", "config", "tenant_class 4");
  // auto: 3 Gb/s is 3 units, above sqrt(8): class 2 (weight 4), error 4/3 - 1.
  r = ask("/ufab/tenant_class,100,auto");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"weight_class\":2,\"weight_class_from\":\"guarantee\""),
              "tenant_class auto: %s", r.c_str());
  ITEST_CHECK(has(tenant100("2", "guarantee", "tenant_class auto"), "\"weight_error\":\"0.333333\""), "error of 3 in class 2");
  // The class follows the guarantee: 8 Gb/s, class 3.
  r = ask("/ufab/tenant_set,100,8");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"weight_class\":3"), "tenant_set 8: %s", r.c_str());
  tenant100("3", "guarantee", "tenant_set 8");
  for (const char* bad : {"/ufab/tenant_class,100,8", "/ufab/tenant_class,100,x", "/ufab/tenant_class,100,-1"}) {
    r = ask(bad);
    ITEST_CHECK(has(r, "\"ok\":0") && has(r, "is not 0..7 or auto"), "%s: %s", bad, r.c_str());
  }
  r = ask("/ufab/tenant_class,999,1");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "no tenant with vni 999"), "tenant_class unknown: %s", r.c_str());
  r = ask("/ufab/tenant_class,100");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "usage: /ufab/tenant_class,VNI,CLASS"), "tenant_class usage: %s", r.c_str());
  tenant100("3", "guarantee", "refused tenant_class");
  // A reload gives the class in the file and its guarantee back, the class
  // set once (not moved by the guarantee on the way).
  write_text(file, config("3", "2", ""));
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"changes\":[\"tenant 100: guarantee_gbps 8 -> 3\","
                                            "\"tenant 100: weight_class auto -> 2 (class 3 -> 2)\"]"),
              "reload with weight_class 2: %s", r.c_str());
  tenant100("2", "config", "reload class 2");
  write_text(file, config("6", "auto", ""));
  kill(pid, SIGHUP);
  ITEST_CHECK(wait_for_text(dir + "/out", "ufab-edge reload ok [tenant 100: guarantee_gbps 3 -> 6] [tenant 100: weight_class 2 -> auto (class 2 -> 3)]", 10),
              "SIGHUP with weight_class auto");
  tenant100("3", "guarantee", "SIGHUP auto");
  write_text(file, config("3", "1", ""));
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"tenant 100: weight_class auto -> 1 (class 3 -> 1)\""), "reload back: %s", r.c_str());
  tenant100("1", "config", "reload back");

  // path drain
  r = ask("/ufab/path_drain,hB,1");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"host\":\"hB\""), "path_drain: %s", r.c_str());
  r = ask("/ufab/paths");
  ITEST_CHECK(has(r, "\"path0\":\"udp_src=49152 active_pairs=0 drained=0 labels=1 port=1 uplink_down=0\"") &&
                  has(r, "\"path1\":\"udp_src=49153 active_pairs=0 drained=1 labels=2 port=1 uplink_down=0\""),
              "paths after drain: %s", r.c_str());
  r = ask("/ufab/path_drain,hB,2");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "no path '2'"), "drain of a missing path: %s", r.c_str());
  r = ask("/ufab/path_drain,hX,0");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "no host 'hX'"), "drain of a missing host: %s", r.c_str());
  r = ask("/ufab/path_undrain,0,1");
  ITEST_CHECK(has(r, "\"ok\":1") && has(ask("/ufab/paths"), "active_pairs=0 drained=0 labels=2"), "undrain: %s", r.c_str());
  r = ask("/ufab/pair,0");
  ITEST_CHECK(has(r, "\"state\":\"selecting\"") && has(r, "\"history\":[\"t_ns="), "pair,0: %s", r.c_str());
  balanced("drain");

  // Remote VMs (pipeline/remote_vms.hpp): b2 added by SIGHUP (pair index
  // 1), then b1 removed by /ufab/reload with its 10 queued frames, which
  // are counted as dropped (pair_removed): nothing is lost.
  write_text(file, config("3", "1", "", "  - {name: b1, id: 2, tenant: 100, ip: 192.168.0.2, host: hB}\n"
                                        "  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}\n"));
  kill(pid, SIGHUP);
  ITEST_CHECK(wait_for_text(dir + "/out", "ufab-edge reload ok [remote VM b2 added (host hB): 1 pair(s)]", 10),
              "SIGHUP adding b2");
  r = ask("/ufab/pairs");
  ITEST_CHECK(has(r, "\"pair_0x00010002\":{\"index\":0,") && has(r, "\"pair_0x00010004\":{\"index\":1,\"worker\":0,"
                                                                   "\"local\":\"a1\",\"remote\":\"b2\""),
              "pairs with b2: %s", r.c_str());
  ITEST_CHECK(has(ask("/ufab/tenants"), "\"pairs\":2,"), "tenant 100 has 2 pairs");
  r = ask("/ufab/workers");
  ITEST_CHECK(has(r, "\"remote_vm_room\":1023,\"local_vm_room\":64,\"host_room\":64,") && has(r, "\"pairs\":2,\"spare_pairs\":255,"),
              "room after b2: %s", r.c_str());
  balanced("b2 added");
  write_text(file, config("3", "1", "", "  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}\n"));
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"changes\":[\"remote VM b1 removed: 1 pair(s), 10 queued frame(s) dropped\"]"),
              "reload removing b1: %s", r.c_str());
  r = ask("/ufab/pairs");
  ITEST_CHECK(!has(r, "pair_0x00010002") && has(r, "\"pair_0x00010004\":{\"index\":1,"), "pairs without b1: %s", r.c_str());
  ITEST_CHECK(has(ask("/ufab/pair,0"), "no pair 0"), "pair 0 is gone");
  {
    const std::string st = ask("/ufab/stats");
    ITEST_CHECK(json_number(st, "queued") == 0 && json_number(st, "dropped") == 10 && json_number(st, "conserved") == 1 &&
                    has(st, "\"pair_removed\":10"),
                "stats after b1 removed: %s", st.c_str());
  }
  // b1's slot counts as spare again: its pair had no path, so no finish to wait for.
  r = ask("/ufab/workers");
  // So does b1's entry (nothing names it): the remote VM room is 1024 again.
  ITEST_CHECK(has(r, "\"pairs\":1,\"spare_pairs\":256,") && has(r, "\"remote_vm_room\":1024,"),
              "worker 0 has 1 pair, 256 spare: %s", r.c_str());
  // More than params.spare_pairs allows (one worker: 1 start-up pair + 256 spare, b1's slot not yet free).
  {
    std::string many = "  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}\n";
    for (int i = 0; i < 257; ++i)
      many += "  - {name: m" + std::to_string(i) + ", id: " + std::to_string(100 + i) + ", tenant: 100, ip: 192.168." +
              std::to_string(2 + i / 200) + "." + std::to_string(1 + i % 200) + ", host: hB}\n";
    write_text(file, config("3", "1", "", many.c_str()));
  }
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":0") && has(r, "remote_vms: worker 0 needs 257 VM-pair slot(s), has 256 (params.spare_pairs: 256"),
              "reload past spare_pairs: %s", r.c_str());

  // Local VMs (pipeline/local_vms.hpp): a2 added on port 0 by SIGHUP, with
  // its pair to b2 (index 2), then removed by /ufab/reload.
  write_text(file, config("3", "1", "  - {name: a2, id: 3, tenant: 100, mac: \"02:00:00:00:0a:03\", ip: 192.168.0.3, port: 0}\n",
                          "  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}\n"));
  kill(pid, SIGHUP);
  ITEST_CHECK(wait_for_text(dir + "/out", "ufab-edge reload ok [local VM a2 added (port 0, worker 0): 1 pair(s)]", 10),
              "SIGHUP adding a2");
  r = ask("/ufab/pairs");
  ITEST_CHECK(has(r, "\"pair_0x00030004\":{\"index\":2,\"worker\":0,\"local\":\"a2\",\"remote\":\"b2\""),
              "pairs with a2: %s", r.c_str());
  r = ask("/ufab/workers");
  ITEST_CHECK(has(r, "\"local_vm_room\":63,") && has(r, "\"pairs\":2,"), "room after a2: %s", r.c_str());
  write_text(file, config("3", "1", "", "  - {name: b2, id: 4, tenant: 100, ip: 192.168.0.4, host: hB}\n"));
  r = ask("/ufab/reload");
  ITEST_CHECK(has(r, "\"ok\":1") && has(r, "\"changes\":[\"local VM a2 removed: 1 pair(s), 0 queued frame(s) dropped\"]"),
              "reload removing a2: %s", r.c_str());
  ITEST_CHECK(!has(ask("/ufab/pairs"), "pair_0x00030004"), "a2's pair is gone");

  kill(pid, SIGTERM);
  const RunResult rr = wait_with_deadline(pid, 20);
  remove_dpdk_runtime(prefix);
  const std::string out = read_file(dir + "/out");
  std::printf("%stelemetry:\n%s", out.c_str(), log.c_str());
  ITEST_CHECK(!rr.timed_out && rr.exit_code == 0, "ufab-edge: exit %d: %s", rr.exit_code, read_file(dir + "/err").c_str());
  auto f = parse_line(out, "ufab-edge final ");
  ITEST_CHECK(f["rx"] == 10 && f["queued"] == 0 && f["dropped"] == 10 && f["drop.pair_removed"] == 10 &&
                  f["conserved"] == 1,
              "final: every frame counted");
  ITEST_CHECK(has(out, "ufab-edge stop: drained (queued=0), finishing 0 active pairs"), "drain");

  if (ufab::itest::g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: tenant_set, tenant_class, SIGHUP and telemetry reloads, refused reloads, path drain, remote and "
                "local VMs added and removed; every frame counted\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", ufab::itest::g_failures, dir.c_str());
  return 1;
}
