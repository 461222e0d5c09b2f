"""ufabctl against a real ufab-edge (one edge on net_pcap ports, frames counted by hand), and
its argument/format handling against a fake telemetry socket.

Real ufab-edge: two tenants, 74 VM-pairs (72 of tenant 100, so /ufab/pairs pages), 39 frames
in: 30 of tenant 100 and 5 of tenant 200 that classify, 2 from an unknown VM (unknown_pair),
1 non-IPv4 (not_ipv4), 1 non-uFAB frame on the fabric port (not_ufab). The commands of the
telemetry contract (/ufab/pair, /ufab/tenant_set, /ufab/path_drain, /ufab/reload,
/ufab/workers) run against the real ufab-edge when it has them and skip, with the reason
printed, when it does not.

FakeTelemetry: a SOCK_SEQPACKET server speaking the DPDK v2 protocol with canned replies. It
checks ONLY what ufabctl sends (command text, parameters) and how it prints replies and
errors -- not ufab-edge's behaviour.

argv[1]: ufab-edge (empty when not built)."""

import json
import os
import socket
import subprocess
import sys
import threading
import unittest

import ops_common as oc

UFABCTL = os.path.join(oc.TOOLS, "ufabctl")

CONFIG = """edge:
  fabric_port: 2
  ip: 10.0.0.1
  mac: 02:00:00:00:00:01
tenants:
  - {vni: 100, guarantee_gbps: 2, weight_class: 1}
  - {vni: 200, guarantee_gbps: 1}
vms:
""" + "".join(f'  - {{name: a{i}, id: {i}, tenant: 100, mac: "02:00:00:00:0a:{i:02x}", ip: 192.168.0.{i}, port: 0}}\n'
              for i in range(1, 10)) + """  - {name: c1, id: 10, tenant: 200, mac: "02:00:00:00:0c:01", ip: 192.168.0.1, port: 1}
hosts:
  - name: hB
    ip: 10.0.0.2
    mac: 02:00:00:00:00:02
    base_rtt_us: 20
    paths: [[1], {labels: [2, 1], udp_src_port: 49153}]
  - name: hC
    ip: 10.0.0.3
    mac: 02:00:00:00:00:03
    base_rtt_us: 50
    paths: [[3]]
remote_vms:
""" + "".join(f"  - {{name: b{i}, id: {100 + i}, tenant: 100, ip: 192.168.1.{i}, host: hB}}\n" for i in range(1, 9)) + \
    "".join(f"  - {{name: d{i}, id: {200 + i}, tenant: 200, ip: 192.168.1.{i}, host: hC}}\n" for i in range(1, 3))

N_PAIRS = 9 * 8 + 1 * 2
FRAMES = [
    [oc.udp_frame("192.168.0.1", "192.168.1.1", 1000 + i % 3, 100 + i) for i in range(30)]
    + [oc.udp_frame("192.168.0.77", "192.168.1.1", 1000, 64) for _ in range(2)]
    + [bytes.fromhex("0180c200000e020000000a0188cc") + bytes(46)],  # LLDP: not_ipv4
    [oc.udp_frame("192.168.0.1", "192.168.1.2", 2000, 300) for _ in range(5)],
    [bytes(60)],
]
RX = 30 + 2 + 1 + 5 + 1


