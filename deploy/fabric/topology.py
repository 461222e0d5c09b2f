"""The emulated fabric's shape: who connects to whom, on which DPDK port,
and the ufab-edge YAML of every host. Pure Python (no processes).

Topology (scenario key `topology`):

    sender edges ── S0 ══ k parallel paths ══ S1 ── receiver edges
                         (cores: true puts a core switch Ck on path k:
                          S0 ── Ck ── S1, so a path can lose its switch)

All VMs of a host share one vNIC per tenant (the edge names a VM by its port
and source IP); one ufab-traffic process is every VM of every host.

Port numbering (the order of the --vdev's):
  S0: 0..nS-1 sender edges, nS..nS+k-1 paths          (server on all)
  S1: 0..nR-1 receiver edges, nR..nR+k-1 paths        (server to edges, client on paths)
  Ck: 0 towards S0 (client), 1 towards S1 (server)
  edge: 0..t-1 its tenants' vNICs (client of ufab-traffic), t fabric (client of S0/S1)
"""

from dataclasses import dataclass, field


@dataclass
class Vm:
    name: str
    tenant: int  # vni
    host: str
    id: int = 0
    ip: str = ""


@dataclass
class Host:
    name: str
    index: int
    side: str  # "send" (on S0) or "recv" (on S1)
    port_on_switch: int = 0
    ip: str = ""
    mac: str = ""
    tenants: list = field(default_factory=list)  # vnis with a VM here, in vNIC port order


def mbps_code(mbps):
    """ufab-core's --port-caps spelling; only the wire's capacity codes exist."""
    allowed = {10: "10M", 100: "100M", 1000: "1G", 2500: "2.5G", 10000: "10G"}
    if mbps not in allowed:
        raise ValueError(f"link capacity {mbps} Mb/s has no capacity code (use one of {sorted(allowed)})")
    return allowed[mbps]


