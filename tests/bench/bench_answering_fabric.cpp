// ufab-bench-answering-fabric [EAL options] -- [CAP_CODE]: the far side of
// `deploy/ufab bench edge`'s answering-fabric run. On net_null nothing
// answers a probe, so a pair there never learns its path and keeps its bytes
// in flight until the loss timeout (docs/design.md §14): not how an edge
// runs. Here every frame ufab-edge sends on its fabric port (port 0, a memif)
// crosses one μFAB-C hop, the core library's switch model (p4/model,
// ingress + egress with its slot table, Φ_l, W_l, tx_l; the egress link's
// capacity code CAP_CODE, default 9 = 100 Gb/s, probe/units.hpp), and then
// meets the far edges:
//  - data frames end there (freed, counted);
//  - a probe comes back as a response, a finish as a finish-ack
//    (wire::reflect, the same answer a receiving ufab-edge gives), with the
//    outer addresses swapped. The admitted token is UNBOUND: this side runs
//    no receiver-side Alg. 1 (the far edges are not what is measured).
// One lcore, run to completion, until SIGINT or SIGTERM; then it prints
//   bench-answer totals rx=N data=N answered=N dropped=N tx_full=N conserved=1
// (conserved: rx = data + answered + dropped, every answer sent or counted
// in tx_full, which is part of dropped).
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <csignal>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "control/vm_pair.hpp"
#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/port.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "p4/model/switch_model.hpp"
#include "pipeline/encap.hpp"
#include "probe/reflect.hpp"
#include "probe/units.hpp"

namespace {

constexpr uint16_t kBurst = 32;
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Totals {
  uint64_t rx = 0, data = 0, answered = 0, dropped = 0, tx_full = 0;
};

// One frame from the edge: the switch hop, then the far edge.
// Returns the mbuf to send back, or nullptr when the frame ended here.
rte_mbuf* handle(ufab::swmodel::SwitchModel& sw, std::vector<uint8_t>& frame, rte_mbuf* m, ufab::Nanos now,
                 Totals& t) {
  using namespace ufab;
  const auto drop = [&t, m]() -> rte_mbuf* {
    ++t.dropped;
    rte_pktmbuf_free(m);
    return nullptr;
  };
  const uint32_t len = rte_pktmbuf_data_len(m);
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  if (m->nb_segs != 1) return drop();
  frame.assign(d, d + len);
  if (!sw.process(frame, 0, now, 0).forward) return drop();  // counted by the model
  wire::FrameView v;
  if (wire::parse_frame(frame, v) != wire::WireError::ok || v.shim.next == wire::kNextData) {
    ++(v.shim.next == wire::kNextData ? t.data : t.dropped);
    rte_pktmbuf_free(m);
    return nullptr;
  }
  wire::Message msg;
  if (wire::decode_message(std::span<const uint8_t>(frame.data() + v.payload_offset, v.payload_len), msg) !=
          wire::WireError::ok ||
      (msg.type != wire::MsgType::probe && msg.type != wire::MsgType::finish))
    return drop();
  wire::OuterAddrs back = v.outer;
  std::swap(back.src_mac, back.dst_mac);
  std::swap(back.src_ip, back.dst_ip);
  wire::SourceRoute route;  // the way back needs no switch here: one label, consumed
  route.n_labels = 1;
  route.next = 1;
  route.label[0] = 0;
  if (!pipeline::write_control(m, back, v.outer.src_port, route, v.shim.vni, wire::reflect(msg, kWireUnbound)))
    return drop();
  ++t.answered;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  // dpdk::Eal, not a bare rte_eal_init: at exit it lets the interrupt
  // thread finish the edge's memif disconnect before rte_eal_cleanup (eal.hpp;
  // without it this process died by SIGSEGV at exit, once in a while, under
  // a full parallel test run, its totals still in stdout's buffer).
  std::optional<ufab::dpdk::Eal> eal;
  try {
    eal.emplace(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ufab-bench-answering-fabric: %s\n", e.what());
    return 2;
  }
  const std::span<char*> app = eal->app_args();
  const long cap = app.size() > 1 ? std::strtol(app[1], nullptr, 10) : 9;
  if (cap < 1 || cap > 15 || ufab::wire::capacity_code_bps(static_cast<uint8_t>(cap)) == 0 || rte_eth_dev_count_avail() < 1) {
    std::fprintf(stderr, "usage: ufab-bench-answering-fabric [EAL options, one port] -- [CAP_CODE 1..12]\n");
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  rte_mempool* pool = rte_pktmbuf_pool_create("answer_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  if (pool == nullptr) {
    std::fprintf(stderr, "ufab-bench-answering-fabric: mempool: %s\n", rte_strerror(rte_errno));
    return 2;
  }
  try {
    ufab::dpdk::PortConfig pc;
    ufab::dpdk::setup_port(0, pool, pc);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ufab-bench-answering-fabric: %s\n", e.what());
    return 2;
  }
  ufab::swmodel::SwitchConfig sc;
  sc.n_ports = 2;  // 0 towards the edge, 1 the hop's egress link (the bench's paths are [[1]])
  sc.cap_codes = {static_cast<uint8_t>(cap), static_cast<uint8_t>(cap)};
  ufab::swmodel::SwitchModel sw(sc);
  const ufab::dpdk::TscClock clock;
  std::vector<uint8_t> frame;
  frame.reserve(16384);
  Totals t;
  std::printf("ufab-bench-answering-fabric: answering on port 0 (capacity code %ld)\n", cap);
  std::fflush(stdout);
  rte_mbuf* in[kBurst];
  rte_mbuf* out[kBurst];
  while (g_stop == 0) {
    const uint16_t n = rte_eth_rx_burst(0, 0, in, kBurst);
    if (n == 0) continue;
    const ufab::Nanos now = clock.now();
    sw.tick(now);
    t.rx += n;
    uint16_t k = 0;
    for (uint16_t i = 0; i < n; ++i)
      if (rte_mbuf* m = handle(sw, frame, in[i], now, t)) out[k++] = m;
    const uint16_t sent = rte_eth_tx_burst(0, 0, out, k);
    for (uint16_t i = sent; i < k; ++i) rte_pktmbuf_free(out[i]);
    t.tx_full += k - sent;
    t.answered -= k - sent;
    t.dropped += k - sent;
  }
  std::printf("bench-answer totals rx=%" PRIu64 " data=%" PRIu64 " answered=%" PRIu64 " dropped=%" PRIu64
              " tx_full=%" PRIu64 " conserved=%d\n",
              t.rx, t.data, t.answered, t.dropped, t.tx_full, t.rx == t.data + t.answered + t.dropped ? 1 : 0);
  std::fflush(stdout);
  ufab::dpdk::close_port(0);  // on the interrupt thread (memif)
  return 0;                   // ~Eal: rte_eal_cleanup once the interrupt thread is idle
}
