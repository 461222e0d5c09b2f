// Checks of the EAL arguments against the machine, before rte_eal_init, so a
// bad environment fails with what is missing and how to fix it rather than
// an EAL error code or a silent hang:
//  - hugepages asked for (no --no-huge) but none free or hugetlbfs not mounted;
//  - a vhost-user socket that a client-mode port needs does not exist
//    (virtio-user without server=1, net_vhost with client=1); a server-mode
//    virtio-user port gets a note: the EAL waits there for its client;
//  - net_af_xdp: the interface or the xdp_prog= file missing; when XDP cannot
//    attach (another program, no permission, driver), the port falls back to
//    net_af_packet on the same interface, with a message saying so
//    (UFAB_AF_XDP_NO_FALLBACK=1 makes that an error instead).
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ufab::dpdk {

struct EnvironmentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Preflight {
  std::vector<std::string> args;   // the EAL arguments to use (argv[0] first), possibly rewritten
  std::vector<std::string> notes;  // what the operator should know (fallbacks, waits)
};

// argv: the whole command line (argv[0], EAL options, "--", app options).
// Throws EnvironmentError naming what is missing and how to fix it.
Preflight preflight_eal_args(std::span<char* const> argv);

// Read from the files of the running system; parameters for the tests.
struct HugepageState {
  long free_pages = 0;       // over every page size
  bool hugetlbfs_mounted = false;
};
HugepageState read_hugepage_state();

}  // namespace ufab::dpdk
