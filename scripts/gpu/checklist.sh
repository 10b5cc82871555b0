#!/usr/bin/env bash
# The GPU checklist, run on a GPU machine from the repository root over a
# bundle made by scripts/gpu/bundle.sh (binaries, their libraries, MNIST):
#
#   scripts/gpu/checklist.sh BUNDLE OUT_DIR [STEPS]   (STEPS: e.g. 1,2,4; default all)
#
#  1. gpu_kernels_test: every GPU kernel against the CPU kernels.
#  2. bench_kernels on gpu:0 and the CPU: examples/s of mlp_relu, cnn and
#     wide_mlp at batch 64 and 512.
#  3. The same in PyTorch eager on the same GPU (bench/peers/peers.py), all
#     on the GPU and as a ps worker's step (--host_params), and the table
#     of pstrain / PyTorch ratios (ratio_table.py).
#  4. A sync cnn cluster on the GPU (1 ps, 2 workers on gpu:0, N=2) trained
#     to its test accuracy; one worker with in-graph replicas (gpu:0,gpu:0);
#     the cnn with batch norm (examples/mnist_cnn_bn.spec), sync, N=2.
#  5. compute-sanitizer memcheck over gpu_kernels_test.
#  6. --gpu_memory_fraction: a model that does not fit is a clear error.
#  7. CPU scaling: async mlp_relu, 1 ps, 1/2/4/8 workers (PST_SCALE_WORKERS),
#     examples/s (PST_SCALE_PS: ps tasks; PST_SCALE_FLAGS: flags of every task).
# Each step's output goes to OUT_DIR/N_*.log; OUT_DIR/summary.txt has the
# verdicts and figures. CUDA's libraries (cudart, cuBLAS, cuDNN) are found on
# the machine (its toolkit or PyTorch's nvidia-* wheels).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$1" out="$2" steps=",${3:-1,2,3,4,5,6,7},"
work=/tmp/pst-gpu
rm -rf "$work" && mkdir -p "$work" "$out" && tar -xJf "$bundle" -C "$work" || exit 1
bin="$work/bin" mnist="$work/mnist"
summary="$out/summary.txt"
say() { echo "$*" | tee -a "$summary"; }
want() { [[ "$steps" == *",$1,"* ]]; }

libs="$work/lib"
# A folder holding all of `names` (cuBLAS and cuBLASLt must come from one).
lib_dir() {
  local dir name
  for dir in $(find /usr/local /opt /usr/lib -name "$1" -printf '%h\n' 2>/dev/null); do
    for name in "$@"; do [[ -e "$dir/$name" ]] || continue 2; done
    echo "$dir" && return
  done
  say "checklist: no folder with $* on this machine" && exit 1
}
libs+=":$(lib_dir libcudart.so.13):$(lib_dir libcublas.so.13 libcublasLt.so.13):$(lib_dir libcudnn.so.9)"
# Only pstrain's programs see the bundle's libraries (PyTorch keeps its own).
# A local cluster, stopped (SIGTERM: run_local.sh stops its tasks) after 240 s.
cluster() { PST_BIN_DIR="$bin" LD_LIBRARY_PATH="$libs" timeout 240 "$root/scripts/run_local.sh" "$@"; }

say "checklist: $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
say "libraries: $libs"

if want 1; then
  timeout 180 env LD_LIBRARY_PATH="$libs" "$bin/gpu_kernels_test" >"$out/1_gpu_tests.log" 2>&1
  say "1 gpu_kernels_test: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ? \] [0-9]+ test' "$out/1_gpu_tests.log" | tr '\n' ' '))"
fi

if want 2 || want 3; then
  for batch in 64 512; do
    table=true; [[ $batch == 64 ]] || table=false
    timeout 240 env LD_LIBRARY_PATH="$libs" "$bin/bench_kernels" --models=mlp_relu,cnn,wide_mlp \
      --batch_size=$batch --repeats=3 --train_repeat_s=0.5 --kernel_table=$table \
      >"$out/2_bench_b$batch.log" 2>&1
    say "2 bench_kernels batch $batch: exit $?"
  done
fi

if want 3; then
  for mode in eager host; do
    flags=(); [[ $mode == eager ]] || flags=(--host_params)
    timeout 180 python3 "$root/bench/peers/peers.py" --peer=torch --device=cuda "${flags[@]}" \
      --models=mlp_relu,cnn,wide_mlp --batch_sizes=64,512 --repeats=3 --train_repeat_s=0.5 \
      >"$out/3_torch_$mode.jsonl" 2>"$out/3_torch_$mode.err"
    say "3 PyTorch peer ($mode): exit $?"
  done
  python3 "$root/scripts/gpu/ratio_table.py" "$out"/2_bench_b*.log \
    --torch "$out/3_torch_eager.jsonl" --torch_host "$out/3_torch_host.jsonl" | tee -a "$summary"
fi

final() {  # the chief's report lines of a run's log
  grep -E '^\[chief\] (Test-Accuracy|Total Time|Global-Step)|run_local.sh: chief exited' "$1" | tr '\n' ' '
}

