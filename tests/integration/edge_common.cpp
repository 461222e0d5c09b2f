#include "tests/integration/edge_common.hpp"

#include <filesystem>
#include <fstream>

#include "probe/wire.hpp"

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

std::vector<std::string> edge_eal(const std::string& prefix, const char* lcores) {
  return {"--no-huge", "--no-pci", "-m", "256", "-l", lcores, "--file-prefix", prefix, "--log-level", "error"};
}

void remove_dpdk_runtime(const std::string& prefix) {
  for (const char* base : {"/var/run/dpdk/", "/tmp/dpdk/"}) std::filesystem::remove_all(base + prefix);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace ufab::itest
