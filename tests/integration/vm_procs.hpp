// VMs for the vhost-user tests: ufab-vmgen processes with their frames
// (rx pcap) and what they receive (tx pcap) on net_pcap0 and their vNIC on
// virtio-user, a client of an edge's vhost-user socket (as QEMU is); and
// what those multi-process tests share: every process they start is killed
// when meson's timeout sends SIGTERM, a wait on a condition, one port's
// counter in /ufab/stats.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/pcap_io.hpp"

namespace ufab::itest {

// argv[1..3] of these tests: ufab-edge, ufab-core, ufab-vmgen. nullopt
// (after printing the SKIP line) when one was not built.
struct VmTestBins {
  std::string edge, core, vmgen;
};
std::optional<VmTestBins> vm_test_bins(int argc, char** argv);

// n frames of VM from -> to for one run of a test: each run its own flows
// (source ports 1000 * run + i % 4) and sizes (100 + 7 * i + run bytes).
std::vector<Frame> run_frames(uint32_t from, uint32_t to, size_t n, int run);

// Processes SIGKILLed if the test gets SIGTERM (install_kill_on_term).
void track_process(int pid);
void untrack_process(int pid);
void untrack_all();
void install_kill_on_term();

// Waits (at most `seconds`, polling every 20 ms) until `ok` holds.
bool wait_until(const std::function<bool()>& ok, int seconds);

// The number after "key": in /ufab/stats' "port<p>" object (-1 if absent).
long long port_stat(const std::string& stats, int port, const std::string& key);

class VmGens {
 public:
  // vmgen: the ufab-vmgen binary; dir: the test's directory (sockets,
  // logs); tag: unique in the machine (the DPDK prefixes).
  VmGens(std::string vmgen, std::string dir, std::string tag) : vmgen_(std::move(vmgen)), dir_(std::move(dir)), tag_(std::move(tag)) {}
  // A VM on dir/sock replaying `in` and writing what it gets to `out`,
  // once it says it forwards (a failed check otherwise); its pid.
  int start(const std::string& sock, const std::string& in, const std::string& out);
  // SIGTERM; a failed check unless it exits 0 within 20 s.
  void stop(int pid);
  // Every VM's DPDK prefix, for remove_dpdk_runtime.
  const std::vector<std::string>& prefixes() const { return prefixes_; }

 private:
  std::string vmgen_, dir_, tag_;
  std::vector<std::string> prefixes_;
  int n_ = 0;
};

}  // namespace ufab::itest
