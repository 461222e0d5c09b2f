// Graceful stop (issue 8 item 6), driven by the control lcore after the
// first SIGINT/SIGTERM:
//  1. draining: the VM ports are no longer polled; the schedulers keep
//     sending under the windows (and the fabric keeps being served) until
//     nothing is queued, or the timeout;
//  2. finishing: every active pair sends finish (§3.6) so the switches
//     subtract it, and the edge waits until every hop acked every finish (the
//     pairs retry as usual), or the timeout;
//  3. exit: the workers return; the report is printed; exit code 0.
// A second signal skips to exit at once.
#pragma once

#include "control/clock.hpp"

namespace ufab::pipeline {

class Edge;

class StopSequence {
 public:
  explicit StopSequence(Nanos timeout) : timeout_(timeout) {}
  bool started() const { return started_; }
  void start(Edge& e, Nanos now);
  // True once the sequence is complete (the phase is then exit).
  bool step(Edge& e, Nanos now);

 private:
  Nanos timeout_;
  bool started_ = false;
  Nanos deadline_ = 0, next_check_ = 0;
};

}  // namespace ufab::pipeline
