#!/usr/bin/env python3
"""deploy/ufab bench wire, short: both phases run end to end through real
processes (generator -> ufab-edge -> ufab-traffic sink over memif) and the
figures it writes are consistent with what each process counted.

argv: BUILD_DIR. Skips (77) with the reason when a binary or dpdk-testpmd is
missing. No rate is asserted (2 shared vCPUs): only accounting.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = sys.argv.pop(1) if len(sys.argv) > 1 else ""


class BenchWire(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [p for p in (os.path.join(BUILD, "pipeline", "ufab-edge"),
                               os.path.join(BUILD, "deploy", "traffic", "ufab-traffic")) if not os.access(p, os.X_OK)]
        if shutil.which("dpdk-testpmd") is None:
            missing.append("dpdk-testpmd (Debian package dpdk-dev)")
        if missing:
            print("SKIP: bench wire needs " + ", ".join(missing))
            sys.exit(77)
        cls.dir = tempfile.mkdtemp(prefix="ufab-test-bench-wire-")
        out = os.path.join(cls.dir, "wire.json")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "deploy", "bench_wire.py"), "--build", BUILD,
                            "--seconds", "2", "--json", out], capture_output=True, text=True, timeout=150)
        print(r.stdout, r.stderr)
        assert r.returncode == 0, f"bench_wire.py exited {r.returncode}"
        with open(out) as f:
            cls.res = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(getattr(cls, "dir", ""), ignore_errors=True)

    def test_every_phase_conserves_at_the_edge(self):
        for name in ("txonly", "txonly_1500", "tenants"):
            e = self.res[name]["edge"]
            self.assertTrue(self.res[name]["edge_final_report"] and self.res[name]["edge_exit"] == 0,
                            f"{name}: ufab-edge stopped by SIGINT exits 0 with its final report"
                            f" (exit {self.res[name]['edge_exit']})")
            self.assertTrue(e["conserved"], f"{name}: ufab-edge's rx = tx + queued + drops")
            self.assertGreater(e["rx"], 0, f"{name}: the edge received frames")
            self.assertEqual(e["dropped"], sum(e["drops"].values()), f"{name}: every drop has a reason")
            # The generator's frames are what the edge received (memif copy, nothing lost before).
            self.assertLessEqual(e["rx"], self.res[name]["gen_tx"], name)

    def test_counts_are_taken_at_the_receiver(self):
        for name in ("txonly", "txonly_1500", "tenants"):
            r = self.res[name]
            self.assertGreater(r["sink_rx"], 0, f"{name}: the sink received frames")
            # The sink gets the edge's encapsulated data and its probes, nothing more.
            self.assertLessEqual(r["sink_rx"], r["edge"]["tx"], name)

    def test_per_tenant_frames_losses_and_latency(self):
        ten = {t["tenant"]: t for t in self.res["tenants"]["tenants"]}
        self.assertEqual(sorted(ten), [100, 200, 300])
        self.assertAlmostEqual(sum(t["share"] for t in ten.values()), 1.0, places=6)
        # 6x overload behind the paced fabric port: WFQ over classes 1:2:4
        # decides the shares (1/7, 2/7, 4/7). Bound: 0.05 absolute, for the
        # start and end of the run when not every tenant is backlogged.
        for vni, target in ((100, 1 / 7), (200, 2 / 7), (300, 4 / 7)):
            self.assertAlmostEqual(ten[vni]["target"], target, places=9)
            self.assertLessEqual(abs(ten[vni]["share"] - target), 0.05,
                                 f"tenant {vni}: share {ten[vni]['share']:.3f} vs WFQ target {target:.3f}")
        for vni, t in ten.items():
            self.assertGreater(t["rx_pkts"], 0, vni)
            self.assertLessEqual(t["rx_pkts"], t["tx_pkts"], vni)
            self.assertLessEqual(float(t["p50_us"]), float(t["p99_us"]), vni)
            self.assertLessEqual(float(t["p99_us"]), float(t["p999_us"]), vni)
            self.assertLessEqual(float(t["p999_us"]), float(t["max_us"]), vni)


if __name__ == "__main__":
    unittest.main(verbosity=2)
