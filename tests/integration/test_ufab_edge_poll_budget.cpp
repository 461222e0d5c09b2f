// The worker's bounded timer work (pipeline/control_tick.cpp poll_pairs,
// docs/design.md §15), in process on a real EdgeState: 1000 VM-pairs, all
// due at once (a new EdgeState arms every pair at 0). Each poll_pairs call
// polls max(2 bursts, a quarter of what is left) of the collected pairs, so
// the backlog drains geometrically and every pair is polled exactly once
// before anything is collected again. Hand-computed with burst 32:
//   left 1000 -> 250 polled, 750 -> 187, 563 -> 140, 423 -> 105, 318 -> 79,
//   239 -> 64 (2 bursts), 175 -> 64, 111 -> 64, 47 -> 47: 9 calls.
// Then nothing is due (the pairs are selecting, with no data: kNever).
// The time bound (params.pair_poll_max_share, PollLimit): with its deadline
// already passed, a call polls one group of 8 pairs and stops, so the 1000
// pairs woken again take 125 calls, 124 of them cut (the last ends with the
// list); each pair once; pair_polls counts every poll. The share itself
// (PollCredit): 1/4 ns of credit per ns, at most 1/4 of a 32 us period
// (8000 ns); a call that overran is owed and the next calls wait for it,
// so over 10,000 iterations the timers take a quarter of the time.
//
// argv[1]: unused (present when DPDK was found; exit 77 otherwise).

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "edge/config.hpp"
#include "edge/dpdk/mempool.hpp"
#include "edge/dpdk/tsc_clock.hpp"
#include "pipeline/edge_state.hpp"
#include "pipeline/layout.hpp"
#include "pipeline/stages.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"
#include "tests/integration/in_process.hpp"

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

void check_budget() {
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
  ITEST_CHECK(s.stats.pair_polls == 1000 && s.stats.pair_poll_cuts == 0, "pair_polls %lu cuts %lu, want 1000 and 0",
              static_cast<unsigned long>(s.stats.pair_polls), static_cast<unsigned long>(s.stats.pair_poll_cuts));

  // The time bound: a deadline in the past leaves one group per call.
  const dpdk::TscClock clock;
  const pipeline::PollLimit past{&clock, 0};
  s.wake_all();
  std::fill(seen.begin(), seen.end(), 0);
  calls = 0;
  total = 0;
  do {
    const size_t before = s.due_pending() ? s.due_next : 0;
    pipeline::poll_pairs(s, now + 2000, past);
    const size_t polled = s.due_next - before;
    ITEST_CHECK(polled == pipeline::PollLimit::kPollGroup, "bounded call %zu: polled %zu, want 8", calls, polled);
    for (size_t k = before; k < s.due_next; ++k) ++seen[s.due[k]];
    total += polled;
    ++calls;
  } while (s.due_pending() && calls < 200);
  once = 0;
  for (const uint32_t n : seen) once += n == 1;
  ITEST_CHECK(calls == 125 && total == 1000 && once == 1000, "bounded: %zu calls, %zu polls, %zu pairs once; want 125, 1000, 1000",
              calls, total, once);
  ITEST_CHECK(s.stats.pair_polls == 2000 && s.stats.pair_poll_cuts == 124, "pair_polls %lu cuts %lu, want 2000 and 124",
              static_cast<unsigned long>(s.stats.pair_polls), static_cast<unsigned long>(s.stats.pair_poll_cuts));
  // A deadline far ahead: the count budget alone, as before (250 first).
  s.wake_all();
  pipeline::poll_pairs(s, now + 3000, pipeline::PollLimit{&clock, clock.now() + 60 * kSec});
  ITEST_CHECK(s.due_next == 250, "unbinding deadline: polled %zu, want 250", s.due_next);

  // The share as a budget (PollCredit): share 1/4 of a 32 us period keeps
  // at most 8000 ns, and starts full.
  pipeline::PollCredit c(0.25, 32000);
  c.grow(5000);  // 8000 + 5000 / 4, kept at the depth
  ITEST_CHECK(c.may_poll() && c.limit(&clock, 5000).until == 13000, "full credit at 5000: until %lu, want 13000",
              static_cast<unsigned long>(c.limit(&clock, 5000).until));
  c.spend(9000);  // the last group overran: 1000 ns owed
  c.grow(7000);   // -1000 + 2000 / 4
  ITEST_CHECK(!c.may_poll() && c.credit == -500, "owing at 7000: credit %.0f, want -500 and no call", c.credit);
  c.grow(9000);  // -500 + 2000 / 4: nothing left is not enough
  ITEST_CHECK(!c.may_poll() && c.credit == 0, "at 9000: credit %.0f, want 0 and no call", c.credit);
  c.grow(9004);  // 4 ns more: 1 ns of credit
  ITEST_CHECK(c.may_poll() && c.limit(&clock, 9004).until == 9005, "at 9004: until %lu, want 9005",
              static_cast<unsigned long>(c.limit(&clock, 9004).until));
  c.grow(1'009'004);
  ITEST_CHECK(c.credit == 8000, "after 1 ms: credit %.0f, want the depth 8000", c.credit);
  ITEST_CHECK(!pipeline::PollCredit(1.0, 32000).bounded() && pipeline::PollCredit(0.25, 32000).bounded(),
              "share 1 must not bound, share 1/4 must");
  // The share holds over time however long one call's group takes: an
  // iteration every 1000 ns whose call (when allowed) takes 3000 ns. In
  // 10 ms the calls take at most 1/4 of it, plus the depth and one call.
  pipeline::PollCredit run(0.25, 32000);
  Nanos t = 0, polled_ns = 0;
  size_t allowed = 0;
  for (int i = 0; i < 10000; ++i) {
    t += 1000;
    run.grow(t);
    if (!run.may_poll()) continue;
    ++allowed;
    run.spend(3000);
    polled_ns += 3000;
    t += 3000;
  }
  ITEST_CHECK(4 * polled_ns <= t + 4 * (8000 + 3000), "timers took %lu of %lu ns, more than a quarter",
              static_cast<unsigned long>(polled_ns), static_cast<unsigned long>(t));
  ITEST_CHECK(4 * polled_ns >= t - 4 * 3000, "timers took %lu of %lu ns, less than a quarter with work due",
              static_cast<unsigned long>(polled_ns), static_cast<unsigned long>(t));
  ITEST_CHECK(allowed < 10000, "every iteration polled (%zu): the share did not hold", allowed);
}

}  // namespace

int main(int argc, char** argv) {
  return run_in_process(argc, argv, "test_ufab_edge_poll_budget", check_budget,
                        "PASS: 1000 due pairs polled in 9 calls (250, 187, 140, 105, 79, 64, 64, 64, 47), each once; "
                        "past the time bound 125 calls of 8 (124 cut)");
}