def ufabctl(*args):
    r = subprocess.run([sys.executable, UFABCTL, *args], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


class RealEdge(unittest.TestCase):
    edge = None

    @classmethod
    def setUpClass(cls):
        exe = oc.edge_exe()
        if not exe:
            raise unittest.SkipTest("ufab-edge was not built (libdpdk or yaml-cpp not found)")
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="ufab_ops_ctl.")
        cls.edge = oc.Edge(exe, CONFIG, FRAMES, cls.dir)
        cls.edge.wait_ready(RX)
        cls.p = ["--file-prefix", cls.edge.prefix]
        from ufab_telemetry import Client
        with Client(cls.edge.prefix) as c:
            cls.commands = c.commands()

    @classmethod
    def tearDownClass(cls):
        if cls.edge:
            cls.edge.stop()
            import shutil
            shutil.rmtree(cls.dir, ignore_errors=True)

    def ctl_json(self, *args):
        rc, out, err = ufabctl(*self.p, "--json", *args)
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    def need(self, cmd):
        if cmd not in self.commands:
            self.skipTest(f"{cmd} is not in this ufab-edge (an older one than the telemetry contract)")

    def test_stats_counts_every_frame(self):
        s = self.ctl_json("stats")
        self.assertEqual(s["rx"], RX)
        self.assertEqual((s["drop_unknown_pair"], s["drop_not_ipv4"], s["drop_not_ufab"]), (2, 1, 1))
        self.assertEqual(s["dropped"], 4)
        self.assertEqual(s["conserved"], 1)
        self.assertEqual((s["port0"]["rx"], s["port1"]["rx"], s["port2"]["rx"]), (33, 5, 1))
        self.assertEqual(s["rx"] + s["generated"], s["tx"] + s["queued"] + s["dropped"] + s["absorbed"])

    def test_stats_human(self):
        rc, out, err = ufabctl(*self.p, "stats")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, rf"(?m)^rx\s+{RX}$")
        self.assertRegex(out, r"(?m)^balance\s+0\s")
        self.assertRegex(out, r"(?m)^unknown_pair\s+2$")
        # net_pcap: link up (polled), no change; the link is a column of its own, not a drop
        self.assertRegex(out, r"(?m)^port\s+device\s+rx\s+tx\s+link\s+drops$")
        self.assertRegex(out, r"(?m)^port2\s+net_pcap2\s+1\s+\d+\s+up \(0 changes\)\s+not_ufab=1$")

    def test_tenants(self):
        t = {v["vni"]: v for v in self.ctl_json("tenants").values()}
        self.assertEqual(sorted(t), [100, 200])
        self.assertEqual((t[100]["guarantee_gbps"], t[100]["tokens_per_vm"], t[100]["weight_class"], t[100]["pairs"]),
                         (2, 2, 1, 72))
        # 200's class follows its guarantee, 1 Gb/s, the unit (the smallest such guarantee): class 0, no error.
        self.assertEqual((t[200]["guarantee_gbps"], t[200]["weight_class"], t[200]["pairs"]), (1, 0, 2))
        self.assertEqual((t[200]["weight_class_from"], t[200]["weight_error"], t[100]["weight_class_from"]),
                         ("guarantee", 0, "config"))
        self.assertNotIn("weight_error", t[100])
        rc, out, _ = ufabctl(*self.p, "tenants")
        self.assertEqual(rc, 0)
        self.assertEqual((t[100]["tags"], t[200]["tags"]), ("untagged", "untagged"))
        self.assertRegex(out, r"(?m)^vni\s+tags\s+guarantee_gbps\s+tokens_per_vm\s+class\s+weight\s+pairs\s+active\s+backlog_B$")
        self.assertRegex(out, r"(?m)^100\s+-\s+2\s+2\s+1\s+2\s+72\s")  # untagged; class 1: weight 2

    def test_paths(self):
        p = self.ctl_json("paths")
        self.assertEqual(p["hB"]["path0"]["labels"], [1])
        self.assertEqual(p["hB"]["path1"]["labels"], [2, 1])
        self.assertEqual((p["hB"]["path0"]["udp_src"], p["hB"]["path1"]["udp_src"]), (49152, 49153))
        self.assertEqual((p["hC"]["base_rtt_ns"], p["hC"]["path0"]["labels"]), (50000, [3]))
        self.assertEqual((p["hB"]["path0"]["port"], p["hB"]["path0"]["uplink_down"]), (2, 0))
        rc, out, _ = ufabctl(*self.p, "paths")
        self.assertRegex(out, r"(?m)^hB\s+10\.0\.0\.2\s+20\s+1\s+2,1\s+49153\s")

    def test_pairs_pages_through_all(self):
        p = self.ctl_json("pairs")
        self.assertEqual(len(p), N_PAIRS)
        self.assertEqual(sorted(v["index"] for v in p.values()), list(range(N_PAIRS)))
        # wire id = src id << 16 | dst id: a1 -> b1 is 1 -> 101, c1 -> d2 is 10 -> 202
        self.assertEqual(p["pair_0x00010065"]["remote"], "b1")
        self.assertEqual((p["pair_0x000a00ca"]["local"], p["pair_0x000a00ca"]["vni"]), ("c1", 200))
        self.assertEqual(len(self.ctl_json("pairs", "--first", "70")), N_PAIRS - 70)
        self.assertEqual(len(self.ctl_json("pairs", "--limit", "5")), 5)
        rc, out, _ = ufabctl(*self.p, "pairs")
        self.assertEqual(len(out.splitlines()), N_PAIRS + 1)
        # One reply is one whole page: 32 pairs and where the next page starts.
        rc, out, err = ufabctl(*self.p, "--json", "raw", "/ufab/pairs,0")
        self.assertEqual(rc, 0, err)
        page = json.loads(out)
        page = page.get("/ufab/pairs", page)
        self.assertEqual(page.pop("next_first"), 32)
        self.assertEqual(sorted(v["index"] for v in page.values()), list(range(32)))
        rc, out, err = ufabctl(*self.p, "--json", "raw", "/ufab/pairs,64")
        page = json.loads(out)
        page = page.get("/ufab/pairs", page)
        self.assertNotIn("next_first", page)
        self.assertEqual(sorted(v["index"] for v in page.values()), list(range(64, N_PAIRS)))

    def test_connection_errors(self):
        rc, _, err = ufabctl("--file-prefix", "ufab_no_such_prefix", "stats")
        self.assertEqual(rc, 2)
        self.assertIn("is ufab-edge running with --file-prefix ufab_no_such_prefix?", err)
        stale = os.path.join(self.dir, "stale.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.bind(stale)
        s.close()  # the file stays, nobody listens
        rc, _, err = ufabctl("--socket", stale, "stats")
        self.assertEqual(rc, 2)
        self.assertIn("stale socket", err)

    def test_argument_errors(self):
        for args, msg in ((["tenant-set", "abc", "2"], "VNI must be an integer"),
                          (["tenant-set", "16777216", "2"], "0..16777215"),
                          (["tenant-set", "100", "-1"], "GBPS must be >= 0"),
                          (["tenant-class", "100", "8"], "CLASS must be 0..7 or auto"),
                          (["path-drain", "h,B", "1"], "without commas"),
                          (["pair", "-3"], "non-negative"),
                          (["frobnicate"], "invalid choice")):
            rc, _, err = ufabctl(*self.p, *args)
            self.assertEqual(rc, 2, args)
            self.assertIn(msg, err, args)

    # The contract's new commands, against the real ufab-edge once it has them.
    def test_pair_history(self):
        self.need("/ufab/pair")
        body = self.ctl_json("pair", "0")
        if "history" not in body and len(body) == 1:
            body = next(iter(body.values()))
        self.assertEqual(body["index"], 0)
        self.assertIsInstance(body["history"], list)
        self.assertLessEqual(len(body["history"]), 64)
        for h in body["history"]:
            self.assertEqual(set(h) >= {"t_ns", "window_bytes", "rate_bps", "path"}, True, h)
        rc, _, err = ufabctl(*self.p, "pair", str(N_PAIRS))
        self.assertEqual(rc, 1, "an index past the last pair is an error")

    def test_tenant_set(self):
        self.need("/ufab/tenant_set")
        r = self.ctl_json("tenant-set", "200", "3")
        self.assertEqual((r["ok"], r["vni"], r["guarantee_gbps"]), (True, 200, 3))
        t = {v["vni"]: v for v in self.ctl_json("tenants").values()}
        self.assertEqual((t[200]["guarantee_gbps"], t[200]["tokens_per_vm"]), (3, 3))
        self.assertEqual(self.ctl_json("stats")["queued"] >= 0, True)
        rc, _, err = ufabctl(*self.p, "tenant-set", "999", "1")
        self.assertEqual(rc, 1)
        self.assertIn("/ufab/tenant_set:", err)
        self.ctl_json("tenant-set", "200", "1")

    def test_tenant_class(self):
        self.need("/ufab/tenant_class")
        r = self.ctl_json("tenant-class", "200", "3")
        self.assertEqual((r["ok"], r["vni"], r["weight_class"], r["weight_class_from"]), (True, 200, 3, "config"))
        t = {v["vni"]: v for v in self.ctl_json("tenants").values()}
        self.assertEqual((t[200]["weight_class"], t[200]["weight_class_from"]), (3, "config"))
        # auto again: the unit is tenant 200's guarantee at start, 1 Gb/s; 1 Gb/s is class 0,
        # and 3 Gb/s (3 units, above sqrt(8)) class 2 with weight 4: +33.3%.
        self.assertEqual(self.ctl_json("tenant-class", "200", "auto")["weight_class"], 0)
        self.ctl_json("tenant-set", "200", "3")
        rc, out, _ = ufabctl(*self.p, "tenants")
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"(?m)^200\s+-\s+3\s+3\s+2 auto \(\+33\.3%\)\s+4\s+2\s")
        rc, _, err = ufabctl(*self.p, "tenant-class", "999", "1")
        self.assertEqual(rc, 1)
        self.assertIn("no tenant with vni 999", err)
        self.ctl_json("tenant-set", "200", "1")
        self.assertEqual(self.ctl_json("tenant-class", "200", "auto")["weight_class"], 0)  # as at start

    def test_path_drain(self):
        self.need("/ufab/path_drain")
        self.assertTrue(self.ctl_json("path-drain", "hB", "1")["ok"])
        self.assertTrue(self.ctl_json("path-undrain", "hB", "1")["ok"])
        rc, _, err = ufabctl(*self.p, "path-drain", "hZ", "0")
        self.assertEqual(rc, 1)
        rc, _, err = ufabctl(*self.p, "path-drain", "hB", "7")
        self.assertEqual(rc, 1)

    def test_reload(self):
        self.need("/ufab/reload")
        r = self.ctl_json("reload")
        self.assertTrue(r["ok"])
        self.assertIsInstance(r.get("changes", []), list)
        good = open(self.edge.config).read()
        try:
            with open(self.edge.config, "w") as f:
                f.write(good.replace("guarantee_gbps: 1}", "guarantee_gbps: lots}"))
            rc, _, err = ufabctl(*self.p, "reload")
            self.assertEqual(rc, 1)
            self.assertRegex(err, r"edge\.yaml:\d+:\d+")
        finally:
            with open(self.edge.config, "w") as f:
                f.write(good)
        self.assertEqual(self.ctl_json("stats")["rx"], RX, "a refused reload leaves the edge running")

    def test_port_add_remove(self):
        self.need("/ufab/port_add")
        r = self.ctl_json("port-add", "net_ring9")
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["port"], 3, "the lowest free port id (ports 0-2 at start-up)")
        rc, _, err = ufabctl(*self.p, "port-add", "net_ring9")
        self.assertEqual(rc, 1)
        self.assertIn("a port named net_ring9 exists already (port 3)", err)
        rc, _, err = ufabctl(*self.p, "port-remove", "0")
        self.assertEqual(rc, 1)
        self.assertIn("port 0 has local VM(s) a1, a2", err)
        rc, out, err = ufabctl(*self.p, "port-remove", "3")
        self.assertEqual((rc, out.strip()), (0, "ok: port detached, removed 3"), err)
        rc, _, err = ufabctl(*self.p, "port-remove", "3")
        self.assertEqual(rc, 1)
        self.assertIn("port 3 does not exist", err)
        self.assertEqual(self.ctl_json("stats")["rx"], RX, "no frame came or went")

    def test_workers(self):
        self.need("/ufab/workers")
        w = self.ctl_json("workers")
        rows = [v for v in w.values() if isinstance(v, dict)]
        self.assertGreaterEqual(len(rows), 1)
        self.assertEqual(sum(v.get("pairs", 0) for v in rows), N_PAIRS)


