// ufab-sched-steady MODE N: N packets (dequeue + replacement enqueue) of the
// scheduler benchmark's steady state (sched_load.hpp), a fixed amount of work
// for instruction counts that do not depend on timing:
//   valgrind --tool=callgrind build/tests/ufab-sched-steady single 0
//   valgrind --tool=callgrind build/tests/ufab-sched-steady single 1000000
// (Ir per packet = difference / 1e6). MODE: single (dequeue, enqueue),
// burst32 (dequeue_burst(32), enqueue x n), burst32x2 (dequeue_burst(32),
// enqueue_burst), driver (the arrivals and the hash alone). Prints a (word-wise) FNV-1a hash of every decision (pair, length,
// handle), so that a change to the scheduler can be checked to keep the
// pick order bit for bit.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/bench/sched_load.hpp"

using namespace ufab::bench;

namespace {

struct Fnv {  // word-wise FNV-1a: two instructions per word
  uint64_t h = 0xcbf29ce484222325ull;
  void add(uint64_t v) { h = (h ^ v) * 0x100000001b3ull; }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s single|burst32|burst32x2|driver PACKETS\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const uint64_t n = std::strtoull(argv[2], nullptr, 10);
  Rng rng;
  Sched s = make(rng);
  Fnv fnv;
  uint64_t done = 0;
  if (std::strcmp(mode, "single") == 0) {
    Pkt pkt = 0;
    uint32_t len = 0, pair = 0;
    for (; done < n; ++done) {
      s.dequeue(pkt, len, pair);
      fnv.add(pair);
      fnv.add(len);
      fnv.add(pkt);
      const Arrival a = arrival(rng, class_of(pair));
      s.enqueue(a.pair, a.flow, a.pkt, a.len);
    }
  } else if (std::strcmp(mode, "burst32") == 0 || std::strcmp(mode, "burst32x2") == 0) {
    const bool both = std::strcmp(mode, "burst32x2") == 0;
    std::array<Pkt, 32> pkts{};
    std::array<uint32_t, 32> lens{}, pairs{}, flows{};
    while (done < n) {
      const size_t k = s.dequeue_burst(pkts.data(), lens.data(), pairs.data(), 32);
      if (k == 0) break;
      for (size_t i = 0; i < k; ++i) {
        fnv.add(pairs[i]);
        fnv.add(lens[i]);
        fnv.add(pkts[i]);
        const Arrival a = arrival(rng, class_of(pairs[i]));
        if (both) {
          pairs[i] = a.pair, flows[i] = a.flow, lens[i] = a.len, pkts[i] = a.pkt;
        } else {
          s.enqueue(a.pair, a.flow, a.pkt, a.len);
        }
      }
      if (both) s.enqueue_burst(pairs.data(), flows.data(), pkts.data(), lens.data(), k);
      done += k;
    }
  } else if (std::strcmp(mode, "driver") == 0) {
    // The driver's own work per packet (arrival + hash), no scheduler: the
    // baseline to subtract from the other modes' Ir.
    uint32_t pair = 0;
    for (; done < n; ++done) {
      fnv.add(pair);
      fnv.add(pair);
      fnv.add(done);
      const Arrival a = arrival(rng, class_of(pair));
      pair = a.pair ^ a.len ^ static_cast<uint32_t>(a.pkt) ^ a.flow;
    }
  } else {
    std::fprintf(stderr, "unknown mode '%s'\n", mode);
    return 2;
  }
  std::printf("packets %llu order_hash %016llx backlog %llu drops %llu\n", static_cast<unsigned long long>(done),
              static_cast<unsigned long long>(fnv.h), static_cast<unsigned long long>(s.backlog_packets()),
              static_cast<unsigned long long>(s.counters().dropped_full));
  return 0;
}
