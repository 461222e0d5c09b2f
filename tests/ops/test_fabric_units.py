"""deploy/fabric: the unit the emulated fabric's checks measure in. The edges count a frame's
bytes with uFAB's headers (windows, tokens, in-flight) and so do the switches (tx_l, the
links' rates); a guarantee of 1 Mb/s is 1 Mb/s of those. ufab-traffic's receivers count the VM
frames only, so the checks add the headers back: hand values here, from docs/wire-format.md
(outer Ethernet/IPv4/UDP 42 B, shim 8 B, route 2 + 2 B a hop)."""

import os
import sys
import tempfile
import unittest

import ops_common as oc

sys.path.insert(0, os.path.join(oc.ROOT, "deploy", "fabric"))
import analysis  # noqa: E402
import runner  # noqa: E402
import topology  # noqa: E402


def fabric(cores, **scale):
    sc = {"topology": {"paths": 1, "cores": cores, "senders": ["hA"], "receivers": ["hB"]},
          "tenants": [], "scale": {"link_mbps": 10, "link_delay_us": 20000, "frame_bytes": 1000,
                                   "access_mbps": 100, "recv_access_mbps": 100, "unit_mbps": 1, **scale}}
    return topology.Fabric(sc, tempfile.gettempdir())


def read_rates(*rows):
    """analysis.read_rates of tenant 201 over a traffic CSV of these rows, with 56 B of headers."""
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("t_s,tenant,tx_bytes,rx_bytes,rx_pkts,tx_mbps,rx_mbps,lat_mean_us,lat_max_us\n")
        f.writelines(r + "\n" for r in rows)
    try:
        return analysis.read_rates(f.name, 56)[201]
    finally:
        os.unlink(f.name)


class FabricUnits(unittest.TestCase):
    def test_encap_bytes_per_hop_count(self):
        self.assertEqual(fabric(False).encap_bytes(), 56)  # 42 + 8 + 2 + 2 * 2
        self.assertEqual(fabric(True).encap_bytes(), 58)   # 42 + 8 + 2 + 2 * 3

    def test_base_rtt_serializes_the_encapsulated_frame(self):
        # 2 hops of 20 ms each way; forward 1056 B at 10 and at 100 Mb/s, back a response of
        # 56 + 32 + 32 = 120 B at 10 and at 100 Mb/s.
        want = 4 * 20000 + 1056 * 8 / 10 + 1056 * 8 / 100 + 120 * 8 / 10 + 120 * 8 / 100
        self.assertAlmostEqual(fabric(False).base_rtt_us(), want, places=6)

    def test_queue_bound_is_three_bdp_at_the_edges_t(self):
        # §3.4: in-flight < 3 C_l T_max with T the edges' base RTT; in BDPs of the computed T.
        self.assertEqual(fabric(False).inflight_bound_bdp(), 3.0)
        self.assertAlmostEqual(fabric(False, edge_rtt_factor=1.1).inflight_bound_bdp(), 3.3, places=12)

    def test_fabric_rate_adds_the_headers_of_every_frame(self):
        # 100 ms bins: 125 frames of 1000 B = 10 Mb/s of VM frames; then 300 B frames; then none.
        rows = read_rates("0.1,201,125000,125000,125,10.000,10.000,80000,90000",
                          "0.2,201,30000,30000,100,2.400,2.400,80000,90000",
                          "0.3,201,0,0,0,0.000,0.000,0,0")
        self.assertEqual([r[analysis.RX_VM] for r in rows], [10.0, 2.4, 0.0])
        # (125000 + 125 * 56) * 8 / 0.1 s = 10.56 Mb/s; (30000 + 100 * 56) * 8 / 0.1 s = 2.848.
        self.assertAlmostEqual(rows[0][analysis.RX_FABRIC], 10.56, places=9)
        self.assertAlmostEqual(rows[1][analysis.RX_FABRIC], 2.848, places=9)
        self.assertEqual(rows[2][analysis.RX_FABRIC], 0.0)
        self.assertAlmostEqual(analysis.mean_in(rows, 0.0, 0.2, idx=analysis.RX_FABRIC), (10.56 + 2.848) / 2,
                               places=9)

    def test_a_tenant_at_exactly_its_guarantee_meets_the_check(self):
        # 1 Mb/s on the fabric in 1000 B frames is 1000 / 1056 of it in VM frames: 0.947 Mb/s,
        # under the check's 95% of 1 Mb/s when counted without the headers.
        vm_mbps = 1.0 * 1000 / 1056
        row = read_rates(f"1.0,201,{vm_mbps * 125000:.3f},{vm_mbps * 125000:.3f},{vm_mbps * 125:.6f},"
                         f"{vm_mbps:.9f},{vm_mbps:.9f},0,0")[0]
        self.assertLess(row[analysis.RX_VM], 0.95)
        self.assertAlmostEqual(row[analysis.RX_FABRIC], 1.0, places=6)


class EdgeNaps(unittest.TestCase):
    """The edges' naps come from the scale block; without the keys ufab-edge keeps its defaults."""

    def nap_args(self, **scale):
        return runner.Run(fabric(False, **scale), {}, tempfile.gettempdir()).edge_nap_args()

    def test_scale_keys_become_the_edge_options(self):
        self.assertEqual(self.nap_args(edge_idle_nap_us=500, edge_queued_nap_us=200),
                         ["--idle-nap-us", "500", "--queued-nap-us", "200"])
        self.assertEqual(self.nap_args(edge_queued_nap_us=0), ["--queued-nap-us", "0"])
        self.assertEqual(self.nap_args(), [])


if __name__ == "__main__":
    oc.run()
