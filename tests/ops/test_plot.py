"""deploy/ufab plot: charts from the demo's CSV (written here by the real ufab-demo) and from a
long-format CSV; every file produced is non-empty with a valid SVG or PNG header, one per
metric and format; the PNG's size is read from its IHDR; bad input names file:line and field.
Both back ends are run when present (matplotlib, gnuplot).

argv[1]: ufab-demo, argv[2]: ufab-traffic (empty when not built: their cases skip)."""

import os
import shutil
import struct
import subprocess
import time
import unittest

import ops_common as oc

UFAB = os.path.join(oc.ROOT, "deploy", "ufab")
PLOT = os.path.join(oc.TOOLS, "ufab_plot.py")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

LONG = "time_s,series,metric,value\n" + "".join(
    f"{i / 1000},tenant{t},rate_gbps,{g * min(1, i / 10)}\n{i / 1000},tenant{t},rtt_us,{20 + (i * 7 + t) % 13}\n"
    for i in range(40) for t, g in ((100, 4), (200, 2))) + "".join(f"{i / 1000},link0,queue_bytes,{i * 100 % 3000}\n"
                                                                for i in range(40))


def has_matplotlib():
    return subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3", "-c",
                           "import matplotlib"], capture_output=True).returncode == 0


class Plot(unittest.TestCase):
    def plot(self, *args):
        return subprocess.run([UFAB, "plot", *args], capture_output=True, text=True, timeout=120)

    def check_files(self, files, expect):
        self.assertEqual(sorted(os.path.basename(f) for f in files), sorted(expect))
        for f in files:
            data = open(f, "rb").read()
            self.assertGreater(len(data), 1000, f)
            if f.endswith(".png"):
                self.assertEqual(data[:8], PNG_MAGIC, f)
                w, h = struct.unpack(">II", data[16:24])
                self.assertGreater(w * h, 100 * 100, f)
            else:
                head = data[:400].decode("utf-8", "replace")
                self.assertIn("<svg", head, f)
                self.assertTrue(head.lstrip().startswith("<?xml") or head.lstrip().startswith("<svg"), f)
                self.assertTrue(data.rstrip().endswith(b"</svg>"), f)

    def run_long(self, backend):
        d = oc.tmpdir(self)
        csv = os.path.join(d, "run.csv")
        open(csv, "w").write(LONG)
        r = self.plot(csv, "--out", os.path.join(d, "charts"), "--backend", backend)
        self.assertEqual(r.returncode, 0, r.stderr)
        files = r.stdout.split()
        self.check_files(files, [f"run.{m}.{x}" for m in ("rate_gbps", "rtt_us", "queue_bytes") for x in ("svg", "png")])
        return files

    def test_long_format_matplotlib(self):
        if not has_matplotlib():
            self.skipTest("python3-matplotlib not installed")
        files = self.run_long("matplotlib")
        svg = open([f for f in files if f.endswith("rtt_us.svg")][0]).read()
        self.assertIn("CDF of rtt_us", svg)
        self.assertIn("tenant200", svg)

    def test_long_format_gnuplot(self):
        if not shutil.which("gnuplot"):
            self.skipTest("gnuplot not installed")
        files = self.run_long("gnuplot")
        svg = open([f for f in files if f.endswith("rtt_us.svg")][0]).read()
        self.assertIn("CDF of rtt_us", svg)
        self.assertIn("tenant200", svg)

    def test_demo_csv(self):
        demo = oc.arg(0)
        if not demo or not os.access(demo, os.X_OK):
            self.skipTest("ufab-demo was not built")
        d = oc.tmpdir(self)
        csv = os.path.join(d, "demo.csv")
        r = subprocess.run([demo, "--duration-ms", "10", "--step-ms", "1", "--csv", csv], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(open(csv).readline().strip(), "time_ms,pair,token,rate_gbps,window_bytes,queue_bytes")
        r = self.plot(csv, "--format", "svg,png")
        self.assertEqual(r.returncode, 0, r.stderr)
        files = r.stdout.split()
        self.assertTrue(all(os.path.dirname(f) == d for f in files), "default --out is the CSV's folder")
        self.check_files(files, [f"demo.{m}.{x}" for m in ("rate_gbps", "window_bytes", "token", "queue_bytes")
                                 for x in ("svg", "png")])

    def test_traffic_csv(self):
        # the header and row format of ufab-traffic --csv (deploy/traffic/tally.cpp)
        d = oc.tmpdir(self)
        csv = os.path.join(d, "sink.csv")
        rows = ["t_s,tenant,tx_bytes,rx_bytes,rx_pkts,tx_mbps,rx_mbps,lat_mean_us,lat_max_us"]
        for i in range(1, 21):
            for tenant, mbps in ((100, 200.0), (200, 300.0 if i % 4 else 0.0)):
                pkts = 0 if mbps == 0 else 100
                rows.append(f"{i * 0.01:.6f},{tenant},0,{int(mbps * 1e6 * 0.01 / 8)},{pkts},0.000,{mbps:.3f},"
                            f"{(12.5 + i) if pkts else 0:.2f},{(30 + i) if pkts else 0:.2f}")
        open(csv, "w").write("\n".join(rows) + "\n")
        r = self.plot(csv, "--out", d, "--format", "svg")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_files(r.stdout.split(), [f"sink.{m}.svg" for m in ("tx_mbps", "rx_mbps", "lat_mean_us", "lat_max_us")])
        svg = open(os.path.join(d, "sink.rx_mbps.svg")).read()
        self.assertIn("tenant100", svg)
        self.assertIn("tenant200", svg)

    def test_traffic_csv_from_ufab_traffic(self):
        exe = oc.arg(1)
        if not exe or not os.access(exe, os.X_OK):
            self.skipTest("ufab-traffic was not built (libdpdk or nlohmann-json not found)")
        d = oc.tmpdir(self)
        tag = f"{os.getpid()}"
        eal = ["--no-huge", "--no-pci", "-m", "256", "--log-level", "error"]
        sock = f"{d}/m.sock"
        sink = subprocess.Popen([exe, *eal, "-l", "0", "--file-prefix", "ufopssink" + tag, "--vdev",
                                 f"net_memif0,role=server,socket={sock}", "--", "sink", "--exit-after-idle-ms", "800",
                                 "--interval-ms", "50", "--csv", f"{d}/sink.csv"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while sock not in open("/proc/net/unix").read() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.3)  # the sink's port is started after it listens
            g = subprocess.run([exe, *eal, "-l", "1", "--file-prefix", "ufopsgen" + tag, "--vdev",
                                f"net_memif0,role=client,socket={sock}", "--", "gen", "--duration-ms", "400",
                                "--flow", "tenant=100,src=192.168.0.1,dst=192.168.0.2,rate=40M",
                                "--flow", "tenant=200,src=192.168.0.1,dst=192.168.0.2,rate=80M"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(g.returncode, 0, g.stderr)
            _, err = sink.communicate(timeout=60)
            self.assertEqual(sink.returncode, 0, err)
        finally:
            if sink.poll() is None:
                sink.kill()
                sink.wait()
            for base in ("/var/run/dpdk", "/tmp/dpdk"):
                for p in ("ufopssink" + tag, "ufopsgen" + tag):
                    shutil.rmtree(os.path.join(base, p), ignore_errors=True)
        csv = f"{d}/sink.csv"
        self.assertEqual(open(csv).readline().strip(),
                         "t_s,tenant,tx_bytes,rx_bytes,rx_pkts,tx_mbps,rx_mbps,lat_mean_us,lat_max_us")
        r = self.plot(csv, "--format", "svg")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_files(r.stdout.split(), [f"sink.{m}.svg" for m in ("tx_mbps", "rx_mbps", "lat_mean_us", "lat_max_us")])
        svg = open(os.path.join(d, "sink.rx_mbps.svg")).read()
        self.assertIn("tenant100", svg)
        self.assertIn("tenant200", svg)

    def test_bad_input_names_file_line_field(self):
        d = oc.tmpdir(self)
        cases = {"header.csv": ("a,b\n1,2\n", "header.csv:1: unknown header a,b"),
                 "value.csv": ("time_s,series,metric,value\n0,x,rate_gbps,1\n0.1,x,rate_gbps,zz\n",
                               "value.csv:3: value: not a number: 'zz'"),
                 "fields.csv": ("time_s,series,metric,value\n0,x,rate_gbps\n", "fields.csv:2: expected 4 fields"),
                 "empty.csv": ("time_s,series,metric,value\n", "empty.csv: no data rows")}
        for name, (text, msg) in cases.items():
            p = os.path.join(d, name)
            open(p, "w").write(text)
            r = self.plot(p, "--out", d)
            self.assertEqual(r.returncode, 2, name)
            self.assertIn(msg, r.stderr, name)
            self.assertEqual(r.stdout, "", "nothing written for bad input")
        r = self.plot(os.path.join(d, "missing.csv"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.csv: cannot read", r.stderr)
        r = self.plot(os.path.join(d, "value.csv"), "--format", "jpg")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--format: unknown jpg", r.stderr)


if __name__ == "__main__":
    oc.run()
