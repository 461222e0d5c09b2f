#!/usr/bin/python3
"""ufab plot: charts (SVG and PNG) from the CSV time series of the demo, scenarios and benchmarks.

  deploy/ufab plot CSV... [--out DIR] [--format svg,png] [--backend auto|matplotlib|gnuplot]

Input, recognized by the header line:
  demo     time_ms,pair,token,rate_gbps,window_bytes,queue_bytes   (ufab-demo --csv)
  traffic  t_s,tenant,tx_bytes,rx_bytes,rx_pkts,tx_mbps,rx_mbps,lat_mean_us,lat_max_us
                                                                   (ufab-traffic --csv)
  long     time_s,series,metric,value                               (the generic format)
In the long format a row is one sample of one metric of one series (a tenant, a VM-pair, a
link, ...). Every metric becomes one chart with one line per series: over time, except the
metrics named rtt* or *latency* (or ending in _cdf), which become a CDF of their values.
The demo's columns become the metrics rate_gbps, window_bytes and token per pair, and
queue_bytes of the shared link (series "link"); ufab-traffic's become tx_mbps and rx_mbps
per tenant and lat_mean_us/lat_max_us per tenant over the bins that received frames.

Output: DIR/<csv name>.<metric>.svg and .png (DIR defaults to the CSV's folder). The
backend is python3-matplotlib when it imports, gnuplot otherwise.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

DEMO = ["time_ms", "pair", "token", "rate_gbps", "window_bytes", "queue_bytes"]
LONG = ["time_s", "series", "metric", "value"]
TRAFFIC = ["t_s", "tenant", "tx_bytes", "rx_bytes", "rx_pkts", "tx_mbps", "rx_mbps", "lat_mean_us", "lat_max_us"]


class InputError(Exception):
    pass


def _float(path, line, field, text):
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{path}:{line}: {field}: not a number: {text!r}") from None
    if v != v:
        raise InputError(f"{path}:{line}: {field}: NaN")
    return v


def read_series(path):
    """{metric: {series: [(t_s, value)]}} from one CSV of either schema."""
    try:
        f = open(path, newline="")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    with f:
        rows = csv.reader(f)
        header = [h.strip() for h in next(rows, [])]
        data = {}

        def put(metric, series, t, v):
            data.setdefault(metric, {}).setdefault(series, []).append((t, v))

        if header == LONG:
            for n, r in enumerate(rows, start=2):
                if not r or all(not c.strip() for c in r):
                    continue
                if len(r) != 4:
                    raise InputError(f"{path}:{n}: expected 4 fields (time_s,series,metric,value), got {len(r)}")
                if not r[1].strip() or not r[2].strip():
                    raise InputError(f"{path}:{n}: {'series' if not r[1].strip() else 'metric'}: empty")
                put(r[2].strip(), r[1].strip(), _float(path, n, "time_s", r[0]), _float(path, n, "value", r[3]))
        elif header[:1] == ["time_ms"] and set(DEMO) - {"token"} <= set(header):
            col = {h: i for i, h in enumerate(header)}
            seen_queue = set()
            for n, r in enumerate(rows, start=2):
                if not r:
                    continue
                if len(r) != len(header):
                    raise InputError(f"{path}:{n}: expected {len(header)} fields, got {len(r)}")
                t = _float(path, n, "time_ms", r[col["time_ms"]]) / 1000.0
                pair = r[col["pair"]].strip()
                for m in ("rate_gbps", "window_bytes", "token"):
                    if m in col:
                        put(m, pair, t, _float(path, n, m, r[col[m]]))
                if t not in seen_queue:  # one link: the same queue on every pair's row
                    seen_queue.add(t)
                    put("queue_bytes", "link", t, _float(path, n, "queue_bytes", r[col["queue_bytes"]]))
        elif header == TRAFFIC:
            for n, r in enumerate(rows, start=2):
                if not r:
                    continue
                if len(r) != len(TRAFFIC):
                    raise InputError(f"{path}:{n}: expected {len(TRAFFIC)} fields, got {len(r)}")
                v = dict(zip(TRAFFIC, r))
                t, tenant = _float(path, n, "t_s", v["t_s"]), f"tenant{v['tenant'].strip()}"
                for m in ("tx_mbps", "rx_mbps"):
                    put(m, tenant, t, _float(path, n, m, v[m]))
                if _float(path, n, "rx_pkts", v["rx_pkts"]) > 0:  # no latency in a bin without frames
                    for m in ("lat_mean_us", "lat_max_us"):
                        put(m, tenant, t, _float(path, n, m, v[m]))
        else:
            raise InputError(f"{path}:1: unknown header {','.join(header) or '(empty file)'}; expected "
                             f"{','.join(DEMO)} (ufab-demo --csv), {','.join(TRAFFIC)} (ufab-traffic --csv) "
                             f"or {','.join(LONG)} (the long format)")
    if not data:
        raise InputError(f"{path}: no data rows")
    return data


def is_cdf(metric):
    m = metric.lower()
    return m.startswith("rtt") or "latency" in m or m.endswith("_cdf")


def label(metric):
    for suffix, unit in (("_gbps", "Gb/s"), ("_bps", "bit/s"), ("_bytes", "bytes"), ("_us", "µs"), ("_ns", "ns"),
                         ("_ms", "ms"), ("_s", "s"), ("_pkts", "packets")):
        if metric.endswith(suffix):
            return f"{metric[:-len(suffix)].replace('_', ' ')} ({unit})"
    return metric.replace("_", " ")


def charts(data, title_prefix):
    """Backend-neutral charts: (metric, title, xlabel, ylabel, [(series, xs, ys, step)])."""
    out = []
    for metric, by_series in data.items():
        lines = []
        if is_cdf(metric):
            for s, pts in sorted(by_series.items()):
                vals = sorted(v for _, v in pts)
                n = len(vals)
                lines.append((s, vals, [(i + 1) / n for i in range(n)], True))
            out.append((metric, f"{title_prefix}: CDF of {metric}", label(metric), "fraction of samples", lines))
        else:
            for s, pts in sorted(by_series.items()):
                pts = sorted(pts)
                lines.append((s, [t for t, _ in pts], [v for _, v in pts], False))
            out.append((metric, f"{title_prefix}: {metric} over time", "time (s)", label(metric), lines))
    return out


def render_matplotlib(chart, paths):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in the SVG (searchable, smaller)
    import matplotlib.pyplot as plt
    metric, title, xl, yl, lines = chart
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for s, xs, ys, step in lines:
        if step:
            ax.step(xs, ys, where="post", label=s)
        else:
            ax.plot(xs, ys, label=s, marker="." if len(xs) < 40 else None)
    ax.set_title(title)
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    ax.grid(True, alpha=0.3)
    if len(lines) > 1 or lines[0][0]:
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    for p in paths:
        fig.savefig(p)
    plt.close(fig)


def gnuplot_quote(s):
    return "'" + str(s).replace("'", "''") + "'"


def render_gnuplot(chart, paths):
    metric, title, xl, yl, lines = chart
    with tempfile.TemporaryDirectory(prefix="ufab-plot.") as tmp:
        plots = []
        for i, (s, xs, ys, step) in enumerate(lines):
            dat = os.path.join(tmp, f"{i}.dat")
            with open(dat, "w") as f:
                f.writelines(f"{x!r} {y!r}\n" for x, y in zip(xs, ys))
            plots.append(f"{gnuplot_quote(dat)} using 1:2 with {'steps' if step else 'linespoints'} "
                         f"title {gnuplot_quote(s)}")
        script = [f"set title {gnuplot_quote(title)} noenhanced", f"set xlabel {gnuplot_quote(xl)} noenhanced",
                  f"set ylabel {gnuplot_quote(yl)} noenhanced", "set grid", "set key noenhanced"]
        for p in paths:
            term = "svg size 800,450" if p.endswith(".svg") else "pngcairo size 800,450"
            script += [f"set terminal {term}", f"set output {gnuplot_quote(p)}", "plot " + ", ".join(plots),
                       "unset output"]
        r = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError(f"gnuplot failed on {metric}: {r.stderr.strip()}")


def pick_backend(name):
    if name in ("auto", "matplotlib"):
        try:
            import matplotlib  # noqa: F401
            return render_matplotlib
        except ImportError:
            if name == "matplotlib":
                raise InputError("python3-matplotlib is not installed (apt-get install python3-matplotlib)") from None
    if shutil.which("gnuplot"):
        return render_gnuplot
    raise InputError("neither python3-matplotlib nor gnuplot is installed (apt-get install python3-matplotlib)")


def safe(name):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def main(argv=None):
    p = argparse.ArgumentParser(prog="ufab plot", description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", nargs="+", metavar="CSV")
    p.add_argument("--out", help="output folder (default: next to each CSV)")
    p.add_argument("--format", default="svg,png", help="comma-separated: svg, png (default svg,png)")
    p.add_argument("--backend", default="auto", choices=["auto", "matplotlib", "gnuplot"])
    a = p.parse_args(argv)
    formats = [f.strip().lower() for f in a.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("svg", "png")]
    if bad or not formats:
        p.error(f"--format: unknown {','.join(bad) or '(none)'}; use svg, png or svg,png")
    try:
        render = pick_backend(a.backend)
        jobs = [(path, read_series(path)) for path in a.csv]  # every input checked before any output
        for path, data in jobs:
            out = a.out or os.path.dirname(os.path.abspath(path))
            os.makedirs(out, exist_ok=True)
            stem = os.path.splitext(os.path.basename(path))[0]
            for chart in charts(data, stem):
                files = [os.path.join(out, f"{safe(stem)}.{safe(chart[0])}.{fmt}") for fmt in formats]
                render(chart, files)
                for f in files:
                    print(f)
    except InputError as e:
        print(f"ufab plot: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as e:
        print(f"ufab plot: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
