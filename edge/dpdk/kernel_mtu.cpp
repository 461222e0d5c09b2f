#include "edge/dpdk/kernel_mtu.hpp"

#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ufab::dpdk {

namespace {

constexpr uint32_t kDefaultFrameSize = 2048;  // net_af_packet's framesz default

// ifr for if_index, or false when the index names no interface.
bool request_for(unsigned if_index, ifreq& ifr) {
  std::memset(&ifr, 0, sizeof ifr);
  return if_indextoname(if_index, ifr.ifr_name) != nullptr;
}

}  // namespace

uint32_t af_packet_frame_mtu(const std::string& devargs) {
  uint32_t frame = kDefaultFrameSize;
  for (size_t at = 0; at < devargs.size();) {
    const size_t end = std::min(devargs.find(',', at), devargs.size());
    const std::string kv = devargs.substr(at, end - at);
    if (kv.rfind("framesz=", 0) == 0) frame = static_cast<uint32_t>(std::strtoul(kv.c_str() + 8, nullptr, 0));
    at = end + 1;
  }
  return frame > TPACKET2_HDRLEN ? frame - static_cast<uint32_t>(TPACKET2_HDRLEN) : 0;
}

AfPacketRing af_packet_ring_for(uint32_t mtu) {
  constexpr uint32_t kAlign = TPACKET_ALIGNMENT, kPage = 4096;
  AfPacketRing r;
  r.frame_size = (mtu + static_cast<uint32_t>(TPACKET2_HDRLEN) + kAlign - 1) / kAlign * kAlign;
  r.block_size = (r.frame_size + kPage - 1) / kPage * kPage;
  return r;
}

bool set_kernel_mtu(unsigned if_index, uint16_t mtu, std::string& why) {
  ifreq ifr;
  if (!request_for(if_index, ifr)) {
    why = "no kernel interface with index " + std::to_string(if_index);
    return false;
  }
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    why = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  ifr.ifr_mtu = mtu;
  const bool ok = ioctl(s, SIOCSIFMTU, &ifr) == 0;
  if (!ok) why = std::string("setting ") + ifr.ifr_name + "'s MTU to " + std::to_string(mtu) + ": " + std::strerror(errno);
  close(s);
  return ok;
}

uint16_t kernel_mtu_of(unsigned if_index) {
  ifreq ifr;
  if (!request_for(if_index, ifr)) return 0;
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return 0;
  const bool ok = ioctl(s, SIOCGIFMTU, &ifr) == 0;
  close(s);
  return ok && ifr.ifr_mtu > 0 && ifr.ifr_mtu <= UINT16_MAX ? static_cast<uint16_t>(ifr.ifr_mtu) : 0;
}

}  // namespace ufab::dpdk
