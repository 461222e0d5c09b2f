#include "edge/dpdk/eal.hpp"

#include <rte_eal.h>
#include <rte_errno.h>

#include <stdexcept>
#include <string>

namespace ufab::dpdk {

Eal::Eal(int argc, char** argv) {
  const int used = rte_eal_init(argc, argv);
  if (used < 0)
    throw std::runtime_error(std::string("EAL init failed: ") + rte_strerror(rte_errno) +
                             " (no hugepages? try --no-huge -m 256; several processes need distinct --file-prefix)");
  // rte_eal_init returns how many arguments it consumed and writes the
  // program name over the "--" separator, so argv[used] starts the
  // application's own argument vector.
  app_ = std::span<char*>(argv + used, static_cast<size_t>(argc - used));
}

Eal::~Eal() { rte_eal_cleanup(); }

}  // namespace ufab::dpdk
