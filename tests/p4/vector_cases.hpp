// The P4 conformance cases (tests/p4/README.md): each is a switch state, a
// list of packets and control-plane ticks, run through swmodel::SwitchModel.
#pragma once

#include <string>
#include <vector>

#include "tests/p4/vector_io.hpp"

namespace ufab::p4vec {

// One case as its five files' contents.
struct VectorFiles {
  std::string name;
  std::string in_pcap, out_pcap, state_in, state_out, case_json;
};
inline constexpr const char* kVectorFileNames[] = {"in.pcap", "out.pcap", "state_in.json", "state_out.json",
                                                   "case.json"};
std::string file_bytes(const VectorFiles& v, size_t file);  // by kVectorFileNames index

// Runs a case from its state: restore state_in, feed the packets and ticks in
// order (packet: SwitchModel::process at its time with its ingress port and
// queue depth; tick: SwitchModel::tick). Fills each packet event's result.
struct RunResult {
  std::vector<Packet> out;
  swmodel::SwitchState state_out;
};
RunResult run_case(CaseSpec& spec, const swmodel::SwitchState& state_in, const std::vector<Packet>& in);

// Every case, generated in memory.
std::vector<VectorFiles> make_all_vectors();

}  // namespace ufab::p4vec
