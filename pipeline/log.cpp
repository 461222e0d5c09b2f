#include "pipeline/log.hpp"

namespace ufab::pipeline {

int g_logtype = RTE_LOGTYPE_USER1;

namespace {
// Registered before main (as RTE_LOG_REGISTER does); the EAL applies a
// --log-level pattern for it when it parses its options.
[[gnu::constructor]] void register_logtype() {
  const int t = rte_log_register_type_and_pick_level("ufab.edge", RTE_LOG_INFO);
  if (t >= 0) g_logtype = t;
}
}  // namespace

}  // namespace ufab::pipeline
