#include "p4/softswitch/capture.hpp"

#include <cstdio>
#include <stdexcept>

#ifdef UFAB_HAVE_LIBPCAP
#include <pcap/pcap.h>
#endif

namespace ufab::core {

#ifdef UFAB_HAVE_LIBPCAP

bool capture_supported() { return true; }

struct PortCapture::Impl {
  pcap_t* dead = nullptr;
  pcap_dumper_t* dump = nullptr;
};

PortCapture::PortCapture(const std::string& path, int64_t wall_offset_ns)
    : impl_(std::make_unique<Impl>()), path_(path), wall_offset_ns_(wall_offset_ns) {
  impl_->dead = pcap_open_dead(DLT_EN10MB, 65535);
  if (impl_->dead == nullptr) throw std::runtime_error("--capture: pcap_open_dead failed");
  impl_->dump = pcap_dump_open(impl_->dead, path.c_str());
  if (impl_->dump == nullptr) {
    const std::string why = pcap_geterr(impl_->dead);
    pcap_close(impl_->dead);
    throw std::runtime_error("--capture: cannot write " + path + ": " + why);
  }
}

PortCapture::~PortCapture() {
  std::string ignored;
  close(ignored);
}

void PortCapture::write(const uint8_t* data, uint32_t caplen, uint32_t len, Nanos now) {
  if (impl_->dump == nullptr) return;
  const int64_t wall = static_cast<int64_t>(now) + wall_offset_ns_;
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(wall / 1'000'000'000);
  h.ts.tv_usec = static_cast<suseconds_t>((wall % 1'000'000'000) / 1000);
  h.caplen = caplen;
  h.len = len;
  pcap_dump(reinterpret_cast<u_char*>(impl_->dump), &h, data);
  ++frames_;
}

bool PortCapture::close(std::string& error) {
  if (impl_->dump == nullptr) return true;
  bool ok = pcap_dump_flush(impl_->dump) == 0 && std::ferror(pcap_dump_file(impl_->dump)) == 0;
  if (!ok) error = "--capture: writing " + path_ + " failed";
  pcap_dump_close(impl_->dump);
  pcap_close(impl_->dead);
  impl_->dump = nullptr;
  impl_->dead = nullptr;
  return ok;
}

#else  // built without libpcap

bool capture_supported() { return false; }

struct PortCapture::Impl {};

PortCapture::PortCapture(const std::string& path, int64_t) : path_(path) {
  throw std::runtime_error("--capture: ufab-core was built without libpcap (apt-get install libpcap-dev)");
}
PortCapture::~PortCapture() = default;
void PortCapture::write(const uint8_t*, uint32_t, uint32_t, Nanos) {}
bool PortCapture::close(std::string&) { return true; }

#endif

}  // namespace ufab::core
