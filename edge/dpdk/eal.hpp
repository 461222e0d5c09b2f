// EAL start-up shared by the DPDK binaries (ufab-core now, ufab-edge later).
// Command line convention, as in the DPDK examples: `prog [EAL args] -- [app args]`.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace ufab::dpdk {

// Owns the EAL: rte_eal_init in the constructor, rte_eal_cleanup in the
// destructor, once the interrupt thread has finished what it was doing (a
// memif peer's disconnect). The arguments are checked against the machine first
// (preflight.hpp: hugepages, vhost sockets, AF_XDP with its af_packet
// fallback); its notes go to stderr. Throws EnvironmentError for what the
// preflight finds missing, std::runtime_error naming rte_errno's text when
// rte_eal_init fails.
class Eal {
 public:
  Eal(int argc, char** argv);
  ~Eal();
  Eal(const Eal&) = delete;
  Eal& operator=(const Eal&) = delete;

  // The application's arguments: argv[0] followed by whatever came after
  // the EAL's "--" (the EAL consumes the separator itself).
  std::span<char*> app_args() const { return app_; }

 private:
  std::vector<std::string> args_;  // the (possibly rewritten) command line the EAL parses
  std::vector<char*> argv_;
  std::span<char*> app_;
};

// Runs fn(arg) (nullptr: nothing) on DPDK's interrupt thread, between two
// of its callbacks, and returns once it ran: true, or false if the thread
// did not get to it within 5 s (fn then never runs). Whatever callback the
// thread was running when this was called has returned by then. It is what
// serializes work with the PMDs' interrupt callbacks: in DPDK 22.11 a memif
// port closed while its peer's disconnect was handled there ran
// memif_disconnect twice at once, and rte_eal_cleanup beside such a
// callback tore its memory away (SIGSEGV in malloc_elem_free_list_insert,
// at exit, 2 of 17 runs of ufab-core whose memif peers stopped with it).
// The callback is on an eventfd of ours, unregistered before this returns
// (an alarm would leave a source that rte_eal_cleanup frees but keeps
// listed: another crash, in rte_intr_fd_get).
bool run_on_interrupt_thread(void (*fn)(void*), void* arg);

}  // namespace ufab::dpdk
