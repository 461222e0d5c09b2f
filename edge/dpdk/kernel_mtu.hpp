// The MTU of the kernel interface under a net_af_packet port. The PMD's
// mtu_set would set it (SIOCSIFMTU), but the PMD reports a max_mtu of 1500
// whatever the interface takes, so ethdev refuses any larger MTU before
// mtu_set runs; setup_port (port.cpp) then sets it here, within what the
// PMD's ring frames hold, as that mtu_set would.
#pragma once

#include <cstdint>
#include <string>

namespace ufab::dpdk {

// net_af_packet's ring frame size when its devargs give no framesz=.
inline constexpr uint32_t kAfPacketFrameSize = 2048;

// The largest MTU ring frames of frame_size (the port's framesz=) hold:
// less the TPACKET_V2 header and address, as the PMD's own mtu_set
// computes it.
uint32_t af_packet_frame_mtu(uint32_t frame_size);

// The smallest ring whose frames hold `mtu`: framesz = mtu + the header
// and address, rounded up to TPACKET_ALIGNMENT (16); blocksz = framesz
// rounded up to a 4 KB page. (The PMD also wants framesz less 32 to fit
// in its pool's mbufs: ufab sizes them for fabric_mtu, which this does.)
struct AfPacketRing {
  uint32_t frame_size = 0, block_size = 0;
};
AfPacketRing af_packet_ring_for(uint32_t mtu);

// Sets the MTU of the kernel interface if_index (SIOCSIFMTU). False with
// the reason (the kernel's error, the interface's name) in `why`.
bool set_kernel_mtu(unsigned if_index, uint16_t mtu, std::string& why);

// The kernel interface's MTU now (SIOCGIFMTU); 0 when it cannot be read.
uint16_t kernel_mtu_of(unsigned if_index);

}  // namespace ufab::dpdk
