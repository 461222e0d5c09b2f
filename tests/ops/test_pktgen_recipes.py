"""The pktgen-dpdk recipes in deploy/pktgen agree with the example ufab-edge configurations
they claim to match (pktgen itself cannot run here).

For every .pkt command file and .lua script: the "ufab: matches FILE" line names an existing
config; every flow it sends (single packet, sequence or range mode, expanded address by
address) goes from a local VM of that edge (source IP and MAC as configured, on the VM port
pktgen port 0 is wired to) to a remote VM of the same tenant, whose MAC is the one edge B
configures for it. Each .pkt and its .lua twin set the same things. edge-a.yaml and
edge-b.yaml mirror each other, and ufab-edge itself accepts both (run on net_pcap ports).
The checker is also run on broken copies, so it can fail.

argv[1]: ufab-edge (empty when not built: the start-up case skips)."""

import glob
import ipaddress
import os
import re
import subprocess
import unittest

import ops_common as oc

PKTGEN = os.path.join(oc.ROOT, "deploy", "pktgen")
IGNORED = {"stop", "clr", "start", "type", "proto"}  # no address in them


def load_yaml(path):
    import yaml  # python3-yaml (Debian)
    with open(path) as f:
        return yaml.safe_load(f)


def parse_pkt(text):
    """pktgen CLI lines -> normalized commands."""
    cmds = []
    for n, line in enumerate(text.splitlines(), start=1):
        w = line.split("#", 1)[0].split()
        if not w:
            continue
        if w[0] in ("stop", "clr", "start"):
            continue
        if w[0] == "set" and len(w) == 5 and w[3] in ("ip", "mac"):
            cmds.append((w[3], w[1], w[2], w[4]))
        elif w[0] == "set" and len(w) == 4:
            if w[2] not in IGNORED:
                cmds.append(("set", w[1], w[2], w[3]))
        elif w[0] == "seq" and len(w) == 13:
            cmds.append(("seq", w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[12]))
        elif w[0] == "range" and len(w) == 6 and w[2] in ("src", "dst"):
            cmds.append(("range", w[1], f"{w[2]}_{w[3]}", w[4], w[5]))
        elif w[0] == "range" and len(w) == 5 and w[2] == "size":
            cmds.append(("range", w[1], "pkt_size", w[3], w[4]))
        elif w[0] == "range" and len(w) == 4 and w[2] == "proto":
            continue
        elif w[0] == "enable" and len(w) == 3 and w[2] == "range":
            cmds.append(("range_on", w[1]))
        elif w[0] == "enable" and len(w) == 3 and w[2] == "latency":
            cmds.append(("latency", w[1]))
        else:
            raise ValueError(f"line {n}: a command this check does not know: {line.strip()}")
    return cmds


def lua_args(s):
    return [a.strip().strip('"') for a in re.findall(r'"[^"]*"|[^,\s][^,]*', s)]


def parse_lua(text):
    """pktgen.* calls of a Lua script -> the same normalized commands."""
    cmds = []
    for n, line in enumerate(text.splitlines(), start=1):
        m = re.match(r"^\s*pktgen\.([\w.]+)\((.*)\)\s*$", line.split("--", 1)[0])
        if not m:
            continue
        fn, a = m.group(1), lua_args(m.group(2))
        if fn in ("stop", "clr", "start", "delay", "set_type", "set_proto", "range.ip_proto"):
            continue
        if fn == "set":
            if a[1] not in IGNORED:
                cmds.append(("set", a[0], a[1], a[2]))
        elif fn == "set_ipaddr":
            cmds.append(("ip", a[0], a[1], a[2]))
        elif fn == "set_mac":
            cmds.append(("mac", a[0], a[1], a[2]))
        elif fn == "seq":
            cmds.append(("seq", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[11]))
        elif fn.startswith("range."):
            cmds.append(("range", a[0], fn[6:], a[1], a[2]))
        elif fn == "set_range" and a[1] == "on":
            cmds.append(("range_on", a[0]))
        elif fn == "latency" and a[1] == "on":
            cmds.append(("latency", a[0]))
        elif fn == "portStats":
            continue
        else:
            raise ValueError(f"line {n}: a call this check does not know: pktgen.{fn}")
    return cmds


def expand(start, lo, hi, inc):
    """The addresses a pktgen range visits: start, start+inc, ... wrapping within [lo, hi]."""
    a, lo, hi, step = (int(ipaddress.ip_address(x)) for x in (start, lo, hi, inc))
    out = []
    while a not in out and len(out) < 4096:
        out.append(a)
        a = a + step if step else a
        if a > hi:
            a = lo
    return [str(ipaddress.ip_address(x)) for x in out]


