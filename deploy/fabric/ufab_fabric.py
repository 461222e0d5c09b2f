#!/usr/bin/env python3
"""deploy/ufab demo: the emulated fabric, end to end on one machine.

Runs a scenario (deploy/fabric/scenarios/NAME.yaml) with real processes:
ufab-core software switches, ufab-edge hosts and ufab-traffic VMs over memif,
links shaped to a capacity with a delay. Prints per tenant the guaranteed vs
achieved bandwidth, one-way latency p50/p99, queue peak in BDPs, migrations
and probe overhead; writes a time series CSV, a plot and (--json) a summary;
with --check exits 1 when a property of the paper does not hold.
"""

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from analysis import Analysis, recovery_bound_ms  # noqa: E402
from runner import Run  # noqa: E402
from topology import Fabric  # noqa: E402


def load_scenario(name):
    path = name if name.endswith(".yaml") else os.path.join(HERE, "scenarios", name + ".yaml")
    if not os.path.exists(path):
        avail = sorted(f[:-5] for f in os.listdir(os.path.join(HERE, "scenarios"))
                       if f.endswith(".yaml") and not f.startswith("_"))
        raise SystemExit(f"ufab demo: no scenario '{name}' (available: {', '.join(avail)})")
    with open(path) as f:
        try:
            sc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise SystemExit(f"ufab demo: {path}: {e}")
    with open(os.path.join(HERE, "scenarios", "_scale.yaml")) as f:
        scale = yaml.safe_load(f)
    scale.update(sc.get("scale") or {})
    sc["scale"] = scale
    return sc


def reduce(sc):
    """CI length: the scenario's `reduced` block overrides times (phases,
    events, flows are given again there when they change)."""
    red = sc.get("reduced")
    if not red:
        return sc
    out = copy.deepcopy(sc)
    for k, v in red.items():
        out[k] = v
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--build", default=os.environ.get("UFAB_BUILD", os.path.join(HERE, "..", "..", "build")))
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--csv", help="time series (per tenant rate per sample); default: <out>/timeseries.csv")
    ap.add_argument("--plot", help="plot of per-tenant rate over time (PNG or SVG); default: <out>/rates.png")
    ap.add_argument("--out", help="directory for the outputs (default: ./ufab-demo-<scenario>)")
    ap.add_argument("--reduced", action="store_true", help="the scenario's reduced (CI) length")
    ap.add_argument("--check", action="store_true", help="exit 1 when a property does not hold")
    ap.add_argument("--keep", action="store_true", help="keep the run directory (process logs, configs)")
    ap.add_argument("--startup-budget", type=float, default=8.0, help="seconds for the processes to come up")
    ap.add_argument("--retry-stalled", type=int, default=0, metavar="N",
                    help="with --check: run again, up to N times, when every failed check is explained by the host "
                         "stalling the fabric (host_timing.py, analysis.py); any other failure is never run again")
    a = ap.parse_args()
    for attempt in range(a.retry_stalled + 1):
        rc, void = run_once(a, attempt)
        if not void:
            return rc
        if attempt < a.retry_stalled:
            print(f"run {attempt + 1} void (the host stalled the fabric; see above): running the scenario again\n",
                  flush=True)
    print(f"every run of {a.retry_stalled + 1} was void: the host did not keep the fabric's timing")
    return 1


