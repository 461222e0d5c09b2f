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

}  // namespace ufab::dpdk