if want 4; then
  cluster --num_ps=1 --num_workers=2 --mode=sync --replicas_to_aggregate=2 --model=cnn \
    --train_steps=3000 --run_dir="$work/runs/sync_cnn" --quiet -- --device=gpu:0 \
    --data_dir="$mnist" --optimizer=momentum --learning_rate=0.03 --lr_schedule=cosine \
    --lr_decay_steps=3000 >"$out/4_sync_cnn.log" 2>&1
  say "4 sync cnn on gpu:0, 1 ps, 2 workers, N=2, 3000 steps: exit $?: $(final "$out/4_sync_cnn.log")"
  cluster --num_ps=1 --num_workers=1 --mode=async --model=cnn --train_steps=1000 \
    --run_dir="$work/runs/replicas" --quiet -- --device=gpu:0,gpu:0 --data_dir="$mnist" \
    >"$out/4_replicas.log" 2>&1
  say "4 one worker, --device=gpu:0,gpu:0, 1000 async steps: exit $?: $(final "$out/4_replicas.log")"
  cluster --num_ps=1 --num_workers=2 --mode=sync --replicas_to_aggregate=2 --train_steps=1500 \
    --run_dir="$work/runs/sync_cnn_bn" --quiet -- --device=gpu:0 --data_dir="$mnist" \
    --model_spec="$root/examples/mnist_cnn_bn.spec" --optimizer=momentum --learning_rate=0.05 \
    --lr_schedule=cosine --lr_decay_steps=1500 >"$out/4_sync_cnn_bn.log" 2>&1
  say "4 sync cnn with batch norm on gpu:0, N=2, 1500 steps: exit $?: $(final "$out/4_sync_cnn_bn.log")"
fi

if want 6; then
  cluster --num_ps=1 --num_workers=1 --mode=async --model=wide_mlp --train_steps=100 \
    --run_dir="$work/runs/fraction" --quiet -- --device=gpu:0 --gpu_memory_fraction=0.00001 \
    --data_dir="$mnist" >"$out/6_memory_fraction.log" 2>&1
  status=$?
  cp "$work/runs/fraction/worker-0.log" "$out/6_worker.log" 2>/dev/null
  say "6 --gpu_memory_fraction=0.00001, wide_mlp: exit $status (want non-zero); worker: $(grep -m1 -iE 'gpu_memory_fraction|ResourceExhausted|Check failed|Segmentation' "$work/runs/fraction"/worker-0*.log)"
fi

# Background: memcheck (one core, the GPU) beside the CPU scaling runs. API
# errors are not reported: FirstErrorIsKeptUntilTaken provokes one on purpose
# (and the test fails on any it does not expect).
if want 5; then
  (timeout 240 env LD_LIBRARY_PATH="$libs" compute-sanitizer --tool memcheck --leak-check full \
    --report-api-errors no \
    --error-exitcode 99 "$bin/gpu_kernels_test" >"$out/5_memcheck.log" 2>&1
   echo "5 compute-sanitizer memcheck: exit $? ($(grep -E 'ERROR SUMMARY' "$out/5_memcheck.log" | tail -1))" \
     >"$work/memcheck.verdict") &
  memcheck_pid=$!
fi

# PST_SCALE_PS ps tasks (1) and PST_SCALE_FLAGS (extra task flags) vary it.
if want 7; then
  # mlp_relu's own rate (0.3) diverged with 8 async workers (their staleness).
  say "7 CPU scaling, async mlp_relu, ${PST_SCALE_PS:-1} ps ${PST_SCALE_FLAGS:-}, batch 100, rate 0.05 (median of the chief's 1 s progress lines):"
  say "$(printf '%8s %12s %8s %11s' workers examples/s speedup efficiency)"
  base=""
  for workers in ${PST_SCALE_WORKERS:-1 2 4 8}; do
    log="$out/7_scale${PST_SCALE_PS:-1}ps_$workers.log"
    # shellcheck disable=SC2086  # PST_SCALE_FLAGS is a list of flags
    cluster --num_ps="${PST_SCALE_PS:-1}" --num_workers=$workers --mode=async --model=mlp_relu \
      --train_steps=$((4000 * workers)) --run_dir="$work/runs/scale$workers" -- \
      --device=cpu --progress_every_secs=1 --learning_rate=0.05 --data_dir="$mnist" \
      ${PST_SCALE_FLAGS:-} >"$log" 2>&1
    rate="$(grep -oE '[0-9]+ examples/s' "$log" | awk '$1 > 0 { print $1 }' |
      sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }')"
    [[ -n "$base" ]] || base="$rate"
    say "$(awk -v w=$workers -v r="$rate" -v b="$base" 'BEGIN { printf "%8d %12d %8.2f %11.2f", w, r, r / b, r / b / w }')"
  done
fi

if want 5; then
  wait "$memcheck_pid"
  say "$(cat "$work/memcheck.verdict")"
fi
say "checklist: done $(date -u +%FT%TZ)"