def run_once(a, attempt):
    """One run of the scenario. Returns (exit code, void): void when every
    failed check is explained by the host's stalls (Analysis.check)."""
    sc = load_scenario(a.scenario)
    if a.reduced:
        sc = reduce(sc)
    bins = {"core": f"{a.build}/p4/softswitch/ufab-core", "edge": f"{a.build}/pipeline/ufab-edge",
            "traffic": f"{a.build}/deploy/traffic/ufab-traffic"}
    missing = [b for b in bins.values() if not os.path.exists(b)]
    if missing:
        print(f"SKIP: not built: {' '.join(missing)} (needs libdpdk, yaml-cpp, nlohmann-json)")
        return 77, False
    out_dir = a.out or os.path.abspath(f"ufab-demo-{sc['name']}")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="ufab_fabric.")
    fab = Fabric(sc, work)
    print(f"scenario {sc['name']}: {sc.get('title', '')}")
    print(f"  scale: links {fab.link_mbps()} Mb/s, {fab.delay_us():.0f} us per link, base RTT T = "
          f"{fab.base_rtt_us():.0f} us (the edges': {fab.edge_base_rtt_us():.0f}), BDP = {fab.bdp_bytes() / 1000:.1f} KB, B_u = {sc['scale']['unit_mbps']} Mb/s "
          f"(paper: 10 Gb/s, T = 24 us: rates / {10000 / fab.link_mbps():.0f}, times x {fab.base_rtt_us() / 24:.0f})")
    print(f"  recovery bound 1 ms + (5 + 10 k) T + 2 bins for k pairs of one host on the failed path: "
          f"{recovery_bound_ms(fab, 1):.0f} ms (k = 1), {recovery_bound_ms(fab, 3):.0f} ms (k = 3); see analysis.py")
    n_proc = 3 + (fab.n_paths if fab.cores else 0) + len(fab.hosts)
    print(f"  processes: {n_proc} (switches S0 S1{' + cores' if fab.cores else ''}, edges "
          f"{' '.join(fab.hosts)}, ufab-traffic); duration {sc['duration_ms']} ms", flush=True)
    run = Run(fab, bins, work, budget_s=a.startup_budget)
    t_start = time.monotonic()
    ok = True
    try:
        run.start()
        print(f"  up in {run.startup_s:.1f} s; running", flush=True)
        run.play()
    except Exception as e:  # noqa: BLE001
        print(f"ufab demo: {e}", file=sys.stderr)
        ok = False
    finally:
        run.stop()
    if not ok:
        for name, p in run.procs.items():
            err = p.errtext().strip()
            if err:
                print(f"--- {name} stderr:\n{err[-1500:]}", file=sys.stderr)
        print(f"run directory kept: {work}", file=sys.stderr)
        return 1, False
    switches = ["S0", "S1"] + ([f"C{k}" for k in range(fab.n_paths)] if fab.cores else [])
    edges = {h: run.procs[h].text() for h in fab.hosts}
    an = Analysis(fab, work, switches, edges, run.pairs, run.phase_pairs)
    checks = an.run_checks()
    rows = an.tenant_rows()
    print()
    an.print_table(rows, sys.stdout)
    print()
    for c in checks:
        host = " [explained by the host's stalls]" if c.get("explained_by_host_stall") else ""
        print(f"  {'ok  ' if c['ok'] else 'FAIL'} {c['check']:<15} measured {c['measured']} "
              f"(bound {c['bound']}): {c['what']}{host}")
    csv_path = a.csv or os.path.join(out_dir, "timeseries.csv")
    shutil.copy(f"{work}/traffic.csv", csv_path)
    plot_path = a.plot or os.path.join(out_dir, "rates.png")
    plotted = an.plot(plot_path, f"{sc['name']}: {sc.get('title', '')}")
    print(f"\ntime series: {csv_path}\nplot: {plot_path if plotted else '(matplotlib missing: no plot)'}")
    stalls = an.host_stalls()
    if stalls["worst_ms"] is not None:
        print(f"host timing: worst late wake-up {stalls['worst_ms']} ms at {stalls['at_s']} s "
              f"({'more' if stalls['stalled'] else 'no more'} than the stall limit, {stalls['limit_ms']:.1f} ms);"
              f" {stalls['held_ms']} ms in all in wake-ups 10 ms or more late")
    summary = {"scenario": sc["name"], "title": sc.get("title"), "reduced": a.reduced,
               "scale": {"link_mbps": fab.link_mbps(), "link_delay_us": fab.delay_us(),
                         "base_rtt_us": round(fab.base_rtt_us(), 1), "bdp_bytes": round(fab.bdp_bytes()),
                         "one_way_base_us": round(fab.one_way_base_us(), 1), **sc["scale"]},
               "startup_s": round(run.startup_s, 2), "wall_s": round(time.monotonic() - t_start, 2),
               "tenants": rows, "checks": checks, "host_timing": stalls, "attempt": attempt + 1,
               # Per phase, near its end: each sending pair's tenant, active path, window and RTTs.
               "pairs_at_phase_end": {ph: {h: {k: {f: v.get(f) for f in ("vni", "path", "window_bytes", "last_rtt_us",
                                                                         "rtt_estimate_us", "rate_gbps")}
                                               for k, v in pairs.items() if isinstance(v, dict) and v.get("path", -1) >= 0}
                                           for h, pairs in snap.items()}
                                      for ph, snap in run.phase_pairs.items()},
               "recovery_bound_ms": {ev.get("name", "failure"): round(an.recovery_bound_ms(an.pairs_on_failed_path(ev)), 1)
                                     for ev in sc.get("events", []) if ev.get("recovery")}}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=2)
        print(f"summary: {a.json}")
    failed = [c for c in checks if not c["ok"]]
    if a.keep or failed:
        print(f"run directory: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    if a.check and failed:
        print(f"{len(failed)} of {len(checks)} checks failed")
        # Void only when the host's stalls explain every failed check
        # (Analysis.check: the time it held the fabric covers the shortfall).
        void = all(c.get("explained_by_host_stall") for c in failed)
        if not void and stalls["stalled"]:
            print("the host stalled the fabric too, but not enough to explain these failures: not void")
        return 1, void
    return 0, False


if __name__ == "__main__":
    sys.exit(main())
