#include "tests/integration/in_process.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "edge/dpdk/eal.hpp"
#include "tests/integration/check.hpp"
#include "tests/integration/edge_common.hpp"

namespace ufab::itest {

int run_in_process(int argc, char** argv, const char* name, const std::function<void()>& body, const char* pass_line) {
  if (argc < 2 || std::string(argv[1]).empty()) {
    std::printf("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)\n");
    return 77;
  }
  const std::string prefix = std::string(name) + std::to_string(getpid());
  std::vector<std::string> args = edge_eal(prefix, "0");
  args.insert(args.begin(), name);
  args.insert(args.end(), {"--vdev", "net_null0", "--vdev", "net_null1"});
  std::vector<char*> eal_argv = c_argv(args);
  {
    dpdk::Eal eal(static_cast<int>(args.size()), eal_argv.data());
    body();
  }
  remove_dpdk_runtime(prefix);
  if (g_failures != 0) {
    std::printf("%d checks failed\n", g_failures);
    return 1;
  }
  std::printf("%s\n", pass_line);
  return 0;
}

}  // namespace ufab::itest
