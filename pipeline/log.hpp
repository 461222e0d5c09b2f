// ufab-edge's rte_log type "ufab.edge": `--log-level=ufab.edge:debug` shows
// the debug lines (layout, dispatch drops, reloads, the stop sequence).
#pragma once

#include <rte_log.h>

namespace ufab::pipeline {
extern int g_logtype;
}

#define UFAB_LOG(level, fmt, ...) \
  rte_log(RTE_LOG_##level, ::ufab::pipeline::g_logtype, "ufab.edge: " fmt "\n" __VA_OPT__(, ) __VA_ARGS__)
