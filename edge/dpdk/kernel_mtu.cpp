#include "edge/dpdk/kernel_mtu.hpp"

#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace ufab::dpdk {

namespace {

// SIOCSIFMTU / SIOCGIFMTU on the interface if_index, through ifr.ifr_mtu.
// False with the reason in `why`.
bool mtu_ioctl(unsigned if_index, unsigned long request, ifreq& ifr, std::string& why) {
  const int mtu = ifr.ifr_mtu;
  std::memset(&ifr, 0, sizeof ifr);
  if (if_indextoname(if_index, ifr.ifr_name) == nullptr) {
    why = "no kernel interface with index " + std::to_string(if_index);
    return false;
  }
  ifr.ifr_mtu = mtu;
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const bool ok = s >= 0 && ioctl(s, request, &ifr) == 0;
  if (!ok) why = std::string(ifr.ifr_name) + "'s MTU: " + std::strerror(errno);
  if (s >= 0) close(s);
  return ok;
}

}  // namespace

uint32_t af_packet_frame_mtu(uint32_t frame_size) {
  return frame_size > TPACKET2_HDRLEN ? frame_size - static_cast<uint32_t>(TPACKET2_HDRLEN) : 0;
}

AfPacketRing af_packet_ring_for(uint32_t mtu) {
  constexpr uint32_t kAlign = TPACKET_ALIGNMENT, kPage = 4096;
  AfPacketRing r;
  r.frame_size = (mtu + static_cast<uint32_t>(TPACKET2_HDRLEN) + kAlign - 1) / kAlign * kAlign;
  r.block_size = (r.frame_size + kPage - 1) / kPage * kPage;
  return r;
}

bool set_kernel_mtu(unsigned if_index, uint16_t mtu, std::string& why) {
  ifreq ifr{};
  ifr.ifr_mtu = mtu;
  if (mtu_ioctl(if_index, SIOCSIFMTU, ifr, why)) return true;
  why = "setting it to " + std::to_string(mtu) + ": " + why;
  return false;
}

uint16_t kernel_mtu_of(unsigned if_index) {
  ifreq ifr{};
  std::string why;
  if (!mtu_ioctl(if_index, SIOCGIFMTU, ifr, why)) return 0;
  return ifr.ifr_mtu > 0 && ifr.ifr_mtu <= UINT16_MAX ? static_cast<uint16_t>(ifr.ifr_mtu) : 0;
}

}  // namespace ufab::dpdk