class Fabric:
    def __init__(self, sc, workdir):
        self.sc = sc
        self.dir = workdir
        topo = sc["topology"]
        self.n_paths = int(topo.get("paths", 2))
        self.cores = bool(topo.get("cores", False))
        self.hosts = {}
        for i, h in enumerate(topo["senders"]):
            self.hosts[h] = Host(h, len(self.hosts), "send", i)
        for i, h in enumerate(topo["receivers"]):
            self.hosts[h] = Host(h, len(self.hosts), "recv", i)
        for h in self.hosts.values():
            h.ip = f"10.0.0.{h.index + 1}"
            h.mac = f"02:00:00:00:00:{h.index + 1:02x}"
        # A light "ping" tenant measures the base RTT: its frames meet no edge
        # backlog, so its fastest one-way latency is the fabric's base.
        ping = float(sc["scale"].get("ping_mbps", 0))
        if ping > 0 and not any(t.get("name") == "ping" for t in sc["tenants"]):
            s0, r0 = topo["senders"][0], topo["receivers"][0]
            g = float(sc["scale"].get("ping_guarantee_mbps", sc["scale"]["unit_mbps"]))
            sc["tenants"].append({"name": "ping", "vni": 1, "guarantee_mbps": g,
                                  "vms": [{"name": "ping_s", "host": s0}, {"name": "ping_r", "host": r0}],
                                  "flows": [{"from": "ping_s", "to": "ping_r", "rate_mbps": ping}],
                                  "probe": True})
        self.vms = {}
        next_id = 1
        for ti, t in enumerate(sc["tenants"]):
            for vi, v in enumerate(t["vms"]):
                if v["host"] not in self.hosts:
                    raise ValueError(f"tenant {t['vni']}: VM {v['name']} on unknown host {v['host']}")
                vm = Vm(v["name"], int(t["vni"]), v["host"], next_id, f"192.168.{ti}.{vi + 1}")
                next_id += 1
                if vm.name in self.vms:
                    raise ValueError(f"duplicate VM name {vm.name}")
                self.vms[vm.name] = vm
                host = self.hosts[vm.host]
                if vm.tenant not in host.tenants:
                    host.tenants.append(vm.tenant)
        self.n_send = len(topo["senders"])
        self.n_recv = len(topo["receivers"])

    # ---- scale ----
    def hops(self):
        return 3 if self.cores else 2

    def link_mbps(self):
        return int(self.sc["scale"]["link_mbps"])

    def delay_us(self):
        return float(self.sc["scale"]["link_delay_us"])

    def frame_bytes(self):
        return int(self.sc["scale"].get("frame_bytes", 1000))

    def serialization_us(self, nbytes):
        return nbytes * 8 / self.link_mbps()

    def hop_rates_mbps(self):
        """Egress rate of each hop forward (S0 uplink, [core], S1 -> receiver)
        and backward (S1 uplink, [core], S0 -> sender)."""
        sc = self.sc["scale"]
        link, acc = self.link_mbps(), float(sc.get("access_mbps", 1000))
        recv = float(sc.get("recv_access_mbps", acc))
        mid = [link] if self.cores else []
        return [link] + mid + [recv], [link] + mid + [acc]

    def encap_bytes(self):
        """What uFAB adds to a VM frame on the fabric (docs/wire-format.md):
        outer Ethernet/IPv4/UDP 42 B, shim 8 B, source route 2 + 2 B a hop.
        The edges count a frame's bytes with it (windows, tokens, in-flight)
        and so do the switches (tx_l, the links' rates)."""
        return 42 + 8 + 2 + 2 * self.hops()

    def base_rtt_us(self):
        """Configured T: propagation both ways on every hop, plus the
        serialization of one data frame on each hop forward and of a probe
        response on each hop back."""
        h = self.hops()
        data = self.frame_bytes() + self.encap_bytes()
        probe = self.encap_bytes() + 32 + 16 * h
        fwd, back = self.hop_rates_mbps()
        return 2 * h * self.delay_us() + sum(data * 8 / r for r in fwd) + sum(probe * 8 / r for r in back)

    def edge_base_rtt_us(self):
        """The T the edges are configured with: the base RTT, times
        scale.edge_rtt_factor (1 unless set; _scale.yaml sets 1.1: the
        processes' polling and the host's late wake-ups are part of every
        round trip here, queue or not)."""
        return self.base_rtt_us() * float(self.sc["scale"].get("edge_rtt_factor", 1))

    def inflight_bound_bdp(self):
        """§3.4's bound on a link's in-flight bytes, 3 C_l T_max, at the T
        the edges use, in BDPs of the computed T (bdp_bytes): the `queue`
        check's bound."""
        return 3 * self.edge_base_rtt_us() / self.base_rtt_us()

    def one_way_base_us(self):
        """A data frame's one-way base: delay and serialization per hop."""
        h = self.hops()
        data = self.frame_bytes() + self.encap_bytes()
        fwd, _ = self.hop_rates_mbps()
        return h * self.delay_us() + sum(data * 8 / r for r in fwd)

    def bdp_bytes(self):
        return self.link_mbps() * 1e6 / 8 * self.base_rtt_us() / 1e6

    # ---- sockets ----
    def sock(self, name):
        return f"{self.dir}/{name}.sock"

    def vnic_sock(self, host, vni):
        return self.sock(f"vm-{host}-{vni}")

    def access_sock(self, host):
        return self.sock(f"acc-{host}")

    def path_sock(self, k, side):
        # side "a": S0 <-> (Ck or S1); side "b": Ck <-> S1 (cores only)
        return self.sock(f"path{k}{side}")

    # ---- routes ----
    def labels(self, src, dst, k):
        """Source route (egress port per hop) from host src to host dst over path k."""
        s, d = self.hosts[src], self.hosts[dst]
        if s.side == d.side:
            raise ValueError(f"{src} -> {dst}: both on the same switch (not in this topology)")
        if s.side == "send":  # S0 -> path k -> S1 -> d
            up = self.n_send + k
            return [up, 1, d.port_on_switch] if self.cores else [up, d.port_on_switch]
        up = self.n_recv + k  # S1 -> path k -> S0 -> d
        return [up, 0, d.port_on_switch] if self.cores else [up, d.port_on_switch]

    def reply_path_index(self):
        # Responses travel on the last path: the scenarios fail path 0 or 1 first.
        return int(self.sc["topology"].get("reply_path", self.n_paths - 1))

    # ---- ufab-edge config ----
    def edge_yaml(self, host):
        sc = self.sc["scale"]
        h = self.hosts[host]
        out = [
            "edge:",
            f"  fabric_port: {len(h.tenants)}",
            f"  ip: {h.ip}",
            f"  mac: \"{h.mac}\"",
            # The edge's NIC rate: its access link's capacity (pipeline/fabric_pacer.hpp).
            f"  fabric_rate_mbps: {int(sc.get('edge_nic_mbps', sc.get('access_mbps', 100)))}",
            "params:",
            f"  unit_bw_gbps: {float(sc['unit_mbps']) / 1000}",
            f"  probe_every_bytes: {int(sc.get('probe_every_bytes', 4096))}",
            f"  token_period_us: {int(sc['token_period_us'])}",
            f"  idle_finish_ms: {int(sc.get('idle_finish_ms', 100))}",
            f"  queue_capacity: {int(sc.get('edge_queue_pkts', 64))}",
            # Each pair paced at w / T (sched/pair_pacing.hpp): the access link is 10x the fabric's.
            f"  pair_pacing: {'true' if sc.get('pair_pacing', True) else 'false'}",
            f"  pair_pacing_depth_us: {int(sc.get('pair_pacing_depth_us', 2000))}",
            # Acks (bytes sent one RTT ago) moved every ms, not once per probe RTT.
            f"  ack_sweep_us: {int(sc.get('ack_sweep_us', 1000))}",
            # With acks moved by time, probes follow the paper's rule alone: one per L_w bytes.
            f"  probe_on_window_full: {'true' if sc.get('probe_on_window_full', False) else 'false'}",
            "tenants:",
        ]
        for t in self.sc["tenants"]:
            if int(t["vni"]) in h.tenants:
                out.append(f"  - {{vni: {t['vni']}, guarantee_gbps: {float(t['guarantee_mbps']) / 1000}, "
                           f"weight_class: {int(t.get('weight_class', 0))}}}")
        out.append("vms:")
        for vm in self.vms.values():
            if vm.host == host:
                port = h.tenants.index(vm.tenant)
                out.append(f"  - {{name: {vm.name}, id: {vm.id}, tenant: {vm.tenant}, "
                           f"mac: \"02:00:00:00:{vm.id >> 8:02x}:{vm.id & 0xff:02x}\", ip: {vm.ip}, port: {port}}}")
        remotes = [vm for vm in self.vms.values() if vm.host != host and vm.tenant in h.tenants
                   and self.hosts[vm.host].side != h.side]
        peers = sorted({vm.host for vm in remotes}, key=lambda n: self.hosts[n].index)
        out.append("hosts:")
        if not peers:
            out[-1] = "hosts: []"
        for p in peers:
            ph = self.hosts[p]
            out += [f"  - name: {p}", f"    ip: {ph.ip}", f"    mac: \"{ph.mac}\"",
                    f"    base_rtt_us: {self.edge_base_rtt_us():.1f}", "    paths:"]
            for k in range(self.n_paths):
                out.append(f"      - {self.labels(host, p, k)}")
            out.append(f"    reply_path: {self.labels(host, p, self.reply_path_index())}")
        out.append("remote_vms:" if remotes else "remote_vms: []")
        for vm in remotes:
            out.append(f"  - {{name: {vm.name}, id: {vm.id}, tenant: {vm.tenant}, ip: {vm.ip}, host: {vm.host}}}")
        return "\n".join(out) + "\n"

    # ---- ufab-traffic ports ----
    def traffic_ports(self):
        """[(host, vni)] in DPDK port order of the traffic process."""
        return [(h.name, v) for h in self.hosts.values() for v in h.tenants]
