// A minimal check macro for the integration tests (plain executables, so
// that a skip is exit code 77 for meson).
#pragma once

#include <cstdio>

namespace ufab::itest {
inline int g_failures = 0;
}

#define ITEST_CHECK(cond, ...)                                            \
  do {                                                                    \
    if (!(cond)) {                                                        \
      ++::ufab::itest::g_failures;                                        \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
      std::printf(__VA_ARGS__);                                           \
      std::printf("\n");                                                  \
    }                                                                     \
  } while (0)