class FakeTelemetry:
    """DPDK v2 telemetry protocol with canned replies: {command text: reply value}."""

    def __init__(self, path, replies, commands):
        self.path, self.replies, self.received = path, replies, []
        self.replies.setdefault("/", commands)
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.srv.bind(path)
        self.srv.listen(4)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            with conn:
                conn.send(json.dumps({"version": "DPDK 22.11.11", "pid": 1, "max_output_len": 16384}).encode())
                while True:
                    try:
                        data = conn.recv(1024)
                    except OSError:
                        break
                    if not data:
                        break
                    text = data.decode()
                    self.received.append(text)
                    cmd = text.split(",", 1)[0]
                    conn.send(json.dumps({cmd: self.replies.get(text)}).encode())

    def close(self):
        self.srv.close()


UFAB_CMDS = ["/", "/info", "/ufab/stats", "/ufab/tenants", "/ufab/paths", "/ufab/pairs", "/ufab/pair",
             "/ufab/tenant_set", "/ufab/path_drain", "/ufab/path_undrain", "/ufab/reload", "/ufab/workers"]


class FakeSocketFormats(unittest.TestCase):
    """Argument and output handling only (see the module docstring)."""

    def fake(self, replies, commands=UFAB_CMDS):
        d = oc.tmpdir(self)
        f = FakeTelemetry(os.path.join(d, "t.sock"), replies, list(commands))
        self.addCleanup(f.close)
        return f, ["--socket", f.path]

    def test_pair_history_table(self):
        hist = [{"t_ns": 1_000_000 * i, "window_bytes": 3000 + i, "rate_bps": 2e9, "path": i % 2} for i in range(3)]
        f, p = self.fake({"/ufab/pair,3": {"pair_0x00010002": {"index": 3, "state": "active", "window_bytes": "3002",
                                                               "history": hist}}})
        rc, out, err = ufabctl(*p, "pair", "3")
        self.assertEqual(rc, 0, err)
        self.assertIn("/ufab/pair,3", f.received)
        self.assertRegex(out, r"(?m)^pair_0x00010002$")
        self.assertRegex(out, r"(?m)^window_bytes\s+3002$")
        self.assertRegex(out, r"(?m)^t_ms\s+window_B\s+rate_gbps\s+path$")
        self.assertRegex(out, r"(?m)^\s*-2\s+3000\s+2\s+0$")
        self.assertRegex(out, r"(?m)^\s*0\s+3002\s+2\s+0$")

    def test_set_drain_reload_send_the_contract_commands(self):
        f, p = self.fake({"/ufab/tenant_set,100,2.5": {"ok": True, "vni": 100, "guarantee_gbps": "2.5"},
                          "/ufab/path_drain,hB,1": {"ok": True},
                          "/ufab/path_undrain,0,1": {"ok": True},
                          "/ufab/reload": {"ok": True, "changes": ["tenant 100: guarantee 2 -> 3 Gb/s"]}})
        rc, out, err = ufabctl(*p, "tenant-set", "100", "2.5")
        self.assertEqual((rc, out.strip()), (0, "ok: tenant guarantee set, vni 100, guarantee_gbps 2.5"), err)
        rc, out, _ = ufabctl(*p, "path-drain", "hB", "1")
        self.assertEqual((rc, out.strip()), (0, "ok: path 1 to hB drained"))
        rc, out, _ = ufabctl(*p, "path-undrain", "0", "1")
        self.assertEqual(rc, 0)
        rc, out, _ = ufabctl(*p, "reload")
        self.assertEqual(out.splitlines(), ["ok: configuration reloaded", "  tenant 100: guarantee 2 -> 3 Gb/s"])
        self.assertEqual([r for r in f.received if r != "/"],
                         ["/ufab/tenant_set,100,2.5", "/ufab/path_drain,hB,1", "/ufab/path_undrain,0,1", "/ufab/reload"])

    def test_refusals_print_ufab_edge_error(self):
        _, p = self.fake({"/ufab/tenant_set,999,1": {"ok": False, "error": "no tenant with VNI 999"},
                          "/ufab/reload": {"ok": False, "error": "edge.yaml:7:21: guarantee_gbps: not a number"}})
        rc, _, err = ufabctl(*p, "tenant-set", "999", "1")
        self.assertEqual((rc, err.strip()), (1, "ufabctl: tenant-set: /ufab/tenant_set: no tenant with VNI 999"))
        rc, _, err = ufabctl(*p, "reload")
        self.assertEqual(rc, 1)
        self.assertIn("edge.yaml:7:21: guarantee_gbps: not a number", err)

    def test_null_replies_explained(self):
        _, p = self.fake({}, commands=["/", "/ufab/stats", "/ufab/pairs"])
        rc, _, err = ufabctl(*p, "workers")
        self.assertEqual(rc, 1)
        self.assertIn("does not know /ufab/workers", err)
        rc, _, err = ufabctl(*p, "stats")  # known, but null (a failed callback)
        self.assertEqual(rc, 1)
        self.assertIn("returned nothing", err)
        _, p = self.fake({}, commands=["/", "/ethdev/list"])
        rc, _, err = ufabctl(*p, "stats")
        self.assertIn("is not ufab-edge", err)

    def test_history_as_strings_and_long_errors(self):
        # ufab-edge on DPDK 22.11 sends each sample as one string (containers nest one level)
        hist = [f"t_ns={1_000_000 * i},window_bytes={3000 + i},rate_bps=2000000000,path={i % 2}" for i in range(3)]
        long_error = "x" * 127
        _, p = self.fake({"/ufab/pair,0": {"index": 0, "state": "active", "history": hist},
                          "/ufab/pair,9": {"ok": 0, "error": long_error, "error_2": "the end"}})
        rc, out, err = ufabctl(*p, "pair", "0")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"(?m)^\s*-2\s+3000\s+2\s+0$")
        self.assertRegex(out, r"(?m)^\s*-1\s+3001\s+2\s+1$")
        rc, out, _ = ufabctl(*p, "--json", "pair", "0")
        self.assertEqual(json.loads(out)["history"][2], {"t_ns": 2000000, "window_bytes": 3002, "rate_bps": 2000000000,
                                                         "path": 0})
        rc, _, err = ufabctl(*p, "pair", "9")
        self.assertEqual((rc, err.strip()), (1, f"ufabctl: pair: /ufab/pair: {long_error}the end"))

    def test_pairs_paging_after_a_cut_reply(self):
        pair = lambda i: (f"pair_{i}", {"index": i, "local": "a", "remote": "b"})  # noqa: E731
        page0 = dict(pair(i) for i in list(range(0, 40)) + list(range(45, 59)))  # cut at 16 KB: 40-44, 59-63 missing
        f, p = self.fake({"/ufab/pairs,0": page0, "/ufab/pairs,40": dict(pair(i) for i in range(40, 72)),
                          "/ufab/pairs,72": {}})
        rc, out, err = ufabctl(*p, "--json", "pairs")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(v["index"] for v in json.loads(out).values()), list(range(72)))
        self.assertEqual([r for r in f.received if r != "/"], ["/ufab/pairs,0", "/ufab/pairs,40", "/ufab/pairs,72"])

    def test_pairs_follows_next_first(self):
        pair = lambda i: (f"pair_{i}", {"index": i, "local": "a", "remote": "b"})  # noqa: E731
        f, p = self.fake({"/ufab/pairs,0": {**dict(pair(i) for i in range(32)), "next_first": 32},
                          "/ufab/pairs,32": dict(pair(i) for i in range(32, 40)), "/ufab/pairs,40": {}})
        rc, out, err = ufabctl(*p, "--json", "pairs")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(v["index"] for v in json.loads(out).values()), list(range(40)))
        self.assertEqual([r for r in f.received if r != "/"], ["/ufab/pairs,0", "/ufab/pairs,32", "/ufab/pairs,40"])

    def test_tenants_tags_one_cell(self):
        t = {"tenant100": {"vni": 100, "tags": "untagged", "guarantee_gbps": "1", "pairs": 1},
             "tenant300": {"vni": 300, "tags": "vlan 31", "guarantee_gbps": "2", "pairs": 2},
             "tenant400": {"vni": 400, "tags": "qinq [4, 40]", "guarantee_gbps": "1", "pairs": 0}}
        _, p = self.fake({"/ufab/tenants": t})
        rc, out, _ = ufabctl(*p, "tenants")
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"(?m)^100\s+-\s+1\s")
        self.assertRegex(out, r"(?m)^300\s+vlan:31\s+2\s")
        self.assertRegex(out, r"(?m)^400\s+qinq:4,40\s+1\s")

    def test_workers_table_and_json(self):
        w = {"worker0": {"lcore": 1, "pairs": 40, "rx": 100, "tx": 90, "queued": 10, "busy": "0.25"}}
        _, p = self.fake({"/ufab/workers": w})
        rc, out, _ = ufabctl(*p, "workers")
        self.assertRegex(out, r"(?m)^worker0\s+1\s+40\s+100\s+90\s+10\s+0\.25$")
        rc, out, _ = ufabctl(*p, "--json", "workers")
        self.assertEqual(json.loads(out)["worker0"]["busy"], 0.25)


if __name__ == "__main__":
    oc.run()
