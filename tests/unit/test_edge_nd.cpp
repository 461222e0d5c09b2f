// The neighbour discovery proxy's frame work (pipeline/nd.hpp): a
// solicitation read, the advertisement written byte for byte against one
// written out here from RFC 4861 §4.4 (its ICMPv6 checksum, 0x119a, and the
// solicitation's, 0x7397, summed by hand over RFC 4443's pseudo-header),
// and the frames that are not valid solicitations.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pipeline/nd.hpp"

namespace ufab::pipeline::nd {
namespace {

using Bytes = std::vector<uint8_t>;

const Mac kRemote{0x02, 0x00, 0x00, 0x00, 0x0b, 0x02};

// fd00::1 (MAC 02:00:00:00:0a:01) asks for fd00::2, to its solicited-node
// multicast address ff02::1:ff00:2, with its link-layer address option.
Bytes solicitation() {
  return {0x33, 0x33, 0xff, 0x00, 0x00, 0x02,  // Ethernet destination: 33:33 + the group's low 32 bits
          0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,  // source: the VM
          0x86, 0xdd,
          0x60, 0x00, 0x00, 0x00, 0x00, 32, 58, 255,        // IPv6, payload 32, ICMPv6, hop limit 255
          0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,  // source fd00::1
          0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 2,  // ff02::1:ff00:2
          135, 0, 0x73, 0x97, 0, 0, 0, 0,                   // solicitation, checksum, reserved
          0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,  // target fd00::2
          1, 1, 0x02, 0x00, 0x00, 0x00, 0x0a, 0x01};        // source link-layer address
}

// fd00::2 is at 02:00:00:00:0b:02, to fd00::1.
Bytes advertisement() {
  return {0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,  // Ethernet destination: the VM
          0x02, 0x00, 0x00, 0x00, 0x0b, 0x02,  // source: the remote VM's MAC
          0x86, 0xdd,
          0x60, 0x00, 0x00, 0x00, 0x00, 32, 58, 255,
          0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,  // source: the target
          0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,  // destination: the asker
          136, 0, 0x11, 0x9a, 0x60, 0, 0, 0,                // advertisement, checksum, S and O
          0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,  // target
          2, 1, 0x02, 0x00, 0x00, 0x00, 0x0b, 0x02};        // target link-layer address
}

Kind read_bytes(const Bytes& f, Solicitation& s) { return read(f.data(), static_cast<uint32_t>(f.size()), s); }

// The solicitation's checksum made right again after a field was changed
// (the checksum itself is checked against the values above), so that only
// the changed field can make it invalid.
Bytes resealed(Bytes f) {
  const uint32_t payload = uint32_t{f[18]} << 8 | f[19];
  f[56] = f[57] = 0;
  const uint16_t c = icmp6_checksum(f.data() + 22, f.data() + 38, f.data() + 54, payload);
  f[56] = static_cast<uint8_t>(c >> 8);
  f[57] = static_cast<uint8_t>(c);
  return f;
}

TEST(EdgeNd, ReadsASolicitation) {
  const Bytes f = solicitation();
  ASSERT_TRUE(is_ipv6(f.data()));
  Solicitation s;
  ASSERT_EQ(read_bytes(f, s), Kind::solicitation);
  EXPECT_EQ(s.from, (Mac{0x02, 0x00, 0x00, 0x00, 0x0a, 0x01}));
  EXPECT_EQ(s.src, (Ip6{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(s.target, (Ip6{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}));
}

TEST(EdgeNd, AnswersByteForByte) {
  Bytes f = solicitation();
  Solicitation s;
  ASSERT_EQ(read_bytes(f, s), Kind::solicitation);
  f.resize(kNaBytes);
  answer(f.data(), s, kRemote);
  EXPECT_EQ(f, advertisement());
  // Its own checksum holds, as a kernel checks it.
  EXPECT_EQ(icmp6_checksum(f.data() + 22, f.data() + 38, f.data() + 54, 32), 0);
}

TEST(EdgeNd, OtherIpv6IsNotASolicitation) {
  Solicitation s;
  Bytes f = advertisement();
  EXPECT_EQ(read_bytes(f, s), Kind::other);  // an advertisement
  f = solicitation();
  f[20] = 17;  // UDP: the VM's data
  EXPECT_EQ(read_bytes(f, s), Kind::other);
}

TEST(EdgeNd, RefusesInvalidSolicitations) {
  Solicitation s;
  Bytes f = solicitation();
  EXPECT_EQ(read(f.data(), 53, s), Kind::malformed);       // shorter than the IPv6 header
  EXPECT_EQ(read(f.data(), 85, s), Kind::malformed);       // shorter than its payload length
  f[14] = 0x40;                                            // version 4
  EXPECT_EQ(read_bytes(f, s), Kind::malformed);
  f = solicitation();
  f[21] = 64;  // hop limit not 255: it was routed (RFC 4861 §7.1.1)
  EXPECT_EQ(read_bytes(f, s), Kind::malformed);
  f = solicitation();
  f[57] ^= 1;  // checksum
  EXPECT_EQ(read_bytes(f, s), Kind::malformed);
  EXPECT_EQ(read_bytes(resealed(f), s), Kind::solicitation);  // resealed() alone changes nothing else
  f = solicitation();
  f[55] = 1;  // code
  EXPECT_EQ(read_bytes(resealed(f), s), Kind::malformed);
  f = solicitation();
  f[19] = 16;  // payload shorter than a solicitation
  EXPECT_EQ(read_bytes(resealed(f), s), Kind::malformed);
  f = solicitation();
  f[62] = 0xff;  // a multicast target
  EXPECT_EQ(read_bytes(resealed(f), s), Kind::malformed);
}

}  // namespace
}  // namespace ufab::pipeline::nd
