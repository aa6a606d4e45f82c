#!/usr/bin/env bash
# Builds benches/gpu/sort_lab.cu (keys alone, and with payloads) and runs it at the benchmark's
# size and at sizes that end in a partial tile, ascending and descending, with and without
# many equal keys. Run from the repository root on the GPU machine.
set -euo pipefail
out=${OUT:-/tmp}/sort_lab
mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90 -o "$out/keys" benches/gpu/sort_lab.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -DEF_VALS=1 -o "$out/vals" benches/gpu/sort_lab.cu &
wait
"$out/keys"
"$out/keys" $((1 << 26)) 1 | tail -1
"$out/keys" 1000003 0 dup | tail -1
"$out/keys" 6145 | tail -1
"$out/keys" 1 | tail -1
"$out/vals" | tail -1
"$out/vals" 3000017 1 dup | tail -1
