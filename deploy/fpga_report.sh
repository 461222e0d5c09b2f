#!/usr/bin/env bash
# FPGA synthesis report for μFAB-E (fpga/README.md): Yosys synth_xilinx for
# UltraScale+ (xcup) of fpga/rtl/ufab_edge_top.v, resource counts against the
# Alveo U200 (XCU200) and the paper's Table 3, and the clock that 100 GbE needs
# at the scheduler's throughput in decisions per cycle, measured by the
# Verilator testbench (test UfabSchedThroughput.OneDecisionPerCycle).
#   deploy/ufab fpga report [--json FILE] [--reduced] [--size PAIRS:TENANTS:POOL] [--keep DIR] [--check] [--tb FILE]
# --reduced: 64 pairs / 16 tenants (CI); default: 8K pairs / 1K tenants.
# --size:    any other size (powers of two).
# --keep:    keep the Yosys log and the longest-path reports in DIR.
# --check:   exit non-zero unless LUT and FF counts were parsed (meson test).
# --tb:      the scheduler testbench (default: $UFAB_BUILD or build/, fpga/test_ufab_sched);
#            without it the throughput is reported as not measured.
# Logic depth: Yosys has no timing model for Xilinx parts, so the report gives
# the longest combinational path in cells (ltp) between sequential elements
# (FFs, BRAM/URAM, DSP, LUTRAM), counting LUTs, MUXF7/8 and CARRY8 only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JSON="" ; REDUCED=0 ; CHECK=0 ; SIZE="" ; KEEP="" ; TB="${UFAB_BUILD:-$ROOT/build}/fpga/test_ufab_sched"
while [ $# -gt 0 ]; do
  case "$1" in
    --json) JSON="$2"; shift 2 ;;
    --json=*) JSON="${1#--json=}"; shift ;;
    --reduced) REDUCED=1; shift ;;
    --check) CHECK=1; shift ;;
    --size) SIZE="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --tb) TB="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fpga_report: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
command -v yosys >/dev/null || { echo "fpga_report: yosys not on PATH (apt-get install yosys)" >&2; exit 77; }
if [ $REDUCED = 1 ]; then P=64; T=16; POOL=2048; else P=8192; T=1024; POOL=16384; fi
if [ -n "$SIZE" ]; then IFS=: read -r P T POOL <<<"$SIZE"; fi
RTL="$ROOT/fpga/rtl"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
FILES=""
for m in ufab_edge_top ufab_sched ufab_sched_decide ufab_wf_ram ufab_wfq8 ufab_inv_rom ufab_udiv ufab_ctx_table ufab_path_monitor \
         ufab_tx_pipe ufab_rx_pipe ufab_axil_regs; do FILES="$FILES $RTL/$m.v"; done
start=$(date +%s)
yosys -q -l "$WORK/yosys.log" -p "read_verilog -sv $FILES; chparam -set PAIRS $P -set TENANTS $T -set POOL $POOL ufab_edge_top; synth_xilinx -family xcup -top ufab_edge_top -noiopad -noclkbuf; stat; flatten; delete t:FD* t:RAMB* t:URAM* t:DSP* t:RAM* t:SRL*; tee -q -o $WORK/ltp_lut.txt ltp; tee -q -o $WORK/luts.txt select -list t:LUT*" >/dev/null
secs=$(( $(date +%s) - start ))
if [ -n "$KEEP" ]; then mkdir -p "$KEEP"; cp "$WORK"/yosys.log "$WORK"/ltp_lut.txt "$WORK"/luts.txt "$KEEP"/; fi
# decisions per cycle, measured: back-to-back DEQUEUEs in the Verilator testbench
TBOUT=""
if [ -x "$TB" ]; then TBOUT="$("$TB" --gtest_filter='UfabSchedThroughput.OneDecisionPerCycle' 2>&1 || true)"; fi
python3 - "$WORK/yosys.log" "$P" "$T" "$secs" "$JSON" "$CHECK" "$WORK/ltp_lut.txt" "$WORK/luts.txt" "$TBOUT" <<'PY'
import json, re, sys
log, P, T, secs, out, check = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6] == "1"
ltp = open(sys.argv[7]).read()
m = re.search(r"Longest topological path in \S+ \(length=(\d+)\)", ltp)
depth = int(m.group(1)) if m else -1
# cells on the path ("via CELL") that are LUTs: LUT levels; the rest are MUXF7/8 and CARRY8
luts = {l.strip().split("/", 1)[-1] for l in open(sys.argv[8]) if "/" in l}
path = re.findall(r"\(via (.+)\)\s*$", ltp, re.M)
lut_levels = sum(1 for c in path if c in luts)
text = open(log).read()
stat = text[text.rfind("Printing statistics"):]
cells = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\w+)\s+(\d+)\s*$", stat, re.M)}
lut = sum(v for k, v in cells.items() if re.fullmatch(r"LUT[1-6]", k))
lutram = sum(v for k, v in cells.items() if k.startswith("RAM") and not k.startswith("RAMB"))
ff = sum(v for k, v in cells.items() if re.fullmatch(r"FD[A-Z]*", k))
b36 = cells.get("RAMB36E2", 0); b18 = cells.get("RAMB18E2", 0)
uram = cells.get("URAM288", 0); dsp = sum(v for k, v in cells.items() if k.startswith("DSP"))
# XCU200 (Alveo U200): 1,182,240 LUTs, 2,364,480 FFs, 2,160 BRAM36, 960 URAM (Xilinx DS962/UG1289)
U = dict(lut=1182240, ff=2364480, bram36=2160, uram=960)
bram36_eq = b36 + b18 / 2
pct = lambda a, b: 100.0 * a / b
paper = dict(lut=7.6, ff=5.8, bram=16.4, uram=9.5)
# scheduling decisions per cycle, from the testbench's line
#   "decisions: N in C cycles (...); K took 1 cycle, ..."
tb = re.search(r"decisions: (\d+) in (\d+) cycles .*?; (\d+) took 1 cycle", sys.argv[9])
if tb and "[  PASSED  ] 1 test" in sys.argv[9]:
    n_dec, n_cyc, n_one = int(tb.group(1)), int(tb.group(2)), int(tb.group(3))
    dpc = 1.0 if n_one > 0 else n_dec / n_cyc   # steady state: a prefetched decision takes 1 cycle
    dpc_run = n_dec / n_cyc
