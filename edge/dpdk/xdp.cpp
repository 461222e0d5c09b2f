#include "edge/dpdk/xdp.hpp"

#include <cerrno>
#include <cstring>

#if UFAB_HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <unistd.h>

#include <vector>
#endif

namespace ufab::dpdk {

#if UFAB_HAVE_LIBBPF

int try_xdp_attach(unsigned ifindex) {
  // r0 = XDP_PASS; exit
  const bpf_insn prog[2] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  const int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "ufab_probe", "GPL", prog, 2, nullptr);
  if (fd < 0) return fd;  // libbpf 1.x returns -errno
  const int ifx = static_cast<int>(ifindex);
  int rc = bpf_xdp_attach(ifx, fd, XDP_FLAGS_UPDATE_IF_NOEXIST, nullptr);
  if (rc == 0) {
    bpf_xdp_attach_opts opts{};
    opts.sz = sizeof(opts);
    opts.old_prog_fd = fd;  // detach ours only
    bpf_xdp_detach(ifx, XDP_FLAGS_REPLACE, &opts);
  }
  close(fd);
  return rc < 0 ? rc : 0;
}

bool set_xdp_steer_port(unsigned ifindex, uint16_t port, std::string& why) {
  __u32 prog_id = 0;
  if (bpf_xdp_query_id(static_cast<int>(ifindex), 0, &prog_id) != 0 || prog_id == 0) {
    why = "no XDP program attached";
    return false;
  }
  const int prog_fd = bpf_prog_get_fd_by_id(prog_id);
  if (prog_fd < 0) {
    why = std::string("cannot open XDP program ") + std::to_string(prog_id) + ": " + std::strerror(-prog_fd);
    return false;
  }
  bpf_prog_info info{};
  __u32 len = sizeof(info);
  std::vector<__u32> ids;
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) == 0 && info.nr_map_ids > 0) {
    ids.resize(info.nr_map_ids);
    const __u32 n = info.nr_map_ids;
    info = bpf_prog_info{};
    info.nr_map_ids = n;
    info.map_ids = reinterpret_cast<__u64>(ids.data());
    len = sizeof(info);
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) ids.clear();
  }
  const std::string prog_name = info.name;
  close(prog_fd);
  for (const __u32 id : ids) {
    const int map_fd = bpf_map_get_fd_by_id(id);
    if (map_fd < 0) continue;
    bpf_map_info mi{};
    __u32 mlen = sizeof(mi);
    const bool ours = bpf_obj_get_info_by_fd(map_fd, &mi, &mlen) == 0 && std::strcmp(mi.name, "ufab_cfg") == 0;
    int rc = -1;
    if (ours) {
      const __u32 key = 0, value = port;
      rc = bpf_map_update_elem(map_fd, &key, &value, BPF_ANY);
    }
    close(map_fd);
    if (ours) {
      if (rc != 0) why = std::string("updating ufab_cfg failed: ") + std::strerror(errno);
      return rc == 0;
    }
  }
  why = "the attached XDP program '" + prog_name + "' has no ufab_cfg map (not edge/xdp/ufab_steer.bpf.o)";
  return false;
}

#else

int try_xdp_attach(unsigned) { return -ENOSYS; }
bool set_xdp_steer_port(unsigned, uint16_t, std::string& why) {
  why = "ufab was built without libbpf";
  return false;
}

#endif

std::string xdp_attach_hint(const std::string& iface, int err) {
  const int e = err < 0 ? -err : err;
  std::string s = std::strerror(e);
  switch (e) {
    case EBUSY:
    case EEXIST:
      return s + ": another XDP program is attached to " + iface + " ('ip link show dev " + iface +
             "' shows it; if it is stale, remove it with 'ip link set dev " + iface + " xdp off' or 'xdpgeneric off')";
    case EPERM:
    case EACCES:
      return s + ": XDP needs root (or CAP_NET_ADMIN, CAP_BPF and CAP_SYS_RESOURCE)";
    case EOPNOTSUPP:
    case EINVAL:
    case ERANGE:
      return s + ": the driver of " + iface + " refuses XDP here (MTU above what XDP supports, or offloads such as LRO " +
             "on: 'ip link set dev " + iface + " mtu 1500', 'ethtool -K " + iface + " lro off')";
    case ENOSYS:
      return "ufab was built without libbpf (install libbpf-dev and rebuild)";
    default:
      return s;
  }
}

}  // namespace ufab::dpdk
