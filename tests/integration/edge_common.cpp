#include "tests/integration/edge_common.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "probe/wire.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/frames.hpp"

namespace ufab::itest {

Frame vm_frame(uint32_t src_ip, uint32_t dst_ip, uint16_t sport, size_t payload, uint8_t seed) {
  wire::OuterAddrs o;
  o.src_mac = {2, 0, 0, 0, 0xa, static_cast<uint8_t>(src_ip)};
  o.dst_mac = {2, 0, 0, 0, 0xb, static_cast<uint8_t>(dst_ip)};
  o.src_ip = src_ip;
  o.dst_ip = dst_ip;
  o.src_port = sport;
  o.dst_port = 9;
  Frame f(wire::kOuterBytes + payload);
  wire::encode_outer(o, payload, f);
  for (size_t i = wire::kOuterBytes; i < f.size(); ++i) f[i] = static_cast<uint8_t>(seed + i * 13);
  return f;
}

Frame tagged(const Frame& untagged, uint16_t vid) {
  Frame f = untagged;
  const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(vid >> 8), static_cast<uint8_t>(vid)};
  f.insert(f.begin() + 12, tag, tag + 4);
  return f;
}

Frame qinq(const Frame& untagged, uint16_t svid, uint16_t cvid, bool c_tag) {
  Frame f = c_tag ? tagged(untagged, cvid) : untagged;
  const uint8_t tag[4] = {0x88, 0xa8, static_cast<uint8_t>(svid >> 8), static_cast<uint8_t>(svid)};
  f.insert(f.begin() + 12, tag, tag + 4);
  return f;
}

std::vector<std::string> edge_eal(const std::string& prefix, const char* lcores) {
  return {"--no-huge", "--no-pci", "-m", "256", "-l", lcores, "--file-prefix", prefix, "--log-level", "error"};
}

std::vector<std::string> edge_eal_three_lcores(const std::string& prefix) {
  std::vector<std::string> v;
  for (const std::string& s : edge_eal(prefix, "0,1,2")) v.push_back(s == "-l" ? "--lcores" : s == "0,1,2" ? "(0-2)@(0,1)" : s);
  return v;
}

int spawn_two_worker_pcap_edge(const std::string& exe, const std::string& prefix, const std::string& dir) {
  std::vector<std::string> cmd = {exe};
  for (const std::string& s : edge_eal_three_lcores(prefix)) cmd.push_back(s);
  cmd.insert(cmd.end(), {"--vdev", "net_pcap0,rx_pcap=" + dir + "/vm_in.pcap,tx_pcap=" + dir + "/vm_out.pcap",
                         "--vdev", "net_pcap1,rx_pcap=" + dir + "/fab_in.pcap,tx_pcap=" + dir + "/fab_out.pcap", "--",
                         "--config", dir + "/edge.yaml", "--workers", "2", "--stats-interval", "0",
                         "--stop-timeout-ms", "300"});
  return spawn(cmd, dir + "/out", dir + "/err");
}

Spawned spawn_switch_between_edges(const std::string& core, const std::string& prefix, const std::string& dir,
                                   int seconds, const std::vector<std::string>& extra) {
  std::vector<std::string> sw = {core};
  for (const std::string& s : edge_eal(prefix, "1")) sw.push_back(s);
  sw.insert(sw.end(), {"--vdev", "net_memif0,role=server,socket=" + dir + "/a.sock", "--vdev",
                       "net_memif1,role=client,socket=" + dir + "/b.sock", "--", "--stats-interval", "0"});
  sw.insert(sw.end(), extra.begin(), extra.end());
  Spawned r;
  r.pid = spawn(sw, dir + "/c.out", dir + "/c.err");
  // ufab-core's start-up lines are buffered in its file: wait for its
  // listening socket instead, then for its ports to be started.
  r.ready = wait_for_text("/proc/net/unix", dir + "/a.sock", seconds);
  if (r.ready) std::this_thread::sleep_for(std::chrono::seconds(1));
  return r;
}

void check_config_errors(const std::string& exe, const std::string& dir, const std::string& yaml,
                         const std::vector<ConfigCase>& cases) {
  int i = 0;
  for (const ConfigCase& c : cases) {
    std::string text = yaml;
    const size_t at = text.find(c.from);
    ITEST_CHECK(at != std::string::npos, "case %d: pattern '%s'", i, c.from);
    if (at != std::string::npos) text.replace(at, std::strlen(c.from), c.to);
    const std::string file = dir + "/bad" + std::to_string(i) + ".yaml";
    write_text(file, text);
    const RunResult r = run_with_deadline({exe, "--no-huge", "--", "--config", file}, dir + "/bad.out",
                                          dir + "/bad.err", 20);
    const std::string err = read_file(dir + "/bad.err");
    std::printf("bad config %d: %s", i, err.c_str());
    ITEST_CHECK(r.exit_code == 2 && err.find(file + c.want) != std::string::npos, "case %d: want '%s'", i, c.want);
    ++i;
  }
}

