// What a ufab DPDK program (ufab-edge, ufab-core, ufab-traffic) answers
// before the EAL starts, which would want memory, devices and lcores only
// to print a text: --help (-h) and --version. Looked for anywhere in argv,
// before or after the EAL's "--", as DPDK's own examples do for -h.
#pragma once

#include <string>

namespace ufab::dpdk {

enum class EarlyFlag { none, help, version };

// The first of --help / -h / --version in argv[1..], or none.
EarlyFlag early_flag(int argc, char** argv);

// "ufab-edge 0.1.0 (git 7b8c6981bcd9), DPDK 22.11.11": the project's version,
// the commit the binary was built from (git describe at build time; the
// word unknown outside a git tree) and the DPDK it is linked with.
std::string version_line(const char* program);

}  // namespace ufab::dpdk
