#include "edge/dpdk/timer_slack.hpp"

#include <sys/prctl.h>

namespace ufab::dpdk {

bool set_fine_timer_slack() { return prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) == 0; }

}  // namespace ufab::dpdk
