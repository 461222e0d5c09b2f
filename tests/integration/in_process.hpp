// The frame of the in-process ufab-edge tests (a real EdgeState or Edge in
// the test's own process): an EAL on lcore 0 with two net_null ports (never
// started; a test points a TX buffer at an rte_ring to read what leaves).
#pragma once

#include <functional>

namespace ufab::itest {

// argv[1] empty: ufab-edge was not built (prints SKIP, returns 77). Else
// runs body inside the EAL, removes its runtime files, and prints
// pass_line (returns 0) or the number of failed checks (returns 1).
int run_in_process(int argc, char** argv, const char* name, const std::function<void()>& body, const char* pass_line);

}  // namespace ufab::itest
