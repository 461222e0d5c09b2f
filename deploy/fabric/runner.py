"""Starts the emulated fabric's processes (ufab-core switches, ufab-edge
hosts, one ufab-traffic for every VM), plays the scenario's events, stops
everything and collects the outputs. Real packets through real processes.

Start order (a memif client only connects to a started server):
  ufab-traffic (server of every vNIC), S0, the cores, S1 (servers towards
  the edges; S1 and the cores are clients on the paths), then all edges at
  once (clients on both sides, so no edge waits for a link).
Every process gets the same scenario time 0 (--t0-ns, CLOCK_MONOTONIC).
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

from topology import mbps_code

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from ufab_telemetry import Client, TelemetryError  # noqa: E402


def set_timer_slack(ns):
    """nanosleep wakes up within the timer slack (default 50 us). The children
    inherit it: a 1 us slack lets the poll loops sleep precisely."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(29, ctypes.c_ulong(ns), 0, 0, 0)  # PR_SET_TIMERSLACK
    except OSError:
        pass


PRIORITY = {"nice": -19}


def _priority():
    """The fabric's processes stand in for hardware: on a shared 2-vCPU host
    they run at the highest CFS weight (nice -19, root only; ignored
    otherwise), so a build next to them does not stall a link for tens of ms.
    Each process starts its own session, and with CONFIG_SCHED_AUTOGROUP
    (Debian's default) a session is a scheduling group of its own whose
    weight is the group's nice, not the process's: set both."""
    try:
        os.nice(PRIORITY["nice"])
    except OSError:
        pass
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(PRIORITY["nice"]))
    except OSError:
        pass


class Proc:
    def __init__(self, name, argv, workdir, prefix):
        self.name, self.argv, self.prefix = name, argv, prefix
        self.out = f"{workdir}/{name}.out"
        self.err = f"{workdir}/{name}.err"
        with open(self.out, "w") as o, open(self.err, "w") as e:
            self.p = subprocess.Popen(argv, stdout=o, stderr=e, start_new_session=True, preexec_fn=_priority)

    def text(self):
        with open(self.out) as f:
            return f.read()

    def errtext(self):
        with open(self.err) as f:
            return f.read()


def eal(prefix, lcore):
    return ["--no-huge", "--no-pci", "-m", "256", "-l", str(lcore), "--file-prefix", prefix, "--log-level", "error"]


def wait_listen(path, deadline_s, proc):
    t_end = time.monotonic() + deadline_s
    while time.monotonic() < t_end:
        if proc.p.poll() is not None:
            raise RuntimeError(f"{proc.name} exited with {proc.p.returncode}: {proc.errtext().strip()[-400:]}")
        with open("/proc/net/unix") as f:
            if path in f.read():
                return
        time.sleep(0.02)
    raise RuntimeError(f"{proc.name} does not listen on {path} after {deadline_s} s")


def wait_text(proc, needle, deadline_s):
    t_end = time.monotonic() + deadline_s
    while time.monotonic() < t_end:
        if needle in proc.text():
            return
        if proc.p.poll() is not None:
            raise RuntimeError(f"{proc.name} exited with {proc.p.returncode}: {proc.errtext().strip()[-400:]}")
        time.sleep(0.02)
    raise RuntimeError(f"{proc.name}: no '{needle}' after {deadline_s} s")


