// Proxy ARP's frame work (pipeline/arp.hpp): what read() makes of ARP
// frames, and the reply answer() writes, byte for byte against a reply
// written out by hand from RFC 826's field layout.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pipeline/arp.hpp"

namespace ufab::pipeline::arp {
namespace {

using Bytes = std::vector<uint8_t>;

const Mac kVm{0x02, 0x00, 0x00, 0x00, 0x0a, 0x01};      // the requesting VM
const Mac kRemote{0x02, 0x00, 0x00, 0x00, 0x0b, 0x02};  // the remote VM answered for

// "who-has 192.168.0.2 tell 192.168.0.1" from kVm, broadcast.
Bytes request() {
  return {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // Ethernet destination: broadcast
          0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,  // source: the VM
          0x08, 0x06,                          // ARP
          0x00, 0x01, 0x08, 0x00, 6, 4,        // Ethernet, IPv4, hlen 6, plen 4
          0x00, 0x01,                          // request
          0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,  // sha
          192, 168, 0, 1,                      // spa
          0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // tha: unknown
          192, 168, 0, 2};                     // tpa
}

// "192.168.0.2 is-at 02:00:00:00:0b:02", to the VM.
Bytes reply() {
  return {0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,  // Ethernet destination: the VM
          0x02, 0x00, 0x00, 0x00, 0x0b, 0x02,  // source: the remote VM's MAC
          0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4,
          0x00, 0x02,                          // reply
          0x02, 0x00, 0x00, 0x00, 0x0b, 0x02,  // sha: the remote VM
          192, 168, 0, 2,                      // spa: the address asked for
          0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,  // tha: the VM
          192, 168, 0, 1};                     // tpa: its address
}

TEST(EdgeArp, ReadsARequest) {
  Bytes f = request();
  ASSERT_TRUE(is_arp(f.data()));
  Request r;
  ASSERT_EQ(read(f.data(), static_cast<uint32_t>(f.size()), r), Kind::request);
  EXPECT_EQ(r.sha, kVm);
  const uint8_t spa[4] = {192, 168, 0, 1}, tpa[4] = {192, 168, 0, 2};
  EXPECT_EQ(0, std::memcmp(&r.spa, spa, 4));  // network order, as in the frame
  EXPECT_EQ(0, std::memcmp(&r.tpa, tpa, 4));
}

TEST(EdgeArp, AnswersInPlaceByteForByte) {
  Bytes f = request();
  Request r;
  ASSERT_EQ(read(f.data(), static_cast<uint32_t>(f.size()), r), Kind::request);
  answer(f.data(), r, kRemote);
  EXPECT_EQ(f, reply());
}

TEST(EdgeArp, AnswerRepliesToTheFrameSourceAndKeepsThePadding) {
  // A request padded to Ethernet's 60 bytes whose frame source differs
  // from its sha: the reply goes to the frame's source, and keeps its
  // length and padding.
  Bytes f = request();
  f[11] = 0x99;
  f.resize(60, 0xee);
  Request r;
  ASSERT_EQ(read(f.data(), static_cast<uint32_t>(f.size()), r), Kind::request);
  answer(f.data(), r, kRemote);
  Bytes want = reply();
  want[5] = 0x99;  // Ethernet destination: the frame's source
  want.resize(60, 0xee);
  EXPECT_EQ(f, want);
}

TEST(EdgeArp, ReadsRepliesAsOtherAndRefusesWhatIsNotIpv4OverEthernet) {
  Request r;
  Bytes f = reply();
  EXPECT_EQ(read(f.data(), static_cast<uint32_t>(f.size()), r), Kind::other);
  f = request();
  f[21] = 3;  // RARP request
  EXPECT_EQ(read(f.data(), static_cast<uint32_t>(f.size()), r), Kind::other);
  f = request();
  EXPECT_EQ(read(f.data(), kBytes - 1, r), Kind::malformed);  // cut short
  EXPECT_EQ(read(f.data(), 14, r), Kind::malformed);
  for (size_t at : {14u, 15u, 16u, 17u, 18u, 19u}) {  // htype, ptype, hlen, plen
    f = request();
    f[at] ^= 0x10;
    EXPECT_EQ(read(f.data(), static_cast<uint32_t>(f.size()), r), Kind::malformed) << "byte " << at;
  }
  f = request();
  f[12] = 0x08;
  f[13] = 0x00;
  EXPECT_FALSE(is_arp(f.data()));
}

}  // namespace
}  // namespace ufab::pipeline::arp
