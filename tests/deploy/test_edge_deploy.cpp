// The deployed ufab-edge (README "Deploy: SoC SmartNIC (arm64)"), natively
// or under qemu-user for the arm64 build:
//  1. IPsec-mb-free (design-notes §5): the dynamic loader's list of the
//     binaries' libraries names no libIPSec_MB and no DPDK shared library
//     (DPDK is linked statically, so EAL has no PMD directory to auto-load);
//  2. smoke: ufab-edge runs deploy/examples/smartnic.yaml on net_null ports
//     standing in for the uplink and the 4 representors; while it runs, its
//     mappings (/proc/PID/maps) hold no PMD directory, no crypto PMD and no
//     libIPSec_MB, and EAL logs the static linkage; SIGTERM (the systemd
//     unit's KillSignal) ends it with exit 0 and a final report in which
//     every frame is accounted: net_null's zero-filled frames are not IPv4
//     on the VM side and not uFAB on the fabric port.
//
// argv: ufab-edge, ufab-core, the example config (an empty first argument:
// not built, exit 77). UFAB_EXEC_WRAPPER (e.g. "qemu-aarch64-static -L
// SYSROOT") prefixes every command; UFAB_LD_SO is then the target's dynamic
// loader, run with --list in place of ldd.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/run_process.hpp"

