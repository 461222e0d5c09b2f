#include "tests/integration/edge_common.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

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

std::string telemetry(const std::string& prefix, const std::string& cmd) {
  const std::string path = "/var/run/dpdk/" + prefix + "/dpdk_telemetry.v2";
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
  std::string reply;
  static char buf[1 << 16];
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 && read(fd, buf, sizeof(buf)) > 0 &&
      write(fd, cmd.data(), cmd.size()) == static_cast<ssize_t>(cmd.size())) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) reply.assign(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

bool wait_for_text(const std::string& path, const std::string& needle, int seconds) {
  for (int i = 0; i < seconds * 50; ++i) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

long long json_number(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const size_t at = json.find(k);
  if (at == std::string::npos) return -1;
  size_t p = at + k.size();
  if (p < json.size() && json[p] == '"') ++p;  // numbers given as strings ("%.6g")
  return std::strtoll(json.c_str() + p, nullptr, 10);
}

bool same_frames(const std::vector<Frame>& sent, const std::vector<Frame>& got) {
  if (sent.size() != got.size()) return false;
  std::map<size_t, const Frame*> by_len;
  for (const Frame& f : sent) by_len[f.size()] = &f;
  for (const Frame& f : got) {
    const auto it = by_len.find(f.size());
    if (it == by_len.end() || it->second == nullptr || !(*it->second == f)) return false;
    it->second = nullptr;  // each at most once
  }
  return true;
}

}  // namespace ufab::itest
