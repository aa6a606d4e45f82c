#!/usr/bin/env bash
# Whole programs on the GPU machine, both sides in one run: benches/apps.rs (emberfire) beside
# ../shared/bench/apps.py (CuPy, PyTorch, torch.compile, JAX), warm and cold, then one table.
#
#   bash benches/gpu/apps.sh BENCH_APPS APPS_PY [--quick] [--cases a,b] [--no-cold]
#
# BENCH_APPS is the built `apps` bench binary, APPS_PY the peers' script. Results go to $OUT
# (default /tmp/apps): apps_ours.txt, apps.txt (the peers' warm lines), apps_cold.txt (every
# cold line) and table.txt.
#
# Cold runs, one fresh process each: emberfire with an empty kernel cache ("cold"), then again
# with the cache that run filled ("disk"); each peer with fresh compile caches of its own
# (torch.compile's and Triton's in an empty folder; JAX and CuPy keep none on disk by default).
set -uo pipefail
bin=$1 py=$2; shift 2
quick="" cases="" cold=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=--quick ;;
    --cases) cases=$2; shift ;;
    --no-cold) cold=0 ;;
  esac
  shift
done
export OUT=${OUT:-/tmp/apps}; mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
all="pi_f32 mc_barrier_f32 kmeans_f32 nbody_f32 conway_u8 heat2d_f32 cg_poisson_f32"
list=${cases:-$all}; list=${list//,/ }
sel=(); [[ -n $cases ]] && sel=(--cases "$cases")

scratch=$(mktemp -d)
export EMBERFIRE_KERNEL_CACHE=$scratch/warm
"$bin" $quick "${sel[@]}" | tee "$OUT/apps_ours.txt"
python3 "$py" $quick "${sel[@]}" 2>&1 | grep -v -i warn

if [[ $cold == 1 ]]; then
  : > "$OUT/apps_cold.txt"
  for c in $list; do
    kc=$scratch/cold-$c
    for run in cold disk; do
      EMBERFIRE_KERNEL_CACHE=$kc "$bin" --cold "$c" | sed "s/impl=emberfire/impl=emberfire-$run/" \
        | tee -a "$OUT/apps_cold.txt"
    done
    for impl in torch torch.compile cupy jax.jit; do
      TORCHINDUCTOR_CACHE_DIR=$scratch/ind-$c-$impl TRITON_CACHE_DIR=$scratch/tri-$c-$impl \
        python3 "$py" --cold "$c" "$impl" 2>&1 | grep "^case=" > /dev/null
    done
  done
fi
python3 "$here/apps_table.py" "$OUT/apps_ours.txt" "$OUT/apps.txt" "$OUT/apps_cold.txt" | tee "$OUT/table.txt"
rm -rf "$scratch"
