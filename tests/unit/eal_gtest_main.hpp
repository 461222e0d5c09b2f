// main() for a GoogleTest binary that needs a real EAL: --no-huge --no-pci
// on lcore 0 with 64 MB, no shared config (so two such tests may run at
// once), EAL logs at error only. `name` is argv[0] and the file prefix.
#pragma once

#include <gtest/gtest.h>
#include <rte_eal.h>

#include <cstdio>
#include <string>
#include <vector>

namespace ufab::eal_test {

inline int run_with_eal(int argc, char** argv, const char* name) {
  ::testing::InitGoogleTest(&argc, argv);
  std::vector<std::string> args = {name,      "--no-huge",   "-m", "64", "--no-pci", "--file-prefix", name,
                                   "--log-level", "lib.eal:error", "-l", "0",  "--no-shconf"};
  std::vector<char*> eal;
  for (std::string& a : args) eal.push_back(a.data());
  if (rte_eal_init(static_cast<int>(eal.size()), eal.data()) < 0) {
    std::fprintf(stderr, "%s: rte_eal_init failed\n", name);
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  rte_eal_cleanup();
  return rc;
}

}  // namespace ufab::eal_test
