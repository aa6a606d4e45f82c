#!/usr/bin/env bash
# One process per GPU on a machine with two or more GPUs, everything in one run: the checks
# (two processes on two GPUs; two "machines" on one host forced onto NCCL's network transport)
# and the speed beside PyTorch (all-reduce bus bandwidth of 1 GiB f32; the sharded chain_f32
# across processes beside the one-process figure).
#
#   bash benches/gpu/processes.sh BIN_DIR [--quick]
#
# BIN_DIR holds the bundle's binaries (`.gpu-bundle/bin`: test-data, example-one_process_per_gpu,
# bench-processes, bench-multi_gpu). torchrun is PyTorch's (`python3 -m torch.distributed.run`).
# Output goes to $OUT (default /tmp/processes): one log per step and summary.txt.
set -uo pipefail
bin=${1:?the bundle's bin folder}; shift
quick=${1:-}
here=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/processes}; mkdir -p "$OUT"
# NVLink multicast is not available to every container; NCCL falls back without it.
export NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L | wc -l)
torchrun=(python3 -m torch.distributed.run --no-python)
summary=$OUT/summary.txt; : >"$summary"
step() { echo "== $*" | tee -a "$summary"; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

step "checks: $gpus processes, one per GPU (test-data process_group)"
timeout 300 "$bin/test-data" --exact process_group::a_group_of_processes_joins_a_communicator_and_combines_arrays \
  >"$OUT/test_group.log" 2>&1; echo "rc=$?" | tee -a "$summary"
timeout 300 "${torchrun[@]}" --nproc-per-node "$gpus" "$bin/example-one_process_per_gpu" \
  >"$OUT/example_torchrun.log" 2>&1; echo "torchrun example rc=$?" | tee -a "$summary"
grep -h "results checked" "$OUT/example_torchrun.log" | tee -a "$summary"

step "checks: two machines simulated on one host, NCCL over sockets on lo"
p=$(port)
for node in 0 1; do
  CUDA_VISIBLE_DEVICES=$node NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo \
    timeout 300 "${torchrun[@]}" --nnodes 2 --node-rank $node --nproc-per-node 1 \
    --master-addr 127.0.0.1 --master-port "$p" "$bin/example-one_process_per_gpu" \
    >"$OUT/example_two_nodes_$node.log" 2>&1 &
done
wait; grep -h "results checked\|Error\|panicked" "$OUT"/example_two_nodes_*.log | tee -a "$summary"

step "speed: emberfire, one process per GPU"
timeout 300 "${torchrun[@]}" --nproc-per-node "$gpus" "$bin/bench-processes" $quick 2>&1 \
  | tee "$OUT/ours.txt" | grep case= | tee -a "$summary"
step "speed: emberfire, one process, every GPU"
timeout 300 "$bin/bench-multi_gpu" $quick 2>&1 | grep case= | tee -a "$summary"
step "speed: PyTorch, one process per GPU"
timeout 300 python3 "$here/nccl_torch.py" $quick 2>&1 | grep case= | tee -a "$summary"
step "speed: emberfire, two machines simulated (network transport)"
p=$(port)
for node in 0 1; do
  CUDA_VISIBLE_DEVICES=$node NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo \
    timeout 300 "${torchrun[@]}" --nnodes 2 --node-rank $node --nproc-per-node 1 \
    --master-addr 127.0.0.1 --master-port "$p" "$bin/bench-processes" $quick \
    >"$OUT/bench_two_nodes_$node.log" 2>&1 &
done
wait; grep -h case= "$OUT"/bench_two_nodes_*.log | tee -a "$summary"
