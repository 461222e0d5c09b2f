"""ufab-exporter end to end: a real ufab-edge (the frames of test_ufabctl, counted by hand), the
exporter reading its telemetry socket, and a real Prometheus server (Debian's `prometheus`) on
loopback scraping the exporter every second. Prometheus's HTTP API must return the values
ufab-edge reports itself (/ufab/stats, /ufab/tenants). Every query of the Grafana dashboard is
run against that Prometheus and every metric it names must be one the exporter serves.

argv[1]: ufab-edge (empty when not built)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import ops_common as oc
import test_ufabctl as sample

EXPORTER = os.path.join(oc.TOOLS, "ufab-exporter")
DASHBOARD = os.path.join(oc.ROOT, "deploy", "grafana", "ufab-dashboard.json")


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def wait_http(url, proc, what, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            return http_get(url, timeout=2)
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not answer {url} within {timeout} s")


class Exporter(unittest.TestCase):
    procs = []

    @classmethod
    def setUpClass(cls):
        exe = oc.edge_exe()
        if not exe:
            raise unittest.SkipTest("ufab-edge was not built (libdpdk or yaml-cpp not found)")
        cls.dir = tempfile.mkdtemp(prefix="ufab_ops_metrics.")
        cls.edge = oc.Edge(exe, sample.CONFIG, sample.FRAMES, cls.dir)
        cls.stats = cls.edge.wait_ready(sample.RX)
        cls.port = oc.free_port()
        cls.log = open(os.path.join(cls.dir, "exporter.err"), "w")
        cls.exporter = subprocess.Popen([sys.executable, EXPORTER, "--file-prefix", cls.edge.prefix,
                                         "--port", str(cls.port)], stdout=subprocess.DEVNULL, stderr=cls.log)
        cls.procs.append(cls.exporter)
        cls.url = f"http://127.0.0.1:{cls.port}"
        wait_http(cls.url + "/", cls.exporter, "ufab-exporter")
        cls.prom = None

    @classmethod
    def tearDownClass(cls):
        for p in cls.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        cls.procs.clear()
        if getattr(cls, "edge", None):
            cls.edge.stop()
            cls.log.close()
            shutil.rmtree(cls.dir, ignore_errors=True)

    def scrape(self):
        code, text = http_get(self.url + "/metrics")
        self.assertEqual(code, 200)
        return text

    @staticmethod
    def sample_value(text, name, **labels):
        for line in text.splitlines():
            m = re.match(r"^([a-z_]+)(\{(.*)\})? (\S+)$", line)
            if not m or m.group(1) != name:
                continue
            got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
            if all(got.get(k) == str(v) for k, v in labels.items()):
                return float(m.group(4))
        return None

    def test_exposition_matches_telemetry(self):
        text = self.scrape()
        v = lambda n, **l: self.sample_value(text, n, **l)  # noqa: E731
        self.assertEqual(v("ufab_up"), 1)
        self.assertEqual(v("ufab_rx_packets_total"), sample.RX)
        self.assertEqual(v("ufab_dropped_packets_total", reason="unknown_pair"), 2)
        self.assertEqual(v("ufab_dropped_packets_total", reason="not_ipv4"), 1)
        self.assertEqual(v("ufab_dropped_packets_total", reason="not_ufab"), 1)
        self.assertEqual(v("ufab_port_rx_packets_total", port="port0"), 33)
        # the link (net_pcap: up, polled) is a gauge and a counter of its own, not a drop reason
        self.assertEqual(v("ufab_port_link_up", port="port0"), 1)
        self.assertEqual(v("ufab_port_link_changes_total", port="port0"), 0)
        for key in ("link_up", "link_watch", "link_changes", "name", "removed"):
            self.assertIsNone(v("ufab_port_dropped_packets_total", port="port0", reason=key))
        # the port's device name is a label of its info gauge
        self.assertEqual(v("ufab_port_info", port="port0", device="net_pcap0"), 1)
        self.assertIsNone(v("ufab_port_removed", port="port0"))
        self.assertEqual(v("ufab_pairs"), sample.N_PAIRS)
        self.assertEqual(v("ufab_tenant_guarantee_bps", vni=100), 2e9)
        self.assertEqual(v("ufab_tenant_guarantee_bps", vni=200), 1e9)
        self.assertEqual(v("ufab_tenant_pairs", vni=100), 72)
        # tenant 200's class follows its guarantee (exactly the unit: no error); 100's is given
        self.assertEqual(v("ufab_tenant_weight_error", vni=200), 0)
        self.assertIsNone(v("ufab_tenant_weight_error", vni=100))
        self.assertEqual(v("ufab_path_active_pairs", host="hB", path=1), 0)
        # one fabric port (its link up): no uplink down, none seen going down
        self.assertEqual(v("ufab_path_uplink_down", host="hB", path=1), 0)
        self.assertEqual(v("ufab_uplink_failovers_total"), 0)
        self.assertEqual(v("ufab_host_base_rtt_seconds", host="hC"), 50e-6)
        self.assertEqual(v("ufab_pair_token", pair="pair_0x00010065", local="a1", remote="b1", vni=100), 2)
        self.assertEqual(v("ufab_conserved"), 1)
        self.assertEqual(len(re.findall(r"(?m)^ufab_pair_window_bytes\{", text)), sample.N_PAIRS)
        # finishes: none abandoned with one uplink that stays up; the given-up
        # ones (nothing acks here) exported for every pair
        self.assertEqual(len(re.findall(r"(?m)^ufab_pair_finishes_abandoned_total\{.*\} 0$", text)), sample.N_PAIRS)
        self.assertEqual(len(re.findall(r"(?m)^ufab_pair_finishes_given_up_total\{.*\} \d+$", text)), sample.N_PAIRS)
        # queue depth: the frames not yet sent stay queued (no responses come back)
        self.assertEqual(v("ufab_queued_packets") + v("ufab_encapsulated_packets_total"), 35)

    def test_promtool_accepts_the_exposition(self):
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool not installed (Debian package prometheus)")
        r = subprocess.run([promtool, "check", "metrics"], input=self.scrape(), capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_other_paths_404(self):
        with self.assertRaises(urllib.error.HTTPError) as e:
            http_get(self.url + "/nothing")
        self.assertEqual(e.exception.code, 404)

    def test_edge_down_is_ufab_up_0(self):
        r = subprocess.run([sys.executable, EXPORTER, "--once", "--file-prefix", "ufab_no_such_prefix"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("\nufab_up 0\n", r.stdout)
        self.assertIn("is ufab-edge running with --file-prefix ufab_no_such_prefix?", r.stderr)

    def test_prometheus_scrapes_the_edge_counters(self):
        prom = shutil.which("prometheus")
        if not prom:
            self.skipTest("prometheus not installed (Debian package prometheus; deploy/ufab installs it)")
        pport = oc.free_port()
        cfg = os.path.join(self.dir, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    f"scrape_configs:\n  - job_name: ufab\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{self.port}']\n")
        plog = open(os.path.join(self.dir, "prometheus.log"), "w")
        p = subprocess.Popen([prom, f"--config.file={cfg}", f"--storage.tsdb.path={self.dir}/tsdb",
                              f"--web.listen-address=127.0.0.1:{pport}", "--log.level=warn"],
                             stdout=plog, stderr=plog)
        self.procs.append(p)
        api = f"http://127.0.0.1:{pport}/api/v1/query?query="

        def query(expr):
            code, body = http_get(api + urllib.parse.quote(expr))
            r = json.loads(body)
            self.assertEqual(r["status"], "success", body)
            return r["data"]["result"]

        wait_http(f"http://127.0.0.1:{pport}/-/ready", p, "prometheus", timeout=60)
        deadline, res = time.monotonic() + 60, []
        while time.monotonic() < deadline and not res:
            res = query("ufab_rx_packets_total")
            if not res:
                time.sleep(0.5)
        self.assertTrue(res, "prometheus never stored ufab_rx_packets_total (target down?)")
        from ufab_telemetry import Client
        with Client(self.edge.prefix) as c:
            stats, tenants = c.stats(), c.tenants()
        # the value Prometheus stored is ufab-edge's own counter (and the frames sent)
        self.assertEqual(float(res[0]["value"][1]), stats["rx"])
        self.assertEqual(stats["rx"], sample.RX)
        drop = query('ufab_dropped_packets_total{reason="unknown_pair"}')
        self.assertEqual(float(drop[0]["value"][1]), stats["drop_unknown_pair"])
        g = query('ufab_tenant_guarantee_bps{vni="100"}')
        self.assertEqual(float(g[0]["value"][1]), tenants["tenant100"]["guarantee_gbps"] * 1e9)
        self.assertEqual(query('up{job="ufab"}')[0]["value"][1], "1")
        self.assertEqual(res[0]["metric"]["job"], "ufab")

        # Every dashboard query parses and runs on this Prometheus.
        dash = json.load(open(DASHBOARD))
        exprs = [t["expr"] for panel in dash["panels"] for t in panel["targets"]]
        self.assertGreaterEqual(len(exprs), 10)
        for e in exprs:
            query(e.replace("$instance", ".*"))
        p.terminate()
        p.wait(20)
        plog.close()

    def test_dashboard_names_only_served_metrics(self):
        dash = json.load(open(DASHBOARD))
        names = {n for panel in dash["panels"] for t in panel["targets"] for n in re.findall(r"\bufab_[a-z_]+", t["expr"])}
        served = set(re.findall(r"(?m)^# TYPE (ufab_[a-z_]+) ", self.scrape()))
        from ufab_telemetry import Client
        with Client(self.edge.prefix) as c:
            has_workers = "/ufab/workers" in c.commands()
        missing = {n for n in names - served if has_workers or not n.startswith("ufab_worker_")}
        self.assertEqual(missing, set(), "the dashboard names metrics the exporter does not serve")
        for what in ("ufab_tenant_guarantee_bps", "ufab_tenant_achieved_bps", "ufab_pair_window_bytes",
                     "ufab_migrations_total", "ufab_probe_overhead_ratio", "ufab_dropped_packets_total",
                     "ufab_queued_packets"):
            self.assertIn(what, names)


if __name__ == "__main__":
    oc.run()