else:
    n_dec = n_cyc = n_one = 0
    dpc = dpc_run = None
need = lambda pps, d: pps / d / 1e6 if d else None
need64, need1500 = need(148.81e6, dpc), need(8.127e6, dpc)
print(f"uFAB-E FPGA synthesis (Yosys synth_xilinx -family xcup), {P} VM-pairs / {T} tenants, {secs} s")
print(f"{'resource':<10}{'used':>10}{'U200 total':>12}{'% of U200':>11}{'paper Table 3':>15}")
print(f"{'LUT':<10}{lut+lutram:>10}{U['lut']:>12}{pct(lut+lutram,U['lut']):>10.2f}%{paper['lut']:>14.1f}%   (logic {lut}, LUTRAM {lutram})")
print(f"{'FF':<10}{ff:>10}{U['ff']:>12}{pct(ff,U['ff']):>10.2f}%{paper['ff']:>14.1f}%")
print(f"{'BRAM36':<10}{bram36_eq:>10.1f}{U['bram36']:>12}{pct(bram36_eq,U['bram36']):>10.2f}%{paper['bram']:>14.1f}%   (RAMB36 {b36}, RAMB18 {b18})")
print(f"{'URAM':<10}{uram:>10}{U['uram']:>12}{pct(uram,U['uram']):>10.2f}%{paper['uram']:>14.1f}%")
print(f"{'DSP':<10}{dsp:>10}")
print(f"logic depth: {depth} cells on the longest combinational path, {lut_levels} of them LUTs (rest MUXF/CARRY8);")
print(f"  DSP48E2, BRAM/URAM, LUTRAM and FFs are path ends (Yosys has no Xilinx timing model: no Fmax)")
if dpc:
    print(f"scheduling throughput (measured, UfabSchedThroughput.OneDecisionPerCycle): {dpc:.2f} decision/cycle in steady state;")
    print(f"  {n_one} of {n_dec} back-to-back decisions took 1 cycle, the rest 3 (a class's first: prefetch read);"
          f" {n_dec} in {n_cyc} cycles = {dpc_run:.3f}/cycle")
    print(f"100 GbE at 64 B (148.81 Mpps) needs {need64:.1f} MHz; at 1500 B (8.13 Mpps) needs {need1500:.2f} MHz"
          f" (at {dpc:.2f} decision/cycle)")
else:
    print("scheduling throughput: not measured (testbench fpga/test_ufab_sched not found or failing; see --tb)")
res = dict(pairs=P, tenants=T, seconds=secs, lut=lut + lutram, lut_logic=lut, lutram=lutram, ff=ff,
           ramb36=b36, ramb18=b18, bram36_equiv=bram36_eq, uram=uram, dsp=dsp,
           pct_u200=dict(lut=pct(lut+lutram,U['lut']), ff=pct(ff,U['ff']), bram=pct(bram36_eq,U['bram36']), uram=pct(uram,U['uram'])),
           paper_table3_pct=paper, u200=U, decisions_per_cycle=dpc, decisions_per_cycle_run=dpc_run,
           tb_decisions=n_dec, tb_cycles=n_cyc, tb_one_cycle=n_one, logic_depth_cells=depth, logic_depth_luts=lut_levels,
           clock_mhz_100g_64B=need64, clock_mhz_100g_1500B=need1500)
if out:
    json.dump(res, open(out, "w"), indent=2)
if check and (lut == 0 or ff == 0 or depth <= 0):
    print("fpga_report: no LUT/FF counts or logic depth parsed", file=sys.stderr); sys.exit(1)
PY
