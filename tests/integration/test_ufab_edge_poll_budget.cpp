// The worker's bounded timer work (pipeline/control_tick.cpp poll_pairs,
// docs/design.md §15), in process on a real EdgeState: 1000 VM-pairs, all
// due at once (a new EdgeState arms every pair at 0). Each poll_pairs call
// polls max(2 bursts, a quarter of what is left) of the collected pairs, so
// the backlog drains geometrically and every pair is polled exactly once
// before anything is collected again. Hand-computed with burst 32:
//   left 1000 -> 250 polled, 750 -> 187, 563 -> 140, 423 -> 105, 318 -> 79,
//   239 -> 64 (2 bursts), 175 -> 64, 111 -> 64, 47 -> 47: 9 calls.
// Then nothing is due (the pairs are selecting, with no data: kNever).
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "edge/dpdk/eal.hpp"
#include "edge/dpdk/mempool.hpp"
#include "pipeline/edge_state.hpp"
#include "pipeline/layout.hpp"
#include "pipeline/stages.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"

namespace {

using namespace ufab;
using namespace ufab::itest;

std::string config(int remote) {
  std::string c =
      "edge: {fabric_port: 1, ip: 10.0.0.1, mac: \"02:00:00:00:00:01\"}\n"
      "params: {burst: 32}\n"
      "tenants:\n  - {vni: 100, guarantee_gbps: 1}\n"
      "vms:\n  - {name: a1, id: 1, tenant: 100, mac: \"02:00:00:00:0a:01\", ip: 192.168.0.1, port: 0}\n"
      "hosts:\n  - {name: hB, ip: 10.0.0.2, mac: \"02:00:00:00:00:02\", base_rtt_us: 20, paths: [[1]]}\n"
      "remote_vms:\n";
  for (int r = 0; r < remote; ++r)
    c += "  - {name: b" + std::to_string(r) + ", id: " + std::to_string(2 + r) + ", tenant: 100, ip: 10.1." +
         std::to_string(r / 250) + "." + std::to_string(1 + r % 250) + ", host: hB}\n";
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string prefix = "ufabbudget" + std::to_string(getpid());
  std::vector<std::string> args = edge_eal(prefix, "0");
  args.insert(args.begin(), "test_ufab_edge_poll_budget");
  args.insert(args.end(), {"--vdev", "net_null0", "--vdev", "net_null1"});
  std::vector<char*> eal_argv = c_argv(args);
  {
    dpdk::Eal eal(static_cast<int>(args.size()), eal_argv.data());
    const edge::EdgeConfig cfg = edge::parse_config(config(1000), "budget.yaml");
    dpdk::PoolConfig pc;
    pc.n_mbufs = 2047;
    rte_mempool* pool = dpdk::create_pktmbuf_pool(pc);
    const pipeline::Layout layout = pipeline::make_layout(cfg, 2, {0}, 0);
    pipeline::EdgeState s(cfg, pool, 2, layout, 0);
    ITEST_CHECK(s.pairs.size() == 1000, "%zu pairs, want 1000", s.pairs.size());

    const size_t want[] = {250, 187, 140, 105, 79, 64, 64, 64, 47};
    std::vector<uint32_t> seen(s.pairs.size(), 0);
    size_t calls = 0, total = 0;
    const Nanos now = 1000;
    do {
      const size_t before = s.due_pending() ? s.due_next : 0;
      pipeline::poll_pairs(s, now);
      ITEST_CHECK(s.due.size() == 1000, "call %zu: %zu collected, want all 1000 in one collection", calls, s.due.size());
      const size_t polled = s.due_next - before;
      ITEST_CHECK(calls < std::size(want) && polled == want[calls], "call %zu: polled %zu, want %zu", calls, polled,
                  calls < std::size(want) ? want[calls] : 0);
      for (size_t k = before; k < s.due_next; ++k) ++seen[s.due[k]];
      total += polled;
      ++calls;
    } while (s.due_pending() && calls < 50);
    ITEST_CHECK(calls == std::size(want) && total == 1000, "%zu calls polled %zu pairs, want 9 calls and 1000", calls, total);
    size_t once = 0;
    for (const uint32_t n : seen) once += n == 1;
    ITEST_CHECK(once == 1000, "%zu pairs polled exactly once, want 1000", once);
    // Nothing is due now: the next call collects an empty set.
    pipeline::poll_pairs(s, now + 1000);
    ITEST_CHECK(s.due.empty() && !s.due_pending(), "%zu pairs due after the drain, want 0", s.due.size());
  }
  remove_dpdk_runtime(prefix);
  if (itest::g_failures != 0) {
    std::printf("%d checks failed\n", itest::g_failures);
    return 1;
  }
  std::printf("PASS: 1000 due pairs polled in 9 calls (250, 187, 140, 105, 79, 64, 64, 64, 47), each once\n");
  return 0;
}
