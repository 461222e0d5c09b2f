#include "tests/integration/vm_procs.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/run_process.hpp"

namespace ufab::itest {

namespace {
std::vector<int> g_pids;
extern "C" void kill_tracked(int) {
  for (const int pid : g_pids) kill(pid, SIGKILL);
  _exit(1);
}
}  // namespace

std::optional<VmTestBins> vm_test_bins(int argc, char** argv) {
  if (argc < 4 || std::string(argv[1]).empty() || std::string(argv[2]).empty() || std::string(argv[3]).empty()) {
    std::printf("SKIP: ufab-edge, ufab-core or ufab-vmgen was not built (libdpdk or yaml-cpp not found)\n");
    return std::nullopt;
  }
  return VmTestBins{argv[1], argv[2], argv[3]};
}

std::vector<Frame> run_frames(uint32_t from, uint32_t to, size_t n, int run) {
  std::vector<Frame> f;
  for (size_t i = 0; i < n; ++i)
    f.push_back(vm_frame(from, to, static_cast<uint16_t>(1000 * run + i % 4), 100 + 7 * i + run, static_cast<uint8_t>(run)));
  return f;
}

void track_process(int pid) { g_pids.push_back(pid); }
void untrack_process(int pid) { std::erase(g_pids, pid); }
void untrack_all() { g_pids.clear(); }
void install_kill_on_term() { signal(SIGTERM, kill_tracked); }

bool wait_until(const std::function<bool()>& ok, int seconds) {
  for (int i = 0; i < seconds * 50; ++i) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ok();
}

long long port_stat(const std::string& stats, int port, const std::string& key) {
  const size_t at = stats.find("\"port" + std::to_string(port) + "\":{");
  if (at == std::string::npos) return -1;
  const size_t end = stats.find('}', at);
  return json_number(stats.substr(at, end - at), key);
}

int VmGens::start(const std::string& sock, const std::string& in, const std::string& out) {
  const std::string name = "vm" + std::to_string(++n_), prefix = "ufabvm" + name + "_" + tag_;
  prefixes_.push_back(prefix);
  std::vector<std::string> c = {vmgen_};
  for (const std::string& s : edge_eal(prefix, "0")) c.push_back(s);
  c.insert(c.end(), {"--vdev", "net_pcap0,rx_pcap=" + in + ",tx_pcap=" + out, "--vdev",
                     "net_virtio_user0,path=" + dir_ + "/" + sock + ",queues=1"});
  const int pid = spawn(c, dir_ + "/" + name + ".out", dir_ + "/" + name + ".err");
  track_process(pid);
  ITEST_CHECK(wait_for_text(dir_ + "/" + name + ".out", "forwarding", 30), "%s did not connect: %s", name.c_str(),
              read_file(dir_ + "/" + name + ".err").c_str());
  return pid;
}

void VmGens::stop(int pid) {
  kill(pid, SIGTERM);
  const RunResult r = wait_with_deadline(pid, 20);
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "a VM (ufab-vmgen) did not stop cleanly");
  untrack_process(pid);
}

}  // namespace ufab::itest