class Run:
    def __init__(self, fab, bins, workdir, budget_s=6.0, tag=None):
        self.fab, self.bins, self.dir = fab, bins, workdir
        self.tag = tag or str(os.getpid())
        self.procs = {}
        self.budget_s = budget_s
        self.lcore = 0
        self.watch = None  # host_timing.py

    def _next_lcore(self):
        self.lcore ^= 1
        return self.lcore

    def _prefix(self, name):
        return f"uf{name}{self.tag}"

    def _spawn(self, name, exe, vdevs, app_args):
        prefix = self._prefix(name)
        argv = [exe] + eal(prefix, self._next_lcore())
        for v in vdevs:
            argv += ["--vdev", v]
        argv += ["--"] + app_args
        self.procs[name] = Proc(name, argv, self.dir, prefix)
        return self.procs[name]

    def edge_nap_args(self):
        """ufab-edge's naps when idle (--idle-nap-us, --queued-nap-us) from
        scale.edge_idle_nap_us / edge_queued_nap_us; a key not set leaves
        the edge's own default."""
        sc = self.fab.sc["scale"]
        args = []
        for key, opt in (("edge_idle_nap_us", "--idle-nap-us"), ("edge_queued_nap_us", "--queued-nap-us")):
            if key in sc:
                args += [opt, str(int(sc[key]))]
        return args

    def switch_args(self, n_ports, caps, name):
        sc = self.fab.sc["scale"]
        args = ["--port-caps", ",".join(caps), "--delay-us", str(int(self.fab.delay_us())),
                "--queue-bytes", str(int(sc.get("queue_bytes", 262144))),
                "--tx-shift", str(int(sc.get("tx_shift", 8))), "--burst-us", str(int(sc.get("burst_us", 500))),
                "--stats-interval", "0", "--t0-ns", str(self.t0), "--watch-links",
                "--queue-log", f"{self.dir}/{name}_queue.csv", "--sample-ms", str(sc.get("sample_ms", 10)),
                "--link-wait-ms", "0"]
        for ev in self.fab.sc.get("events", []):
            if "link_down" in ev:
                k = int(ev["link_down"])
                if name == "S0":
                    args += ["--event", f"{int(ev['at_ms'])}:{self.fab.n_send + k}:down"]
                if name == "S1":
                    args += ["--event", f"{int(ev['at_ms'])}:{self.fab.n_recv + k}:down"]
        return args

    def start(self):
        fab = self.fab
        set_timer_slack(int(fab.sc["scale"].get("timer_slack_ns", 50_000)))
        t_launch = time.monotonic_ns()
        self.t0 = t_launch + int(self.budget_s * 1e9)
        # The host-timing watch (host_timing.py), at the processes' priority.
        self.watch = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "host_timing.py"),
             self.host_timing_csv(), str(self.t0), str(fab.sc["scale"].get("sample_ms", 10))],
            start_new_session=True, preexec_fn=_priority)
        link = mbps_code(fab.link_mbps())
        access = mbps_code(int(fab.sc["scale"].get("access_mbps", 1000)))
        recv = mbps_code(int(fab.sc["scale"].get("recv_access_mbps", fab.sc["scale"].get("access_mbps", 1000))))
        sc = fab.sc
        # The VMs first: one ufab-traffic, server of every vNIC; scenario time
        # 0 is fixed now (t0 = launch + budget), so it can start before the rest.
        ports = fab.traffic_ports()
        vd = [f"net_memif{i},role=server,socket={fab.vnic_sock(h, v)}" for i, (h, v) in enumerate(ports)]
        args = ["gen", "--t0-ns", str(self.t0), "--duration-ms", str(int(sc["duration_ms"]) + 300),
                "--interval-ms", str(sc["scale"].get("sample_ms", 10)), "--json", f"{self.dir}/traffic.json",
                "--csv", f"{self.dir}/traffic.csv", "--mbufs", "16383", "--link-wait-ms", "0"]
        for fl in flows(sc, fab, ports):
            args += ["--flow", fl]
        tr = self._spawn("traffic", self.bins["traffic"], vd, args)
        # S0: sender edges, then the paths (server on all).
        vd = [f"net_memif{i},role=server,socket={fab.access_sock(h)}"
              for i, h in enumerate(sc["topology"]["senders"])]
        vd += [f"net_memif{fab.n_send + k},role=server,socket={fab.path_sock(k, 'a')}" for k in range(fab.n_paths)]
        # Towards the edges the switch's port is the edge's downlink: shaped at the access rate.
        caps = [access] * fab.n_send + [link] * fab.n_paths
        p = self._spawn("S0", self.bins["core"], vd, self.switch_args(len(vd), caps, "S0"))
        wait_listen(fab.path_sock(fab.n_paths - 1, "a"), 20, p)
        if fab.cores:
            cores = []
            for k in range(fab.n_paths):
                vd = [f"net_memif0,role=client,socket={fab.path_sock(k, 'a')}",
                      f"net_memif1,role=server,socket={fab.path_sock(k, 'b')}"]
                cores.append(self._spawn(f"C{k}", self.bins["core"], vd, self.switch_args(2, [link, link], f"C{k}")))
            for k, c in enumerate(cores):
                wait_listen(fab.path_sock(k, "b"), 20, c)
        # S1: receiver edges (server), paths (client).
        vd = [f"net_memif{i},role=server,socket={fab.access_sock(h)}"
              for i, h in enumerate(sc["topology"]["receivers"])]
        side = "b" if fab.cores else "a"
        vd += [f"net_memif{fab.n_recv + k},role=client,socket={fab.path_sock(k, side)}" for k in range(fab.n_paths)]
        caps = [recv] * fab.n_recv + [link] * fab.n_paths
        p = self._spawn("S1", self.bins["core"], vd, self.switch_args(len(vd), caps, "S1"))
        wait_listen(fab.access_sock(sc["topology"]["receivers"][-1]), 20, p)
        for h in fab.hosts.values():
            wait_listen(fab.vnic_sock(h.name, h.tenants[-1]), 20, tr)
        time.sleep(0.2)
        # Edges, all at once: clients of ufab-traffic (vNICs) and of their switch (fabric port).
        edges = []
        for h in fab.hosts.values():
            with open(f"{self.dir}/{h.name}.yaml", "w") as f:
                f.write(fab.edge_yaml(h.name))
            vd = [f"net_memif{i},role=client,socket={fab.vnic_sock(h.name, v)}" for i, v in enumerate(h.tenants)]
            vd.append(f"net_memif{len(h.tenants)},role=client,socket={fab.access_sock(h.name)}")
            edges.append(self._spawn(h.name, self.bins["edge"], vd,
                                     ["--config", f"{self.dir}/{h.name}.yaml", "--stats-interval", "0"]
                                     + self.edge_nap_args()))
        for p in edges:
            wait_text(p, "VM-pairs", 30)
        self.startup_s = (time.monotonic_ns() - t_launch) / 1e9
        if time.monotonic_ns() > self.t0 - 100_000_000:
            raise RuntimeError(f"start-up took {self.startup_s:.1f} s, more than the {self.budget_s} s budget "
                               f"(raise --startup-budget)")

    def all_pairs(self):
        """{host: {pair name: fields}} from every running edge's telemetry,
        every page (tools/ufab_telemetry.py, as ufabctl reads them)."""
        out = {}
        for h in self.fab.hosts:
            pr = self.procs.get(h)
            out[h] = {}
            if pr is None or pr.p.poll() is not None:
                continue
            try:
                with Client(pr.prefix, timeout=2) as c:
                    out[h] = c.pairs()
            except (TelemetryError, OSError, ValueError):
                pass
        return out

    def play(self):
        """Kills at their times and a snapshot of every edge's pairs (their
        active paths) at the end of each phase, then waits for ufab-traffic
        to finish."""
        sc = self.fab.sc
        timeline = [(int(ev["at_ms"]), "kill", ev["kill"]) for ev in sc.get("events", []) if "kill" in ev]
        timeline += [(int(ph["to_ms"]) - 50, "snapshot", ph["name"]) for ph in sc.get("phases", [])]
        self.phase_pairs = {}
        for at_ms, what, arg in sorted(timeline, key=lambda e: e[0]):
            delay = (self.t0 + at_ms * 1_000_000 - time.monotonic_ns()) / 1e9
            if delay > 0:
                time.sleep(delay)
            if what == "kill":
                self.procs[arg].p.send_signal(signal.SIGKILL)
            else:
                self.phase_pairs[arg] = self.all_pairs()
        tr = self.procs["traffic"]
        tr.p.wait(timeout=int(sc["duration_ms"]) / 1000 + 30)
        # Migrations and per-pair state from the edges' telemetry before they stop.
        self.pairs = self.all_pairs()

    def host_timing_csv(self):
        return f"{self.dir}/host_timing.csv"

    def stop(self):
        if self.watch is not None and self.watch.poll() is None:
            self.watch.send_signal(signal.SIGTERM)
            try:
                self.watch.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.watch.kill()
        for name, pr in self.procs.items():
            if pr.p.poll() is None:
                pr.p.send_signal(signal.SIGTERM)
        for name, pr in self.procs.items():
            try:
                pr.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pr.p.kill()
                pr.p.wait()
        for pr in self.procs.values():
            for base in ("/var/run/dpdk/", "/tmp/dpdk/"):
                subprocess.run(["rm", "-rf", base + pr.prefix], check=False)


def flows(sc, fab, ports):
    """ufab-traffic --flow specs from the scenario's tenants."""
    out = []
    for t in sc["tenants"]:
        for i, f in enumerate(t.get("flows", [])):
            src, dst = fab.vms[f["from"]], fab.vms[f["to"]]
            port = ports.index((src.host, src.tenant))
            spec = [f"port={port}", f"tenant={t['vni']}", f"src={src.ip}", f"dst={dst.ip}",
                    f"rate={float(f['rate_mbps'])}M", f"size={fab.frame_bytes()}",
                    f"pattern={f.get('pattern', 'constant')}", f"start_ms={f.get('start_ms', 0)}",
                    f"stop_ms={f.get('stop_ms', sc['duration_ms'])}"]
            for k in ("on_ms", "off_ms", "period_ms", "burst_bytes"):
                if k in f:
                    spec.append(f"{k}={f[k]}")
            out.append(",".join(spec))
    return out