namespace {

using namespace ufab::itest;

std::vector<std::string> words(const char* s) {
  std::vector<std::string> out;
  std::istringstream in(s ? s : "");
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

const std::vector<std::string> kWrapper = words(std::getenv("UFAB_EXEC_WRAPPER"));

std::vector<std::string> wrapped(std::vector<std::string> cmd) {
  cmd.insert(cmd.begin(), kWrapper.begin(), kWrapper.end());
  return cmd;
}

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// Sum of `key=N` over the lines that start with `prefix`.
uint64_t field(const std::string& text, const std::string& line_prefix, const std::string& key) {
  uint64_t sum = 0;
  std::istringstream in(text);
  const std::regex re("(^| )" + key + "=([0-9]+)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind(line_prefix, 0) == 0 && std::regex_search(line, m, re)) sum += std::stoull(m[2]);
  }
  return sum;
}

void check_libraries(const std::string& bin, const std::string& dir) {
  const char* ld_so = std::getenv("UFAB_LD_SO");
  const std::vector<std::string> cmd =
      ld_so && *ld_so ? wrapped({ld_so, "--list", bin}) : std::vector<std::string>{"/usr/bin/ldd", bin};
  const RunResult r = run_with_deadline(cmd, dir + "/ldd.out", dir + "/ldd.err", 60);
  const std::string libs = read_file(dir + "/ldd.out");
  std::printf("%s:\n%s", bin.c_str(), libs.c_str());
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "listing the libraries of %s failed: %s", bin.c_str(),
              read_file(dir + "/ldd.err").c_str());
  ITEST_CHECK(contains(libs, "libc.so.6"), "no libc in the list of %s (the listing did not work)", bin.c_str());
  ITEST_CHECK(!contains(libs, "not found"), "%s has a library that is not found", bin.c_str());
  ITEST_CHECK(!contains(libs, "IPSec_MB"), "%s needs libIPSec_MB", bin.c_str());
  ITEST_CHECK(!contains(libs, "librte_"), "%s needs a shared DPDK library (EAL would auto-load every PMD)",
              bin.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string edge = argv[1], core = argv[2], config = argv[3];
  char tmpl[] = "/tmp/ufab_deploy.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;

  // 1. Libraries of both DPDK binaries.
  check_libraries(edge, dir);
  if (!core.empty()) check_libraries(core, dir);

  // 2. Smoke run of the SmartNIC example: port 0 the uplink, 1..4 the representors.
  const std::string prefix = "ufabdeploy" + std::to_string(getpid());
  std::vector<std::string> cmd = {edge, "--no-huge", "--no-pci", "-m", "512", "-l", "0", "--file-prefix", prefix};
  for (int p = 0; p < 5; ++p) cmd.insert(cmd.end(), {"--vdev", "net_null" + std::to_string(p)});
  cmd.insert(cmd.end(), {"--", "--config", config, "--stats-interval", "1"});
  const int pid = spawn(wrapped(cmd), dir + "/out", dir + "/err");
  // Wait for the first stats line (the loop is running), at most 60 s (qemu is slow).
  std::string out;
  std::string maps;
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 600 && !contains(out, "ufab-edge stats") && !exited; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    out = read_file(dir + "/out");
    exited = waitpid(pid, &status, WNOHANG) == pid;
  }
  ITEST_CHECK(contains(out, "ufab-edge stats"), "no stats line within 60 s: %s %s", out.c_str(),
              read_file(dir + "/err").c_str());
  maps = read_file("/proc/" + std::to_string(pid) + "/maps");
  RunResult r;
  if (exited) {
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  } else {
    kill(pid, SIGTERM);
    r = wait_with_deadline(pid, 60);
  }
  remove_dpdk_runtime(prefix);
  out = read_file(dir + "/out");
  const std::string err = read_file(dir + "/err");
  std::printf("%s%s", out.c_str(), err.c_str());

  ITEST_CHECK(contains(maps, "libc.so.6"), "the process mappings were not read (no libc in them)");
  ITEST_CHECK(!contains(maps, "pmds-"), "a PMD directory was loaded");
  ITEST_CHECK(!contains(maps, "librte_crypto") && !contains(maps, "IPSec_MB"), "a crypto PMD or libIPSec_MB was loaded");
  ITEST_CHECK(!contains(maps, "librte_"), "a DPDK shared library is mapped");
  ITEST_CHECK(contains(err, "Detected static linkage of DPDK"), "EAL did not report the static linkage");
  ITEST_CHECK(!r.timed_out && r.exit_code == 0, "SIGTERM: exit code %d (timed out: %d)", r.exit_code, r.timed_out);
  ITEST_CHECK(contains(out, "5 ports") || contains(out, "port 4 net_null4"), "the 5 net_null ports were not set up");
  // 2 local VMs of tenant 100 x 2 remote ones + 2 of tenant 200 x 1 = 6 pairs.
  ITEST_CHECK(contains(out, "2 tenants, 4 local VMs, 3 remote VMs, 6 VM-pairs"), "example topology");
  const uint64_t rx = field(out, "ufab-edge final", "rx");
  const uint64_t fabric_rx = field(out, "ufab-edge port=0 ", "rx");
  const uint64_t vm_rx = field(out, "ufab-edge port=", "rx") - fabric_rx;
  ITEST_CHECK(contains(out, "ufab-edge final") && contains(out, "conserved=1"), "no final report or not conserved");
  ITEST_CHECK(rx > 0 && fabric_rx > 0 && vm_rx > 0, "rx=%lu fabric=%lu vm=%lu", (unsigned long)rx,
              (unsigned long)fabric_rx, (unsigned long)vm_rx);
  ITEST_CHECK(rx == fabric_rx + vm_rx, "final rx %lu != sum over ports %lu", (unsigned long)rx,
              (unsigned long)(fabric_rx + vm_rx));
  ITEST_CHECK(field(out, "ufab-edge final", "dropped") == rx, "every null frame is dropped");
  ITEST_CHECK(field(out, "ufab-edge final", "drop.not_ufab") == fabric_rx, "fabric drops");
  ITEST_CHECK(field(out, "ufab-edge final", "drop.not_ipv4") == vm_rx, "VM-side drops");
  ITEST_CHECK(field(out, "ufab-edge final", "tx") == 0, "nothing to send");

  if (g_failures == 0) {
    std::filesystem::remove_all(dir);
    std::printf("PASS: no IPsec-mb, no PMD auto-loading; smartnic.yaml on net_null, rx=%lu all accounted, SIGTERM exit 0\n",
                (unsigned long)rx);
    return 0;
  }
  std::printf("FAILED: %d checks (logs in %s)\n", g_failures, dir.c_str());
  return 1;
}
