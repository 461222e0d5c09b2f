// Fine timer slack for a polling lcore that naps (the edge's workers and
// control lcore, ufab-core's egress loop, ufab-traffic's pacer). Linux lets
// a nanosleep of a thread with the default 50 us slack end up to 50 us late:
// on the build machine a 5 us nap lasted ~60 us and a 20 us one ~75 us
// (~10 and ~25 us with 1 us of slack). Those naps exist to wake in time
// (a response that opens a window, the next token round, a queued frame's
// departure), so every such thread sets its slack to 1 us once, at start.
#pragma once

namespace ufab::dpdk {

// PR_SET_TIMERSLACK to 1 us for the calling thread; false if the kernel
// refused (a hint: the thread then keeps the default and works, later).
bool set_fine_timer_slack();

}  // namespace ufab::dpdk
