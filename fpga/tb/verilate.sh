#!/bin/sh
# Verilates one RTL top into a C++ model for a GoogleTest harness (meson
# custom_target, fpga/meson.build). Usage:
#   verilate.sh OUTDIR TOP [verilator args: -G params, sources...]
# Produces in OUTDIR: V<TOP>.h and libV<TOP>.a (the model; the Verilator
# runtime, verilated.cpp, is one static library built by meson).
set -eu
out="$1"; top="$2"; shift 2
mdir="$out/V${top}_obj"
rm -rf "$mdir"
verilator --cc --build -j 2 -Wall --Mdir "$mdir" --top-module "$top" --prefix "V$top" \
  -CFLAGS "-fPIC -w" -MAKEFLAGS "OPT_FAST=-O2" "$@" >"$out/V${top}.log" 2>&1 || { cat "$out/V${top}.log" >&2; exit 1; }
cp "$mdir"/V"$top"*.h "$out"/  # the model and (for public signals) its root class
cp "$mdir/V${top}__ALL.a" "$out/libV$top.a"