std::vector<char*> c_argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

void remove_dpdk_runtime(const std::string& prefix) {
  for (const char* base : {"/var/run/dpdk/", "/tmp/dpdk/"}) std::filesystem::remove_all(base + prefix);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string telemetry(const std::string& prefix, const std::string& cmd) {
  const std::string path = "/var/run/dpdk/" + prefix + "/dpdk_telemetry.v2";
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
  std::string reply;
  static char buf[1 << 16];
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 && read(fd, buf, sizeof(buf)) > 0 &&
      write(fd, cmd.data(), cmd.size()) == static_cast<ssize_t>(cmd.size())) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) reply.assign(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

bool wait_for_text(const std::string& path, const std::string& needle, int seconds) {
  for (int i = 0; i < seconds * 50; ++i) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

long long json_number(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const size_t at = json.find(k);
  if (at == std::string::npos) return -1;
  size_t p = at + k.size();
  if (p < json.size() && json[p] == '"') ++p;  // numbers given as strings ("%.6g")
  return std::strtoll(json.c_str() + p, nullptr, 10);
}

bool same_frames(const std::vector<Frame>& sent, const std::vector<Frame>& got) {
  if (sent.size() != got.size()) return false;
  std::multimap<size_t, const Frame*> by_len;
  for (const Frame& f : sent) by_len.emplace(f.size(), &f);
  for (const Frame& f : got) {
    auto [it, end] = by_len.equal_range(f.size());
    while (it != end && !(*it->second == f)) ++it;
    if (it == end) return false;
    by_len.erase(it);  // each at most once
  }
  return true;
}

std::string make_test_dir(const char* stem) {
  std::string tmpl = std::string("/tmp/") + stem + ".XXXXXX";
  return mkdtemp(tmpl.data()) == nullptr ? std::string() : tmpl;
}

int conclude(const std::string& dir, const char* pass_line) {
  if (g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: %s\n", pass_line);
    return 0;
  }
  std::printf("%d checks failed; files kept in %s\n", g_failures, dir.c_str());
  return 1;
}

PortsEdgeRun run_edge_on_port_pcaps(const std::string& exe, const std::string& dir, const std::string& tag,
                                    const std::string& config_yaml, const std::vector<std::vector<Frame>>& in,
                                    bool two_workers, const std::vector<std::string>& extra_vdevs) {
  const std::string base = dir + "/" + tag, prefix = "ufabt" + tag + std::to_string(getpid());
  write_text(base + ".yaml", config_yaml);
  std::vector<std::string> cmd = {exe};
  for (const std::string& s : two_workers ? edge_eal_three_lcores(prefix) : edge_eal(prefix, "0")) cmd.push_back(s);
  for (size_t p = 0; p < in.size(); ++p) {
    const std::string f = base + "_p" + std::to_string(p);
    write_pcap(f + "_in.pcap", in[p]);
    cmd.insert(cmd.end(), {"--vdev", "net_pcap" + std::to_string(p) + ",rx_pcap=" + f + "_in.pcap,tx_pcap=" + f + "_out.pcap"});
  }
  for (const std::string& v : extra_vdevs) cmd.insert(cmd.end(), {"--vdev", v});
  cmd.insert(cmd.end(), {"--", "--config", base + ".yaml", "--exit-after-idle-ms", "500", "--stats-interval", "0"});
  PortsEdgeRun run;
  run.result = run_with_deadline(cmd, base + ".out", base + ".err", 30);
  remove_dpdk_runtime(prefix);
  run.out = read_file(base + ".out");
  run.err = read_file(base + ".err");
  std::printf("ufab-edge (%s):\n%s", tag.c_str(), run.out.c_str());
  ITEST_CHECK(!run.result.timed_out && run.result.exit_code == 0, "ufab-edge (%s) failed: %s", tag.c_str(),
              run.err.c_str());
  run.final = parse_line(run.out, "ufab-edge final ");
  run.port_out.resize(in.size());
  for (size_t p = 0; p < in.size(); ++p)
    if (const std::string f = base + "_p" + std::to_string(p) + "_out.pcap"; std::filesystem::exists(f))
      run.port_out[p] = read_pcap(f);
  return run;
}

PcapEdgeRun run_edge_on_pcaps(const std::string& exe, const std::string& dir, const std::string& tag,
                              const std::string& config_yaml, const std::vector<Frame>& vm_in,
                              const std::vector<Frame>& fab_in) {
  PortsEdgeRun r = run_edge_on_port_pcaps(exe, dir, tag, config_yaml, {vm_in, fab_in});
  PcapEdgeRun run;
  run.result = r.result;
  run.out = std::move(r.out);
  run.err = std::move(r.err);
  run.final = std::move(r.final);
  run.vm_out = std::move(r.port_out[0]);
  run.fab_out = std::move(r.port_out[1]);
  return run;
}

}  // namespace ufab::itest