def flows(cmds):
    """(src ip, dst ip, src mac, dst mac) of every frame kind the commands send on port 0."""
    kv = {}
    for c in cmds:
        if c[0] in ("ip", "mac") and c[1] == "0":
            kv[(c[0], c[2])] = c[3]
    seqs = [c for c in cmds if c[0] == "seq" and c[2] == "0"]
    seq_cnt = [int(c[3]) for c in cmds if c[:3] == ("set", "0", "seq_cnt")]
    if seqs:
        if seq_cnt != [len(seqs)]:
            raise ValueError(f"seq_cnt {seq_cnt} but {len(seqs)} sequences")
        return [(s[6].split("/")[0], s[5], s[4], s[3]) for s in seqs]
    if ("range_on", "0") in cmds:
        r = {(c[2], c[3]): c[4] for c in cmds if c[0] == "range" and c[1] == "0"}
        src = expand(*(r[("src_ip", k)] for k in ("start", "min", "max", "inc")))
        dst = expand(*(r[("dst_ip", k)] for k in ("start", "min", "max", "inc")))
        if len(src) != len(dst):
            raise ValueError(f"source range of {len(src)} and destination range of {len(dst)} do not pair up")
        smac, dmac = r[("src_mac", "start")], r[("dst_mac", "start")]
        return [(s, d, smac if i == 0 else None, dmac if i == 0 else None) for i, (s, d) in enumerate(zip(src, dst))]
    return [(kv[("ip", "src")].split("/")[0], kv[("ip", "dst")], kv[("mac", "src")], kv[("mac", "dst")])]


def check_script(path, text):
    """Problems of one script against the config it names; [] when it is consistent."""
    m = re.search(r"ufab: matches (\S+)", text)
    if not m:
        return [f"{path}: no 'ufab: matches deploy/pktgen/<config>' line"]
    cfg_path = os.path.join(oc.ROOT, m.group(1))
    if not os.path.exists(cfg_path):
        return [f"{path}: names {m.group(1)}, which does not exist"]
    a = load_yaml(cfg_path)
    b = load_yaml(os.path.join(PKTGEN, "edge-b.yaml"))
    local = {v["ip"]: v for v in a["vms"] if v["port"] == 0}
    remote = {v["ip"]: v for v in a["remote_vms"]}
    peer_mac = {v["ip"]: v["mac"] for v in b["vms"]}
    try:
        fl = flows((parse_lua if path.endswith(".lua") else parse_pkt)(text))
    except (ValueError, KeyError, IndexError) as e:
        return [f"{path}: {e!r}"]
    problems = []
    for src, dst, smac, dmac in fl:
        if src not in local:
            problems.append(f"{path}: source {src} is not a VM on port 0 of {m.group(1)}")
            continue
        if dst not in remote:
            problems.append(f"{path}: destination {dst} is not a remote VM of {m.group(1)}")
            continue
        if local[src]["tenant"] != remote[dst]["tenant"]:
            problems.append(f"{path}: {src} (tenant {local[src]['tenant']}) -> {dst} "
                            f"(tenant {remote[dst]['tenant']}): no VM-pair across tenants")
        if smac is not None and smac.lower() != local[src]["mac"].lower():
            problems.append(f"{path}: source MAC {smac} is not {local[src]['name']}'s {local[src]['mac']}")
        if dmac is not None and dmac.lower() != peer_mac.get(dst, "").lower():
            problems.append(f"{path}: destination MAC {dmac} is not {remote[dst]['name']}'s {peer_mac.get(dst)}")
    return problems


