// VMs for the vhost-user tests: ufab-vmgen processes with their frames
// (rx pcap) and what they receive (tx pcap) on net_pcap0 and their vNIC on
// virtio-user, a client of an edge's vhost-user socket (as QEMU is); and
// what those multi-process tests share: every process they start is killed
// when meson's timeout sends SIGTERM, a wait on a condition, one port's
// counter in /ufab/stats.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ufab::itest {

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
