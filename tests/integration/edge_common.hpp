// Helpers shared by the ufab-edge integration tests: tenant frames as a VM
// sends them, EAL arguments, and the DPDK runtime directory clean-up.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/pcap_io.hpp"
#include "tests/integration/run_process.hpp"

namespace ufab::itest {

// Ethernet/IPv4/UDP from src_ip:sport to dst_ip:9 (not the uFAB port) with
// `payload` bytes of a pattern seeded by `seed`.
Frame vm_frame(uint32_t src_ip, uint32_t dst_ip, uint16_t sport, size_t payload, uint8_t seed);
// An untagged frame with an 802.1Q tag (TPID 0x8100, PCP 0) for VLAN vid
// inserted after its MACs.
Frame tagged(const Frame& untagged, uint16_t vid);
// The same with QinQ tags: an S-tag (TPID 0x88a8) for svid, then a C-tag
// (0x8100) for cvid; with c_tag false only the S-tag.
Frame qinq(const Frame& untagged, uint16_t svid, uint16_t cvid, bool c_tag = true);

std::vector<std::string> edge_eal(const std::string& prefix, const char* lcores);
// edge_eal with three lcores on the machine's two cores ("--lcores
// (0-2)@(0,1)": lcores may oversubscribe cores), for a control lcore and two
// workers.
std::vector<std::string> edge_eal_three_lcores(const std::string& prefix);
// ufab-edge (exe) with a control lcore and two workers on two net_pcap ports:
// dir/vm_in.pcap and dir/fab_in.pcap in, dir/vm_out.pcap and dir/fab_out.pcap
// out, dir/edge.yaml, no periodic stats, a 300 ms stop timeout; stdout and
// stderr in dir/out and dir/err. Returns its pid.
int spawn_two_worker_pcap_edge(const std::string& exe, const std::string& prefix, const std::string& dir);
// ufab-core between two edges over memif, as the two-edge tests run it
// (edge B first, the memif server on dir/b.sock; then this; then edge A, a
// client of dir/a.sock): on lcore 1, port 0 the server on dir/a.sock,
// port 1 a client of dir/b.sock, no periodic stats, `extra` options after
// those; stdout and stderr in dir/c.out and dir/c.err. Waits (at most
// `seconds`) for its socket to listen, then 1 s for its ports to start.
struct Spawned {
  int pid = -1;
  bool ready = false;  // the switch listens on dir/a.sock
};
Spawned spawn_switch_between_edges(const std::string& core, const std::string& prefix, const std::string& dir,
                                   int seconds, const std::vector<std::string>& extra = {});
// args as a C argv (null-terminated; points into args, which must outlive
// it), for dpdk::Eal in a test's own process.
std::vector<char*> c_argv(std::vector<std::string>& args);
// Removes /var/run/dpdk/<prefix> and /tmp/dpdk/<prefix>.
void remove_dpdk_runtime(const std::string& prefix);
void write_text(const std::string& path, const std::string& text);

// One DPDK telemetry request on /var/run/dpdk/<prefix>/dpdk_telemetry.v2
// (the protocol dpdk-telemetry.py speaks); "" when nobody answers.
std::string telemetry(const std::string& prefix, const std::string& cmd);
// Waits (at most `seconds`) until `path` contains `needle`.
bool wait_for_text(const std::string& path, const std::string& needle, int seconds);
// True when got holds exactly the frames of sent, each unchanged, in any
// order (a frame sent twice must arrive twice).
bool same_frames(const std::vector<Frame>& sent, const std::vector<Frame>& got);
// The unsigned number after "\"key\":" in a JSON reply (or -1).
long long json_number(const std::string& json, const std::string& key);

// A configuration `yaml` with `from` replaced by `to` must be refused by
// ufab-edge (exe) with exit 2 and "FILE<want>" (want: ":line:col: field:
// what") on stderr; each case is a failed check otherwise.
struct ConfigCase {
  const char *from, *to, *want;
};
void check_config_errors(const std::string& exe, const std::string& dir, const std::string& yaml,
                         const std::vector<ConfigCase>& cases);
// A fresh directory /tmp/<stem>.XXXXXX for a test's files ("" on failure).
std::string make_test_dir(const char* stem);
// A test's last words: with no failed check, `pass_line` and the directory
// removed (exit 0); else how many failed and where the files are (exit 1).
int conclude(const std::string& dir, const char* pass_line);

// ufab-edge on two net_pcap ports, 0 the VM side and 1 the fabric, fed
// `vm_in` and `fab_in` and run on lcore 0 until idle for 500 ms. Its files
// in `dir` carry `tag` (several runs may share a directory); its stdout is
// printed. A run that times out or exits non-zero is a failed check.
struct PcapEdgeRun {
  RunResult result;
  std::string out, err;
  std::map<std::string, uint64_t> final;  // the "ufab-edge final" counters
  std::vector<Frame> vm_out, fab_out;
};
// The same on len(in) net_pcap ports: port p is fed in[p] and its output is
// port_out[p]. two_workers: a control lcore and two workers
// (edge_eal_three_lcores) instead of one lcore. extra_vdevs: more ports
// after those (port ids len(in)..), e.g. a net_af_packet fabric port.
struct PortsEdgeRun {
  RunResult result;
  std::string out, err;
  std::map<std::string, uint64_t> final;
  std::vector<std::vector<Frame>> port_out;
};
PortsEdgeRun run_edge_on_port_pcaps(const std::string& exe, const std::string& dir, const std::string& tag,
                                    const std::string& config_yaml, const std::vector<std::vector<Frame>>& in,
                                    bool two_workers = false, const std::vector<std::string>& extra_vdevs = {});
PcapEdgeRun run_edge_on_pcaps(const std::string& exe, const std::string& dir, const std::string& tag,
                              const std::string& config_yaml, const std::vector<Frame>& vm_in,
                              const std::vector<Frame>& fab_in);

}  // namespace ufab::itest
