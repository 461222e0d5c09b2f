#include "edge/dpdk/eal.hpp"

#include <rte_eal.h>
#include <rte_errno.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "edge/dpdk/preflight.hpp"

namespace ufab::dpdk {

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

Eal::~Eal() { rte_eal_cleanup(); }

}  // namespace ufab::dpdk
