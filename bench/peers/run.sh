#!/usr/bin/env bash
# pstrain against the frameworks users would pick instead, on CPU: the
# training step of bench_kernels (forward, backward and plain SGD of
# mlp_relu and cnn on synthetic data) timed in pstrain and, where they can be
# installed, in PyTorch and TensorFlow (bench/peers/peers.py), at each thread
# count and batch size. Prints one table: examples/s of pstrain (per cpu
# kernels: Eigen, oneDNN), of each peer, and every pstrain / peer ratio;
# then the smallest ratio per pair ("min_ratio cpu/onednn / tensorflow: X").
#
#   bench/peers/run.sh [--quick] [--bench_kernels=PATH] [--threads=1,2]
#                      [--batch_sizes=64,100] [--peers=torch,tensorflow]
#                      [--repeats=N] [--train_repeat_s=S] [--results=DIR]
#                      [--no_install] [--torch_index_url=URL]
#
# The peers live in a venv, $BUILD_DIR/peers-venv (default build/peers-venv),
# made on the first run: `torch` and `tensorflow-cpu` (else `tensorflow`)
# from PyPI, each on its own, so one that cannot be installed is skipped with
# a one-line reason and the others still run. PyPI's torch brings CUDA's
# libraries: the venv takes about 7 GB (torch 5.4, tensorflow-cpu 1.4) and
# 2-3 minutes to make; --torch_index_url takes another index where one can
# be reached, e.g. PyTorch's CPU wheels. Later runs reuse the venv;
# --no_install never calls pip.
#
# Each framework runs as a user would get it: the environment passes through,
# so e.g. TF_ENABLE_ONEDNN_OPTS=1 turns TensorFlow's oneDNN ops on where its
# default leaves them off (the table's header says which), and
# OMP_WAIT_POLICY=passive stops OpenMP's spin-waiting (pstrain's oneDNN and
# PyTorch both use OpenMP). On a busy machine the 2-thread figures mostly
# measure the contention: the header gives the load average.
#
# --bench_kernels  pstrain's benchmark (default $BUILD_DIR/bin/bench_kernels)
# --threads        thread counts: oneDNN's --intra_op_threads in pstrain
#                  (the Eigen kernels use one thread), intra-op threads in
#                  the peers (inter-op: 1); each peer and count in its own
#                  process, as thread settings hold for a process
# --quick          shorter timed repeats (0.2 s instead of 1 s): about a
#                  minute once the venv exists, noisier
# --results        where the raw outputs, results.jsonl and table.md go
#                  (default results/peers)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/bench/peers"
build="${BUILD_DIR:-$root/build}"
bench_kernels="$build/bin/bench_kernels"
venv="$build/peers-venv"
results="$root/results/peers"
threads=1,2
batch_sizes=64,100
peers=torch,tensorflow
repeats=3
train_repeat_s=1.0
install=1
torch_index_url=""
for arg in "$@"; do
  case "$arg" in
    --quick) train_repeat_s=0.2 ;;
    --bench_kernels=*) bench_kernels="${arg#*=}" ;;
    --threads=*) threads="${arg#*=}" ;;
    --batch_sizes=*) batch_sizes="${arg#*=}" ;;
    --peers=*) peers="${arg#*=}" ;;
    --repeats=*) repeats="${arg#*=}" ;;
    --train_repeat_s=*) train_repeat_s="${arg#*=}" ;;
    --results=*) results="${arg#*=}" ;;
    --no_install) install=0 ;;
    --torch_index_url=*) torch_index_url="${arg#*=}" ;;
    *) echo "run.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
IFS=, read -ra thread_list <<<"$threads"
IFS=, read -ra batch_list <<<"$batch_sizes"
IFS=, read -ra peer_list <<<"$peers"
for p in "${peer_list[@]}"; do
  [[ "$p" == torch || "$p" == tensorflow ]] ||
    { echo "run.sh: unknown peer '$p' (torch, tensorflow)" >&2; exit 2; }
done
if [[ ! -x "$bench_kernels" ]]; then
  echo "run.sh: no bench_kernels at $bench_kernels: build it (scripts/build.sh)" \
    "or name it with --bench_kernels=PATH" >&2
  exit 1
fi
mkdir -p "$results"
rm -f "$results"/bench_kernels-t*-b*.txt "$results"/bench_kernels-*.log \
  "$results"/*-t*.jsonl "$results"/*-t*.log "$results"/results.jsonl "$results"/table.md

# --- the peers' venv ------------------------------------------------------
py="$venv/bin/python"
source "$root/scripts/lib/peer_venv.sh"
ready_peers=()
for p in "${peer_list[@]}"; do
  case "$p" in
    torch) venv_install torch torch torch -- ${torch_index_url:+--index-url "$torch_index_url"} &&
      ready_peers+=(torch) ;;
    tensorflow) venv_install tensorflow tensorflow tensorflow-cpu tensorflow &&
      ready_peers+=(tensorflow) ;;
  esac
done

# --- the runs ----------------------------------------------------------------
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) cores, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512_bf16|amx_tile)$' | xargs)," \
  "load average $(load)"
echo "pstrain: $("$bench_kernels" --version)"
# Per thread count, pstrain and then each peer, so that a ratio's two sides
# are measured minutes apart at most on a machine whose load changes.
for t in "${thread_list[@]}"; do
  for b in "${batch_list[@]}"; do
    echo "pstrain: ${t} thread(s), batch $b"
    # Its kernel table comes first and cannot be left out: a short
    # --kernel_repeat_s keeps it to a few seconds.
    if ! "$bench_kernels" --batch_size="$b" --intra_op_threads="$t" \
      --repeats="$repeats" --train_repeat_s="$train_repeat_s" --kernel_repeat_s=0.002 \
      >"$results/bench_kernels-t$t-b$b.txt" 2>"$results/bench_kernels-t$t-b$b.log"; then
      echo "run.sh: bench_kernels failed at $t thread(s), batch $b:" \
        "$(tail -1 "$results/bench_kernels-t$t-b$b.log")" >&2
      exit 1
    fi
  done
  for p in "${ready_peers[@]}"; do
    echo "$p: ${t} thread(s)"
    if ! "$py" "$here/peers.py" --peer="$p" --threads="$t" --batch_sizes="$batch_sizes" \
      --repeats="$repeats" --train_repeat_s="$train_repeat_s" \
      >"$results/$p-t$t.jsonl" 2>"$results/$p-t$t.log"; then
      echo "skip $p at $t thread(s): peers.py failed: $(grep -v '^ *$' "$results/$p-t$t.log" | tail -1)"
    fi
  done
done
echo "load average at the end: $(load)"
echo
python3 "$here/report.py" "$results" | tee "$results/table.md"