class Recipes(unittest.TestCase):
    def scripts(self):
        files = sorted(glob.glob(os.path.join(PKTGEN, "*.pkt")) + glob.glob(os.path.join(PKTGEN, "*.lua")))
        self.assertGreaterEqual(len(files), 10)
        return files

    def test_every_script_matches_its_config(self):
        for f in self.scripts():
            with self.subTest(script=os.path.basename(f)):
                self.assertEqual(check_script(f, open(f).read()), [])

    def test_the_standard_runs_are_there(self):
        runs = {os.path.splitext(os.path.basename(f))[0]: parse_pkt(open(f).read())
                for f in glob.glob(os.path.join(PKTGEN, "*.pkt"))}
        self.assertIn(("set", "0", "size", "64"), runs["line-rate-64"])
        self.assertIn(("set", "0", "rate", "100"), runs["line-rate-64"])
        self.assertIn(("set", "0", "size", "1500"), runs["line-rate-1500"])
        self.assertIn(("set", "0", "rate", "100"), runs["line-rate-1500"])
        self.assertIn(("latency", "0-1"), runs["latency"])
        mt = flows(runs["multi-tenant"])
        a = load_yaml(os.path.join(PKTGEN, "edge-a.yaml"))
        tenant = {v["ip"]: v["tenant"] for v in a["vms"]}
        self.assertEqual(sorted({tenant[s] for s, *_ in mt}), [100, 200], "both tenants send")
        self.assertEqual(len({(s, d) for s, d, *_ in mt}), 7, "seven distinct VM-pairs")
        rng = flows(runs["tenant-range"])
        self.assertEqual([(s, d) for s, d, *_ in rng], [(f"10.100.0.{i}", f"10.100.1.{i}") for i in range(1, 5)])

    def test_pkt_and_lua_twins_agree(self):
        for pkt in glob.glob(os.path.join(PKTGEN, "*.pkt")):
            lua = pkt[:-4] + ".lua"
            with self.subTest(run=os.path.basename(pkt)):
                self.assertTrue(os.path.exists(lua), f"{lua} missing")
                self.assertEqual(sorted(parse_pkt(open(pkt).read())), sorted(parse_lua(open(lua).read())))

    def test_configs_mirror_each_other(self):
        a = load_yaml(os.path.join(PKTGEN, "edge-a.yaml"))
        b = load_yaml(os.path.join(PKTGEN, "edge-b.yaml"))
        key = lambda v: (v["name"], v["id"], v["tenant"], str(v["ip"]))  # noqa: E731
        self.assertEqual(sorted(map(key, a["remote_vms"])), sorted(map(key, b["vms"])))
        self.assertEqual(sorted(map(key, b["remote_vms"])), sorted(map(key, a["vms"])))
        self.assertEqual(a["tenants"], b["tenants"])
        self.assertEqual((a["hosts"][0]["ip"], a["hosts"][0]["mac"]), (b["edge"]["ip"], b["edge"]["mac"]))
        self.assertEqual((b["hosts"][0]["ip"], b["hosts"][0]["mac"]), (a["edge"]["ip"], a["edge"]["mac"]))

    def test_checker_catches_mistakes(self):
        f = os.path.join(PKTGEN, "multi-tenant.pkt")
        text = open(f).read()
        for bad, expect in ((text.replace("10.100.0.3/24", "10.100.0.9/24"), "source 10.100.0.9 is not a VM"),
                            (text.replace("10.200.1.2 ", "10.100.1.2 "), "no VM-pair across tenants"),
                            (text.replace("02:00:00:64:00:01", "02:00:00:64:00:07"), "source MAC 02:00:00:64:00:07"),
                            (text.replace("seq_cnt 7", "seq_cnt 6"), "seq_cnt"),
                            (text.replace("ufab: matches", "ufab: made for"), "no 'ufab: matches")):
            problems = check_script(f, bad)
            self.assertTrue(any(expect in p for p in problems), (expect, problems))
        lua = open(os.path.join(PKTGEN, "tenant-range.lua")).read()
        problems = check_script("x.lua", lua.replace('"max", "10.100.1.4"', '"max", "10.100.1.5"'))
        self.assertTrue(any("do not pair up" in p for p in problems), problems)

    def test_ufab_edge_accepts_both_configs(self):
        exe = oc.edge_exe()
        if not exe:
            self.skipTest("ufab-edge was not built (libdpdk or yaml-cpp not found)")
        for name in ("edge-a.yaml", "edge-b.yaml"):
            d = oc.tmpdir(self)
            prefix = f"ufabopspg{os.getpid()}{name[5]}"
            oc.write_pcap(os.path.join(d, "empty.pcap"), [])
            cmd = [exe, "--no-huge", "--no-pci", "-m", "256", "-l", "0", "--file-prefix", prefix, "--log-level",
                   "error"]
            for i in range(2):  # port 0: the VMs (vhost in the recipe), port 1: the fabric (memif)
                cmd += ["--vdev", f"net_pcap{i},rx_pcap={d}/empty.pcap,tx_pcap={d}/out{i}.pcap"]
            cmd += ["--", "--config", os.path.join(PKTGEN, name), "--exit-after-idle-ms", "300",
                    "--stats-interval", "0"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            for base in ("/var/run/dpdk", "/tmp/dpdk"):
                subprocess.run(["rm", "-rf", os.path.join(base, prefix)])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("2 tenants, 7 local VMs, 7 remote VMs, 25 VM-pairs", r.stdout)


if __name__ == "__main__":
    oc.run()
