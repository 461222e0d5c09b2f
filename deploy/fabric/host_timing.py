"""Host-timing watch for the emulated fabric (a cyclictest in miniature).

Run by the runner next to the fabric's processes, at their priority and timer
slack: sleeps 1 ms in a loop and records how late each wake-up is, keeping
the worst per bin of the scenario's sample_ms. The fabric's links, delay lines
and pacers are timers in those processes; when the host does not run them
for tens of ms (other load, a stolen vCPU) every link stalls at once and the
paper's properties cannot be judged over that stretch. The verdict
(ufab_fabric.py) uses it only to tell such a run from a failure of uFAB: a
run whose checks fail while the host was that late (the limit is in
analysis.py, Analysis.host_stalls) is void and may be run again
(--retry-stalled); a run whose checks fail on time is a failure, and a run
whose checks hold is a pass either way.

Per bin it writes the worst late wake-up and the sum of the lateness of the
wake-ups later than HELD_OVER_US: how long the host held the fabric in that
bin through stalls shorter than the limit as well (several 10-20 ms stalls
in one phase cost a lone pair as much as one long stall).

  python3 host_timing.py OUT_CSV T0_NS BIN_MS     (stops on SIGTERM)
"""

import signal
import sys
import time

# Late wake-ups of 5-9 ms are usual with the fabric's processes sharing 2
# vCPUs at one CFS weight (analysis.py, host_stalls); a wake-up later than
# this counts, all of its lateness, in the bin's held time.
HELD_OVER_US = 10_000


def main():
    out, t0_ns, bin_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    worst = {}
    held = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    prev = time.monotonic_ns()
    while not stop:
        time.sleep(0.001)
        now = time.monotonic_ns()
        late = max(0, now - prev - 1_000_000)
        b = int((now - t0_ns) / 1e6 // bin_ms)
        if late > worst.get(b, -1):
            worst[b] = late
        if late > HELD_OVER_US * 1000:
            held[b] = held.get(b, 0) + late
        prev = now
    with open(out, "w") as f:
        f.write("t_s,late_max_us,held_us\n")
        for b in sorted(worst):
            if b >= 0:
                f.write(f"{(b + 1) * bin_ms / 1000:.6f},{worst[b] / 1000:.0f},{held.get(b, 0) / 1000:.0f}\n")


if __name__ == "__main__":
    main()
