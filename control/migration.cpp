#include "control/migration.hpp"

namespace ufab {

bool HostMigrationGate::try_acquire(Nanos now, Nanos rtt) {
  if (now < until_) {
    ++refused_;
    return false;
  }
  until_ = now + rng_.uniform(1, n_) * rtt;  // freeze window in [1, N] RTTs
  ++granted_;
  return true;
}

bool MigrationMonitor::on_rtt(bool violated) {
  violations_ = violated ? violations_ + 1 : 0;
  if (violations_ >= need_) {
    violations_ = 0;
    return true;
  }
  return false;
}

bool MigrationMonitor::on_better(int better_path, Nanos now) {
  if (better_path < 0) {
    better_ = -1;
    return false;
  }
  if (better_path != better_) {
    better_ = better_path;
    better_since_ = now;
    return false;
  }
  if (now - better_since_ >= hold_) {
    better_ = -1;
    return true;
  }
  return false;
}

void MigrationMonitor::reset() {
  violations_ = 0;
  better_ = -1;
  better_since_ = 0;
}

}  // namespace ufab
