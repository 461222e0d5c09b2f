// Running a conformance case through the reference model (vector_cases.hpp).
#include <stdexcept>

#include "tests/p4/vector_cases.hpp"

namespace ufab::p4vec {

std::string file_bytes(const VectorFiles& v, size_t file) {
  switch (file) {
    case 0: return v.in_pcap;
    case 1: return v.out_pcap;
    case 2: return v.state_in;
    case 3: return v.state_out;
    default: return v.case_json;
  }
}

RunResult run_case(CaseSpec& spec, const swmodel::SwitchState& state_in, const std::vector<Packet>& in) {
  swmodel::SwitchModel sw(spec.config);
  for (const Route& r : spec.routes) sw.l3().add_host_route(r.dst_ip, r.ports);
  sw.restore(state_in);
  RunResult res;
  size_t next = 0;
  for (Event& e : spec.events) {
    if (e.kind == Event::Kind::tick) {
      sw.tick(e.time);
      continue;
    }
    if (next >= in.size()) throw std::runtime_error("case " + spec.name + ": fewer packets than packet events");
    if (in[next].time != e.time) throw std::runtime_error("case " + spec.name + ": pcap time differs from event");
    std::vector<uint8_t> frame = in[next++].bytes;
    e.result = sw.process(frame, e.in_port, e.time, e.queue_bytes);
    if (e.result.forward) res.out.push_back({e.time, std::move(frame)});
  }
  if (next != in.size()) throw std::runtime_error("case " + spec.name + ": more packets than packet events");
  res.state_out = sw.snapshot();
  return res;
}

}  // namespace ufab::p4vec
