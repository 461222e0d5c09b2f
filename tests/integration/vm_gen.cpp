// ufab-vmgen: the VMs of the sidecar test. Each VM is a pair of DPDK ports
// (2k, 2k+1): port 2k is net_pcap (its rx_pcap holds what the VM sends, its
// tx_pcap receives what the VM gets), port 2k+1 is the VM's vNIC towards the
// vswitch (virtio-user to an OVS dpdkvhostuserclient port, as QEMU would
// be). Frames are moved unchanged both ways, in bursts, once every vNIC has
// link (so a VM does not send into a port the vswitch is still setting up).
// With UFAB_VMGEN_GO_FILE=PATH it waits for PATH to exist before sending.
// With UFAB_VMGEN_LATER=P=PATH[,P=PATH...], port P (a net_pcap port: one
// VM's frames) is read only once its PATH exists too, so a caller can start
// some VMs after others.
// Runs until SIGINT/SIGTERM, then prints per-port counters and closes the
// ports (which flushes the capture files).
//
//   ufab-vmgen [EAL options with an even number of ports]
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/port.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

void nap_us(long us) {
  timespec ts{0, us * 1000};
  nanosleep(&ts, nullptr);
}

int run(int argc, char** argv) {
  using namespace ufab;
  dpdk::Eal eal(argc, argv);
  const uint16_t n = rte_eth_dev_count_avail();
  if (n == 0 || n % 2 != 0) {
    std::fprintf(stderr, "ufab-vmgen: want pairs of ports (net_pcap, vNIC), got %u ports\n", n);
    return 2;
  }
  dpdk::PoolConfig pc;
  pc.name = "vmgen";
  // A virtio-user port fills its RX ring at start (at most its vring's
  // queue_size, 1024 here): room for every vNIC's ring and the frames in
  // flight, so that adding a VM cannot leave a vNIC without buffers.
  pc.n_mbufs = 1024u * (n / 2u) + 4095u;
  rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
  dpdk::PortConfig cfg;
  cfg.rx_desc = cfg.tx_desc = 512;
  for (uint16_t p = 0; p < n; ++p) dpdk::setup_port(p, pool, cfg);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  // Every vNIC up (bounded: 60 s), then forward.
  for (int i = 0; i < 6000 && !g_stop; ++i) {
    bool all = true;
    for (uint16_t p = 1; p < n; p += 2) {
      rte_eth_link link{};
      all = all && rte_eth_link_get_nowait(p, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
    }
    if (all) break;
    nap_us(10000);
  }
  // A virtio-user port in server mode has link as soon as its client
  // connected, which can be before the vswitch enabled the queues; with
  // UFAB_VMGEN_GO_FILE the caller says when the vswitch is ready (bounded: 120 s).
  std::printf("ufab-vmgen ready\n");
  std::fflush(stdout);
  if (const char* go = std::getenv("UFAB_VMGEN_GO_FILE"); go != nullptr)
    for (int i = 0; i < 12000 && !g_stop && access(go, F_OK) != 0; ++i) nap_us(10000);
  std::printf("ufab-vmgen forwarding on %u VMs\n", n / 2);
  std::fflush(stdout);

  std::vector<std::string> held(n);  // port -> the file that releases it ("": not held)
  if (const char* later = std::getenv("UFAB_VMGEN_LATER"); later != nullptr) {
    std::string spec = later;
    for (size_t at = 0; at < spec.size();) {
      const size_t end = std::min(spec.find(',', at), spec.size()), eq = spec.find('=', at);
      const int p = std::atoi(spec.c_str() + at);
      if (eq >= end || p < 0 || p >= n) {
        std::fprintf(stderr, "ufab-vmgen: UFAB_VMGEN_LATER: want P=PATH[,P=PATH...] with P < %u: '%s'\n", n, later);
        return 2;
      }
      held[static_cast<size_t>(p)] = spec.substr(eq + 1, end - eq - 1);
      at = end + 1;
    }
  }
  std::vector<uint64_t> rx(n, 0), tx(n, 0), drop(n, 0);
  rte_mbuf* burst[32];
  while (!g_stop) {
    bool idle = true;
    for (uint16_t p = 0; p < n; ++p)
      if (!held[p].empty() && access(held[p].c_str(), F_OK) == 0) {
        std::printf("ufab-vmgen port=%u released\n", p);
        std::fflush(stdout);
        held[p].clear();
      }
    for (uint16_t p = 0; p < n; ++p) {
      if (!held[p].empty()) continue;
      const uint16_t peer = static_cast<uint16_t>(p ^ 1u);
      const uint16_t got = rte_eth_rx_burst(p, 0, burst, 32);
      if (got == 0) continue;
      idle = false;
      rx[p] += got;
      uint16_t sent = 0;
      for (int tries = 0; sent < got && tries < 1000; ++tries)
        sent = static_cast<uint16_t>(sent + rte_eth_tx_burst(peer, 0, burst + sent, static_cast<uint16_t>(got - sent)));
      tx[peer] += sent;
      drop[peer] += got - sent;
      for (uint16_t i = sent; i < got; ++i) rte_pktmbuf_free(burst[i]);
    }
    if (idle) nap_us(50);  // small rates: leave the cores to OVS and the edges
  }
  for (uint16_t p = 0; p < n; ++p)
    std::printf("ufab-vmgen port=%u rx=%llu tx=%llu dropped=%llu\n", p, static_cast<unsigned long long>(rx[p]),
                static_cast<unsigned long long>(tx[p]), static_cast<unsigned long long>(drop[p]));
  for (uint16_t p = 0; p < n; ++p) dpdk::close_port(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ufab-vmgen: %s\n", e.what());
    return 1;
  }
}
