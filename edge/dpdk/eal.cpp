// rte_intr_instance_alloc and its accessors are experimental in 22.11 (the
// handle became opaque in 21.11; these are the only way to make one).
#define ALLOW_EXPERIMENTAL_API 1

#include "edge/dpdk/eal.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_interrupts.h>
#include <sys/eventfd.h>
#include <unistd.h>

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

struct Marker {
  int fd;
  void (*fn)(void*);
  void* arg;
  std::atomic<bool> ran{false};
};

void on_marker(void* arg) {
  auto* m = static_cast<Marker*>(arg);
  uint64_t n;
  // The EAL does not read an EXT handle's fd: clear the count, or the
  // thread would be woken again until the callback is unregistered.
  [[maybe_unused]] const ssize_t got = read(m->fd, &n, sizeof n);
  if (!m->ran.load(std::memory_order_relaxed) && m->fn != nullptr) m->fn(m->arg);
  m->ran.store(true, std::memory_order_release);
}

}  // namespace

bool run_on_interrupt_thread(void (*fn)(void*), void* arg) {
  Marker m;
  m.fn = fn;
  m.arg = arg;
  m.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (m.fd < 0) return false;
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  if (h != nullptr && rte_intr_fd_set(h, m.fd) == 0 && rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) == 0 &&
      rte_intr_callback_register(h, &on_marker, &m) == 0) {
    const uint64_t one = 1;
    if (write(m.fd, &one, sizeof one) == sizeof one)
      for (int i = 0; i < 5000 && !m.ran.load(std::memory_order_acquire); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // -EAGAIN: running right now. Once unregistered it cannot run later.
    while (rte_intr_callback_unregister(h, &on_marker, &m) == -EAGAIN)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (h != nullptr) rte_intr_instance_free(h);
  close(m.fd);
  return m.ran.load(std::memory_order_acquire);
}

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
  // Nothing left running on the interrupt thread: rte_eal_cleanup tears the
  // memory down beside it (a memif peer's disconnect freeing its regions
  // there crashed ufab-core at exit; see run_on_interrupt_thread).
  run_on_interrupt_thread(nullptr, nullptr);
  rte_eal_cleanup();
}

}  // namespace ufab::dpdk
