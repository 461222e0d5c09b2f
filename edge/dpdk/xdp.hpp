// XDP helpers for host mode on AF_XDP (libbpf): can an XDP program attach to
// an interface, and the uFAB UDP port of edge/xdp/ufab_steer.bpf.c.
#pragma once

#include <cstdint>
#include <string>

namespace ufab::dpdk {

// Attaches a 2-instruction XDP_PASS program to ifindex the way net_af_xdp
// does (XDP_FLAGS_UPDATE_IF_NOEXIST) and detaches it again. 0 when XDP can
// attach, else -errno (EBUSY/EEXIST: a program is already attached; EPERM:
// no CAP_NET_ADMIN/CAP_BPF; EOPNOTSUPP/EINVAL: the driver or MTU refuses).
// -ENOSYS when ufab was built without libbpf.
int try_xdp_attach(unsigned ifindex);

// What to tell the operator about an attach error from try_xdp_attach.
std::string xdp_attach_hint(const std::string& iface, int err);

// Writes port into ufab_cfg[0] of the XDP program attached to ifindex (the
// ufab steering program). Returns false with why when no program is
// attached or it has no ufab_cfg map (e.g. libxdp's default program, which
// sends every frame to the socket).
bool set_xdp_steer_port(unsigned ifindex, uint16_t port, std::string& why);

}  // namespace ufab::dpdk
