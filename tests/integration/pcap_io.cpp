#include "tests/integration/pcap_io.hpp"

#include <pcap/pcap.h>

#include <memory>
#include <stdexcept>

namespace ufab::itest {

void write_pcap(const std::string& path, const std::vector<Frame>& frames) {
  std::unique_ptr<pcap_t, decltype(&pcap_close)> p(pcap_open_dead(DLT_EN10MB, 65535), &pcap_close);
  if (!p) throw std::runtime_error("pcap_open_dead failed");
  std::unique_ptr<pcap_dumper_t, decltype(&pcap_dump_close)> d(pcap_dump_open(p.get(), path.c_str()),
                                                               &pcap_dump_close);
  if (!d) throw std::runtime_error("cannot write " + path + ": " + pcap_geterr(p.get()));
  long usec = 0;
  for (const Frame& f : frames) {
    pcap_pkthdr h{};
    h.ts.tv_sec = 1;
    h.ts.tv_usec = ++usec;
    h.caplen = h.len = static_cast<bpf_u_int32>(f.size());
    pcap_dump(reinterpret_cast<u_char*>(d.get()), &h, f.data());
  }
}

namespace {

// Calls f(header, data) for every frame of the pcap file at path.
template <class F>
void for_each_frame(const std::string& path, F&& f) {
  char err[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, decltype(&pcap_close)> p(pcap_open_offline(path.c_str(), err), &pcap_close);
  if (!p) throw std::runtime_error("cannot read " + path + ": " + err);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(p.get(), &h, &data) == 1) f(*h, data);
}

}  // namespace

std::vector<Frame> read_pcap(const std::string& path) {
  std::vector<Frame> out;
  for_each_frame(path, [&](const pcap_pkthdr& h, const u_char* data) { out.emplace_back(data, data + h.caplen); });
  return out;
}

std::vector<uint64_t> read_pcap_times_us(const std::string& path) {
  std::vector<uint64_t> out;
  for_each_frame(path, [&](const pcap_pkthdr& h, const u_char*) {
    out.push_back(static_cast<uint64_t>(h.ts.tv_sec) * 1'000'000 + static_cast<uint64_t>(h.ts.tv_usec));
  });
  return out;
}

}  // namespace ufab::itest
