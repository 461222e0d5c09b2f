// ufab-traffic, generator to sink over net_memif (no fabric in between):
// three tenants, one per pattern (constant, on-off, incast). memif is
// lossless with the generator's retry on a full ring, so checked:
//  - every frame sent is received, per tenant: packets and bytes equal,
//    no loss, no late frame, no foreign frame;
//  - the incast flow sent whole bursts: bytes = bursts x ceil(burst/frame) x frame;
//  - the sink's CSV time series adds up to its totals; --json parses;
//  - bad options exit 2 naming the option.
// No timing is asserted (the rates depend on the host).
//
// argv[1]: ufab-traffic (empty when not built: exit 77).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/frames.hpp"
#include "tests/integration/run_process.hpp"

using namespace ufab::itest;

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-traffic was not built (libdpdk or nlohmann-json not found)\n");
    return 77;
  }
  const std::string exe = argv[1];
  char tmpl[] = "/tmp/ufab_traffic.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl, tag = std::to_string(getpid());
  const std::string ps = "uftsink" + tag, pg = "uftgen" + tag;

  // Option errors first (no EAL needed beyond start-up).
  auto eal = [&](const std::string& prefix, const char* lcore) {
    std::vector<std::string> c = {exe};
    for (const std::string& s : edge_eal(prefix, lcore)) c.push_back(s);
    return c;
  };
  {
    std::vector<std::string> c = eal(pg + "x", "0");
    c.insert(c.end(), {"--vdev", "net_null0", "--", "gen", "--flow", "src=1.1.1.1,dst=2.2.2.2,rate=1M,colour=red"});
    const RunResult r = run_with_deadline(c, dir + "/bad.out", dir + "/bad.err", 20);
    ITEST_CHECK(r.exit_code == 2 && read_file(dir + "/bad.err").find("colour") != std::string::npos,
                "a bad --flow key exits 2 naming it: %s", read_file(dir + "/bad.err").c_str());
    remove_dpdk_runtime(pg + "x");
  }

  std::vector<std::string> sink = eal(ps, "0");
  sink.insert(sink.end(), {"--vdev", "net_memif0,role=server,socket=" + dir + "/m.sock", "--", "sink",
                           "--exit-after-idle-ms", "1500", "--interval-ms", "50", "--json", dir + "/sink.json", "--csv",
                           dir + "/sink.csv"});
  const int pid_s = spawn(sink, dir + "/s.out", dir + "/s.err");
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    up = read_file("/proc/net/unix").find(dir + "/m.sock") != std::string::npos;
    usleep(20'000);
  }
  ITEST_CHECK(up, "the sink does not listen");
  usleep(300'000);
  std::vector<std::string> gen = eal(pg, "1");
  gen.insert(gen.end(),
             {"--vdev", "net_memif0,role=client,socket=" + dir + "/m.sock", "--", "gen", "--duration-ms", "700",
              "--json", dir + "/gen.json", "--flow",
              "tenant=100,src=192.168.0.1,dst=192.168.0.2,rate=40M,stop_ms=600", "--flow",
              "tenant=200,src=192.168.0.1,dst=192.168.0.2,rate=80M,pattern=onoff,on_ms=10,off_ms=20,stop_ms=600",
              "--flow",
              "tenant=300,src=192.168.0.1,dst=192.168.0.3,rate=200M,pattern=incast,period_ms=50,burst_bytes=20000,"
              "size=1500,stop_ms=600"});
  const RunResult rg = run_with_deadline(gen, dir + "/g.out", dir + "/g.err", 30);
  const RunResult rs = wait_with_deadline(pid_s, 30);
  for (const std::string& p : {ps, pg}) remove_dpdk_runtime(p);
  const std::string go = read_file(dir + "/g.out"), so = read_file(dir + "/s.out");
  std::printf("gen:\n%ssink:\n%s", go.c_str(), so.c_str());
  ITEST_CHECK(!rg.timed_out && rg.exit_code == 0, "gen failed: %s", read_file(dir + "/g.err").c_str());
  ITEST_CHECK(!rs.timed_out && rs.exit_code == 0, "sink failed: %s", read_file(dir + "/s.err").c_str());

  for (const char* t : {"100", "200", "300"}) {
    const std::string key = std::string("ufab-traffic tenant=") + t + " ";
    auto g = parse_line(go, key), s = parse_line(so, key);
    ITEST_CHECK(g["tx_pkts"] > 0 && g["tx_pkts"] == s["rx_pkts"] && g["tx_bytes"] == s["rx_bytes"],
                "tenant %s: sent %llu frames, received %llu", t, static_cast<unsigned long long>(g["tx_pkts"]),
                static_cast<unsigned long long>(s["rx_pkts"]));
    ITEST_CHECK(s["lost"] == 0 && s["late"] == 0, "tenant %s: lost %llu late %llu", t,
                static_cast<unsigned long long>(s["lost"]), static_cast<unsigned long long>(s["late"]));
  }
  auto f3 = parse_line(go, "ufab-traffic flow=3 ");
  // 20000 B bursts of 1500 B frames: 14 frames (the 14th crosses 20000 B) per burst.
  ITEST_CHECK(f3["bursts"] >= 1 && f3["bytes"] == f3["bursts"] * 14 * 1500, "incast: %llu bytes in %llu bursts",
              static_cast<unsigned long long>(f3["bytes"]), static_cast<unsigned long long>(f3["bursts"]));
  ITEST_CHECK(parse_line(so, "ufab-traffic final ")["foreign"] == 0, "no foreign frames");

  // The CSV adds up to the JSON totals.
  nlohmann::json sj;
  try {
    sj = nlohmann::json::parse(read_file(dir + "/sink.json"));
  } catch (const std::exception& e) {
    ITEST_CHECK(false, "sink.json does not parse: %s", e.what());
  }
  std::map<uint64_t, uint64_t> csv_rx;
  std::istringstream csv(read_file(dir + "/sink.csv"));
  std::string line;
  std::getline(csv, line);
  ITEST_CHECK(line.rfind("t_s,tenant,tx_bytes,rx_bytes", 0) == 0, "csv header: %s", line.c_str());
  while (std::getline(csv, line)) {
    double t = 0;
    unsigned long long tenant = 0, tx = 0, rx = 0;
    if (std::sscanf(line.c_str(), "%lf,%llu,%llu,%llu", &t, &tenant, &tx, &rx) == 4) csv_rx[tenant] += rx;
  }
  if (sj.contains("tenants"))
    for (const auto& t : sj["tenants"]) {
      const auto id = t["tenant"].get<uint64_t>();
      ITEST_CHECK(csv_rx[id] == t["rx_bytes"].get<uint64_t>(), "tenant %llu: csv %llu bytes, json %llu",
                  static_cast<unsigned long long>(id), static_cast<unsigned long long>(csv_rx[id]),
                  static_cast<unsigned long long>(t["rx_bytes"].get<uint64_t>()));
      ITEST_CHECK(t["latency_us"]["samples"].get<uint64_t>() == t["rx_pkts"].get<uint64_t>(), "latency samples");
    }
  ITEST_CHECK(sj.contains("tenants") && sj["tenants"].size() == 3, "three tenants in sink.json");
  if (g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: three patterns, every frame accounted for\n");
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", g_failures, dir.c_str());
  return 1;
}
