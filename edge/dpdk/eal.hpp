// EAL start-up shared by the DPDK binaries (ufab-core now, ufab-edge later).
// Command line convention, as in the DPDK examples: `prog [EAL args] -- [app args]`.
#pragma once

#include <span>

namespace ufab::dpdk {

// Owns the EAL: rte_eal_init in the constructor, rte_eal_cleanup in the
// destructor. Throws std::runtime_error naming rte_errno's text on failure.
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
  std::span<char*> app_;
};

}  // namespace ufab::dpdk
