#!/usr/bin/env bash
# Replays the P4 conformance vectors through bmv2 simple_switch running the
# v1model twin (p4/bmv2/ufab_v1model.p4). Registered as the meson test
# p4_bmv2_replay. Exits 77 (meson: skipped) when the tools are missing, so it
# never passes without having run. Usage: replay_bmv2.sh SRC_ROOT VECTORS_DIR WORK_DIR
set -euo pipefail
src=${1:?source root}; vectors=${2:?vectors dir}; work=${3:?work dir}

missing=()
for tool in p4c simple_switch simple_switch_CLI python3 ip; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
  echo "SKIP: p4c/simple_switch not on PATH (missing: ${missing[*]}; neither is packaged in Debian 12, see p4/README.md)"
  exit 77
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: p4c/simple_switch found, but creating veth pairs needs root"
  exit 77
fi

mkdir -p "$work"
# The vectors use a 16-bucket table per bank (tests/p4/vectors/*/case.json config).
p4c --target bmv2 --arch v1model -DUFAB_BUCKETS_LOG2=4 -I "$src/p4/include" \
    -o "$work" "$src/p4/bmv2/ufab_v1model.p4"
exec python3 "$src/tests/p4/bmv2_replay.py" --json "$work/ufab_v1model.json" \
    --runtime "$src/p4/bmv2/runtime.txt" --vectors "$vectors" --work "$work"
