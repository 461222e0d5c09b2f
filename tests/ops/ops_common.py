"""Shared by the ops tests: a real ufab-edge on net_pcap ports fed from pcaps written here,
frames as a VM sends them, free TCP ports, and a unittest runner whose report goes to stdout.

Each test script gets the path of ufab-edge (empty when it was not built) as argv[1]; with no
ufab-edge the tests that need one skip with the reason printed (exit 77 when all do)."""

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)


def ip_bytes(a):
    return bytes(int(x) for x in a.split("."))


def checksum(b):
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def udp_frame(src, dst, sport, payload_len, src_mac="02:00:00:00:0a:01", dst_mac="02:00:00:00:0b:01"):
    """Ethernet/IPv4/UDP from src:sport to dst:9 with a zero payload."""
    udp = struct.pack("!HHHH", sport, 9, 8 + payload_len, 0) + bytes(payload_len)
    iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, ip_bytes(src), ip_bytes(dst))
    iph = iph[:10] + struct.pack("!H", checksum(iph)) + iph[12:]
    mac = lambda m: bytes(int(x, 16) for x in m.split(":"))  # noqa: E731
    return mac(dst_mac) + mac(src_mac) + b"\x08\x00" + iph + udp


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 0, i, len(fr), len(fr)) + fr)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Edge:
    """ufab-edge with `ports` net_pcap ports: port i reads in<i>.pcap once (frames[i]) and writes
    out<i>.pcap. It runs until stop(); its telemetry socket is that of `prefix`."""

    def __init__(self, exe, config_text, frames, tmpdir, prefix=None):
        self.exe, self.dir = exe, tmpdir
        self.prefix = prefix or f"ufabops{os.getpid()}x{int(time.monotonic() * 1000) % 100000}"
        self.config = os.path.join(tmpdir, "edge.yaml")
        with open(self.config, "w") as f:
            f.write(config_text)
        cmd = [exe, "--no-huge", "--no-pci", "-m", "256", "-l", "0", "--file-prefix", self.prefix,
               "--log-level", "error"]
        for i, fr in enumerate(frames):
            write_pcap(os.path.join(tmpdir, f"in{i}.pcap"), fr)
            cmd += ["--vdev", f"net_pcap{i},rx_pcap={tmpdir}/in{i}.pcap,tx_pcap={tmpdir}/out{i}.pcap"]
        cmd += ["--", "--config", self.config, "--stats-interval", "0"]
        self.out = open(os.path.join(tmpdir, "edge.out"), "w")
        self.err = open(os.path.join(tmpdir, "edge.err"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=self.err)
        from ufab_telemetry import socket_path
        self.socket = socket_path(self.prefix)

    def wait_ready(self, expect_rx, timeout=30):
        """Until the telemetry socket answers and /ufab/stats rx == expect_rx (all frames read)."""
        from ufab_telemetry import Client, TelemetryError
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ufab-edge exited with {self.proc.returncode}: {self.stderr()}")
            if os.path.exists(self.socket):
                try:
                    with Client(self.prefix) as c:
                        last = c.stats()
                        if last.get("rx") == expect_rx:
                            return last
                except TelemetryError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"ufab-edge not ready in {timeout} s (last stats {last}): {self.stderr()}")

    def stderr(self):
        self.err.flush()
        with open(self.err.name) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        self.err.close()
        for base in ("/var/run/dpdk", "/tmp/dpdk"):
            shutil.rmtree(os.path.join(base, self.prefix), ignore_errors=True)


_ARGS = list(sys.argv[1:])  # kept: run() clears sys.argv for unittest


def arg(i):
    return _ARGS[i] if len(_ARGS) > i else ""


def edge_exe():
    exe = arg(0)
    return exe if exe and os.access(exe, os.X_OK) else ""


def tmpdir(test):
    d = tempfile.mkdtemp(prefix="ufab_ops.")
    test.addCleanup(shutil.rmtree, d, True)
    return d


def run(all_need_edge=False):
    """Runs the module's tests with the report on stdout (meson keeps it); exit 77 when
    every test was skipped because there is no ufab-edge."""
    if all_need_edge and not edge_exe():
        print("SKIP: ufab-edge was not built (libdpdk or yaml-cpp not found)")
        sys.exit(77)
    sys.argv[1:] = []
    prog = unittest.main(module="__main__", exit=False,
                         testRunner=unittest.TextTestRunner(stream=sys.stdout, verbosity=2))
    r = prog.result
    sys.exit(0 if r.wasSuccessful() and r.testsRun > 0 else 1)
