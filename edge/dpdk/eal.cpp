#include "edge/dpdk/eal.hpp"

#include <rte_alarm.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "edge/dpdk/preflight.hpp"

namespace ufab::dpdk {

namespace {

void set_flag(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true, std::memory_order_release); }

// Returns once DPDK's interrupt thread has run an alarm set now, so that a
// callback it was running at that moment has returned. Closing a memif port
// while its peer's disconnect is being handled there leaves that callback
// running (its unregistration pending), and it frees the port's regions:
// rte_eal_cleanup tearing the memory down beside it crashed ufab-core
// (SIGSEGV in malloc_elem_free_list_insert under memif_disconnect) in 1 of
// 7 runs whose memif peers stopped at the same moment. Bounded: 1 s.
void wait_for_interrupt_thread() {
  std::atomic<bool> ran{false};
  if (rte_eal_alarm_set(1, &set_flag, &ran) != 0) return;
  for (int i = 0; i < 1000 && !ran.load(std::memory_order_acquire); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  rte_eal_alarm_cancel(&set_flag, &ran);  // not run yet: it must not run once `ran` is gone
}

}  // namespace

Eal::Eal(int argc, char** argv) {
  Preflight pf = preflight_eal_args(std::span<char* const>(argv, static_cast<size_t>(argc)));
  const std::string prog = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "ufab";
  for (const std::string& note : pf.notes) std::fprintf(stderr, "%s: %s\n", prog.c_str(), note.c_str());
  args_ = std::move(pf.args);
  for (std::string& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  const int n = static_cast<int>(args_.size());
  const int used = rte_eal_init(n, argv_.data());
  if (used < 0)
    throw std::runtime_error(std::string("EAL init failed: ") + rte_strerror(rte_errno) +
                             " (no hugepages? try --no-huge -m 256; several processes need distinct --file-prefix)");
  // rte_eal_init returns how many arguments it consumed and writes the
  // program name over the "--" separator, so argv[used] starts the
  // application's own argument vector.
  app_ = std::span<char*>(argv_.data() + used, static_cast<size_t>(n - used));
}

Eal::~Eal() {
  wait_for_interrupt_thread();
  rte_eal_cleanup();
}

}  // namespace ufab::dpdk
