// ufab-edge's TX burst buffer (pipeline/tx_buffer.hpp) on a real port: an
// EAL (--no-huge --no-pci) and a net_ring ethdev whose TX ring holds 7
// frames, so the PMD takes some of a burst and refuses the rest. Per flush:
// tx counts the frames the PMD took and tx_bytes their bytes exactly (the
// bytes push() counted less the refused frames'), each refused frame is a
// tx_full drop and is freed (the mempool gets every mbuf back), a full
// buffer flushes by itself, and no byte of one burst is counted in the next.
// With the port's link known down (its link events or a poll said so:
// port_link.hpp) the refused frames are link_down drops instead; a link
// that is up, or one not followed, leaves them tx_full.
#include <gtest/gtest.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstdio>
#include <vector>

#include "pipeline/stats.hpp"
#include "pipeline/tx_buffer.hpp"
#include "tests/unit/eal_gtest_main.hpp"

namespace ufab::pipeline {
namespace {

constexpr unsigned kRingSlots = 8;  // holds 7 frames (rte_ring keeps one slot free)

struct Port {
  rte_mempool* pool = nullptr;
  rte_ring* ring = nullptr;
  uint16_t id = 0;
};

Port& port() {
  static Port p = [] {
    Port q;
    q.pool = rte_pktmbuf_pool_create("txbuf_pool", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    q.ring = rte_ring_create("txbuf_ring", kRingSlots, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (q.pool == nullptr || q.ring == nullptr) return q;
    const int id = rte_eth_from_rings("txbuf_port", &q.ring, 1, &q.ring, 1, SOCKET_ID_ANY);
    if (id < 0) {
      q.ring = nullptr;
      return q;
    }
    q.id = static_cast<uint16_t>(id);
    // Configured and started as ufab-edge does (a stopped port's burst calls are not its PMD's).
    const rte_eth_conf conf{};
    if (rte_eth_dev_configure(q.id, 1, 1, &conf) != 0 ||
        rte_eth_rx_queue_setup(q.id, 0, kRingSlots, SOCKET_ID_ANY, nullptr, q.pool) != 0 ||
        rte_eth_tx_queue_setup(q.id, 0, kRingSlots, SOCKET_ID_ANY, nullptr) != 0 || rte_eth_dev_start(q.id) != 0)
      q.ring = nullptr;
    return q;
  }();
  return p;
}

rte_mbuf* frame(uint16_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(port().pool);
  if (m != nullptr && rte_pktmbuf_append(m, len) == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  return m;
}

// Takes the frames the PMD put on its ring (as the far side of a link would)
// and returns their lengths.
std::vector<uint32_t> drain() {
  std::vector<uint32_t> lens;
  void* obj;
  while (rte_ring_dequeue(port().ring, &obj) == 0) {
    auto* m = static_cast<rte_mbuf*>(obj);
    lens.push_back(rte_pktmbuf_pkt_len(m));
    rte_pktmbuf_free(m);
  }
  return lens;
}

class TxBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (port().ring == nullptr) GTEST_FAIL() << "net_ring port or mempool could not be created";
    drain();
    stats.ports.resize(port().id + 1u);
  }
  const PortStats& ps() const { return stats.ports[port().id]; }
  uint64_t tx_full() const { return ps().drops[static_cast<size_t>(Drop::tx_full)]; }
  uint64_t link_down() const { return ps().drops[static_cast<size_t>(Drop::link_down)]; }
  EdgeStats stats;
};

TEST_F(TxBufferTest, CountsTheBytesOfWhatThePmdTookAndDropsTheRest) {
  TxBuffer tx(port().id, 0, &stats);
  const unsigned in_use = rte_mempool_in_use_count(port().pool);
  // 10 frames of 60, 61, ..., 69 bytes: the ring takes the first 7.
  for (uint16_t i = 0; i < 10; ++i) tx.push(frame(static_cast<uint16_t>(60 + i)));
  EXPECT_EQ(tx.pending(), 10);
  tx.flush();
  EXPECT_EQ(tx.pending(), 0);
  EXPECT_EQ(ps().tx, 7u);
  EXPECT_EQ(ps().tx_bytes, 60u + 61 + 62 + 63 + 64 + 65 + 66);  // 441
  EXPECT_EQ(tx_full(), 3u);
  EXPECT_EQ(drain(), (std::vector<uint32_t>{60, 61, 62, 63, 64, 65, 66}));
  EXPECT_EQ(rte_mempool_in_use_count(port().pool), in_use);  // the 3 refused were freed

  // The next burst counts only its own bytes.
  tx.push(frame(100));
  tx.push(frame(200));
  tx.flush();
  EXPECT_EQ(ps().tx, 9u);
  EXPECT_EQ(ps().tx_bytes, 441u + 300);
  EXPECT_EQ(tx_full(), 3u);
  EXPECT_EQ(drain(), (std::vector<uint32_t>{100, 200}));
  EXPECT_EQ(rte_mempool_in_use_count(port().pool), in_use);
}

TEST_F(TxBufferTest, AFullBufferFlushesByItself) {
  TxBuffer tx(port().id, 0, &stats);
  for (uint16_t i = 0; i < TxBuffer::kCap - 1; ++i) tx.push(frame(64));
  EXPECT_EQ(ps().tx, 0u);  // nothing leaves before the buffer is full
  tx.push(frame(64));      // the kCap-th: a burst of kCap, 7 taken
  EXPECT_EQ(tx.pending(), 0);
  EXPECT_EQ(ps().tx, 7u);
  EXPECT_EQ(ps().tx_bytes, 7u * 64);
  EXPECT_EQ(tx_full(), TxBuffer::kCap - 7u);
  EXPECT_EQ(drain().size(), 7u);
  tx.flush();  // empty: nothing changes
  EXPECT_EQ(ps().tx, 7u);
  EXPECT_EQ(ps().tx_bytes, 7u * 64);
}

TEST_F(TxBufferTest, NothingRefusedCountsEveryByte) {
  TxBuffer tx(port().id, 0, &stats);
  for (uint16_t len : {64, 1500, 808, 128}) tx.push(frame(len));
  tx.flush();
  EXPECT_EQ(ps().tx, 4u);
  EXPECT_EQ(ps().tx_bytes, 64u + 1500 + 808 + 128);
  EXPECT_EQ(tx_full(), 0u);
  EXPECT_EQ(drain(), (std::vector<uint32_t>{64, 1500, 808, 128}));
}

TEST_F(TxBufferTest, RefusedWhileTheLinkIsKnownDownCountsAsLinkDown) {
  PortLink link;
  TxBuffer tx(port().id, 0, &stats, &link);
  const unsigned in_use = rte_mempool_in_use_count(port().pool);
  const auto burst_of_10 = [&] {
    for (uint16_t i = 0; i < 10; ++i) tx.push(frame(64));
    tx.flush();  // the ring takes 7
    EXPECT_EQ(drain().size(), 7u);
  };
  // Down, but not followed (before PortLinks::watch): not known, so tx_full.
  link.up = false;
  burst_of_10();
  EXPECT_EQ(tx_full(), 3u);
  EXPECT_EQ(link_down(), 0u);
  // Followed, and the last event or poll said down: link_down.
  link.tracked = true;
  burst_of_10();
  EXPECT_EQ(tx_full(), 3u);
  EXPECT_EQ(link_down(), 3u);
  // Up again: a refusal is the PMD's ring being full.
  link.up = true;
  burst_of_10();
  EXPECT_EQ(tx_full(), 6u);
  EXPECT_EQ(link_down(), 3u);
  EXPECT_EQ(ps().tx, 21u);
  EXPECT_EQ(rte_mempool_in_use_count(port().pool), in_use);  // every refused frame freed
}

TEST_F(TxBufferTest, NothingRefusedIsNoDropEvenWithTheLinkDown) {
  PortLink link;
  link.tracked = true;  // down (the default), as a PMD may still take frames while its peer goes
  TxBuffer tx(port().id, 0, &stats, &link);
  for (uint16_t len : {64, 128}) tx.push(frame(len));
  tx.flush();
  EXPECT_EQ(ps().tx, 2u);
  EXPECT_EQ(link_down(), 0u);
  EXPECT_EQ(tx_full(), 0u);
  EXPECT_EQ(drain(), (std::vector<uint32_t>{64, 128}));
}

}  // namespace
}  // namespace ufab::pipeline

int main(int argc, char** argv) { return ufab::eal_test::run_with_eal(argc, argv, "test_edge_tx_buffer"); }
