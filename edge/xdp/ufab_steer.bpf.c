// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// ufab host mode (AF_XDP): steer uFAB frames to ufab-edge, leave the rest to
// the kernel. A uFAB frame is Ethernet | IPv4 | UDP with the tunnel's
// destination port (docs/wire-format.md §1-2): tunnel data, probes,
// responses, finishes and their acks all use it. Such a frame is redirected
// to the AF_XDP socket of its rx queue (xsks_map, filled by DPDK's net_af_xdp
// when it is given this program with xdp_prog=); any other frame (ARP, IPv6,
// VLAN-tagged, other IP protocols, IPv4 fragments, other UDP ports) and a
// uFAB frame on a queue without a socket go to the kernel stack (XDP_PASS).
//
// The port is ufab_cfg[0] (written by ufab-edge from its configuration's
// udp_port); 0 means the default, 7341 (probe/wire.hpp kUdpPort).
// ufab_stats counts per CPU: [0] redirected, [1] passed.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define UFAB_DEFAULT_UDP_PORT 7341

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} xsks_map SEC(".maps");  // the name net_af_xdp looks up

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} ufab_cfg SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, __u64);
} ufab_stats SEC(".maps");

static __always_inline int count(__u32 what, int verdict) {
  __u64* n = bpf_map_lookup_elem(&ufab_stats, &what);
  if (n) *n += 1;
  return verdict;
}

static __always_inline int is_ufab(void* data, void* end) {
  struct ethhdr* eth = data;
  if ((void*)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)) return 0;
  struct iphdr* ip = (void*)(eth + 1);
  if ((void*)(ip + 1) > end || ip->version != 4 || ip->ihl < 5 || ip->protocol != IPPROTO_UDP) return 0;
  if (ip->frag_off & bpf_htons(0x3fff)) return 0;  // MF or an offset: not one whole uFAB frame
  struct udphdr* udp = (void*)ip + ip->ihl * 4;
  if ((void*)(udp + 1) > end) return 0;
  __u32 key = 0;
  __u32* cfg = bpf_map_lookup_elem(&ufab_cfg, &key);
  __u16 port = (cfg && *cfg) ? (__u16)*cfg : UFAB_DEFAULT_UDP_PORT;
  return udp->dest == bpf_htons(port);
}

SEC("xdp")
int ufab_steer(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* end = (void*)(long)ctx->data_end;
  if (!is_ufab(data, end)) return count(1, XDP_PASS);
  // No socket on this queue: the kernel gets it (the verdict bpf_redirect_map falls back to).
  const int verdict = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
  return count(verdict == XDP_REDIRECT ? 0 : 1, verdict);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
