#!/usr/bin/env bash
# pstrain against what a user with a dense model would pick instead of a
# parameter server: PyTorch DistributedDataParallel (gloo all-reduce, CPU,
# bench/peers/ddp_mnist.py), on the same job and machine. The job: MNIST,
# --model=mlp_relu (784-256-128-10, relu, glorot-uniform weights, zero
# biases, softmax cross-entropy), plain SGD at 0.3, batch 100 per worker,
# N worker processes on 127.0.0.1, the same number of training examples.
# Three systems, alternated within each of --repeats rounds:
#   async  pstrain --mode=async, --num_ps ps + N workers + the chief
#   sync   pstrain --mode=sync, every worker's gradient averaged per step
#          (--replicas_to_aggregate left at 0: all N), same tasks
#   ddp    N DDP ranks, the ranks' gradients averaged per step (as sync)
# Prints one markdown table (bench/peers/ddp_report.py): examples/s, seconds
# and examples to the target test accuracy, the final test accuracy and the
# whole run's wall time of each system (medians over the repeats, with the
# range), and the ratios pstrain / DDP (examples/s; for the time to target,
# DDP's seconds / pstrain's: above 1 pstrain is faster either way). 35-70 s
# per round at the defaults on 2 cores (more on a busy machine), once the
# venv exists.
#
#   bench/peers/ddp_run.sh [--num_workers=2] [--num_ps=2] [--batch_size=100]
#       [--learning_rate=0.3] [--target_accuracy=0.97] [--examples=300000]
#       [--eval_every_examples=25000] [--threads=1] [--seed=1] [--repeats=3]
#       [--systems=async,sync,ddp] [--data_dir=DIR] [--results=DIR]
#       [--no_install] [--torch_index_url=URL]
#
# --examples       training examples per run, the same for every system
#                  (300000: 5 epochs): async trains examples/batch global
#                  steps (one worker's batch each), sync and DDP
#                  examples/(batch*N) steps (N batches each)
# --eval_every_examples  the test set is evaluated every this many training
#                  examples in every system (pstrain: --eval_every_steps in
#                  its global steps; DDP: in its steps), so the time to target
#                  has the same resolution everywhere. pstrain's chief
#                  evaluates beside the training workers; DDP stops its ranks
#                  for it and leaves that time out of its training time
# --threads        pstrain's --intra_op_threads and DDP's
#                  torch.set_num_threads, per task (1: pstrain's default; 2
#                  DDP ranks of 1 thread fill 2 cores, see ddp_mnist.py)
# --data_dir       MNIST's four idx .gz files (default $MNIST_DIR)
# --results        where each run's output goes (async-R.log and async-R-run/
#                  with its metrics.jsonl, sync-R.*, ddp-R.json and ddp-R.log),
#                  with settings.json, results.jsonl and table.md (default
#                  results/peers-ddp)
#
# examples/s: pstrain's chief's examples_per_sec over the whole training
# (metrics.jsonl's last line: since the chief opened training); DDP's
# examples over its training time (after every rank is set up, evaluations
# left out). Time to target: pstrain's metrics.jsonl time of the first
# evaluation at or above the target; DDP's training time at its first such
# evaluation. DDP trains its whole budget (--run_to_budget) so that every
# final accuracy comes after the same examples.
#
# PyTorch comes from the venv $BUILD_DIR/peers-venv that bench/peers/run.sh
# makes and uses (default build/peers-venv): `torch` from PyPI is installed
# into it when missing (with CUDA's libraries: about 5 GB and 2-3 minutes;
# --torch_index_url takes another index, e.g. PyTorch's CPU wheels, where one
# can be reached); --no_install never calls pip. pstrain's binaries are built
# by scripts/build.sh when $BUILD_DIR/bin lacks them. The environment passes
# through (e.g. OMP_WAIT_POLICY), and the header gives the load average: on a
# 2-core machine shared with other work the figures measure it too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/bench/peers"
build="${BUILD_DIR:-$root/build}"
bin="${PST_BIN_DIR:-$build/bin}"
venv="$build/peers-venv"
results="$root/results/peers-ddp"
num_workers=2
num_ps=2
batch_size=100
learning_rate=0.3
target_accuracy=0.97
examples=300000
eval_every_examples=25000
threads=1
seed=1
repeats=3
systems=async,sync,ddp
data_dir="${MNIST_DIR:-}"
install=1
torch_index_url=""
for arg in "$@"; do
  case "$arg" in
    --num_workers=*) num_workers="${arg#*=}" ;;
    --num_ps=*) num_ps="${arg#*=}" ;;
    --batch_size=*) batch_size="${arg#*=}" ;;
    --learning_rate=*) learning_rate="${arg#*=}" ;;
    --target_accuracy=*) target_accuracy="${arg#*=}" ;;
    --examples=*) examples="${arg#*=}" ;;
    --eval_every_examples=*) eval_every_examples="${arg#*=}" ;;
    --threads=*) threads="${arg#*=}" ;;
    --seed=*) seed="${arg#*=}" ;;
    --repeats=*) repeats="${arg#*=}" ;;
    --systems=*) systems="${arg#*=}" ;;
    --data_dir=*) data_dir="${arg#*=}" ;;
    --results=*) results="${arg#*=}" ;;
    --no_install) install=0 ;;
    --torch_index_url=*) torch_index_url="${arg#*=}" ;;
    *) echo "ddp_run.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$num_workers" "$num_ps" "$batch_size" "$examples" "$eval_every_examples" \
  "$threads" "$repeats"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] ||
    { echo "ddp_run.sh: --num_workers, --num_ps, --batch_size, --examples," \
        "--eval_every_examples, --threads and --repeats must be positive integers (got '$n')" >&2
      exit 2; }
done
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "ddp_run.sh: --seed must be an integer >= 0" >&2; exit 2; }
for x in "$learning_rate" "$target_accuracy"; do
  [[ "$x" =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] ||
    { echo "ddp_run.sh: --learning_rate and --target_accuracy must be numbers (got '$x')" >&2
      exit 2; }
done
# Whole steps in every system: the examples and the evaluation interval are
# multiples of one synchronous step (N batches).
sync_examples=$((batch_size * num_workers))
if ((examples % sync_examples || eval_every_examples % sync_examples)); then
  echo "ddp_run.sh: --examples and --eval_every_examples must be multiples of" \
    "batch_size * num_workers = $sync_examples" >&2
  exit 2
fi
IFS=, read -ra system_list <<<"$systems"
for s in "${system_list[@]}"; do
  [[ "$s" == async || "$s" == sync || "$s" == ddp ]] ||
    { echo "ddp_run.sh: unknown system '$s' (async, sync, ddp)" >&2; exit 2; }
done
source "$root/scripts/lib/mnist.sh"
require_mnist ddp_run.sh "$data_dir" "pass --data_dir=DIR"
data_dir="$(cd "$data_dir" && pwd)"
mkdir -p "$results"
results="$(cd "$results" && pwd)"
rm -rf "$results"/async-*-run "$results"/sync-*-run
rm -f "$results"/async-*.log "$results"/sync-*.log "$results"/async-*.json "$results"/sync-*.json \
  "$results"/ddp-*.json "$results"/ddp-*.log "$results"/settings.json "$results"/results.jsonl \
  "$results"/table.md "$results"/build.log

# --- PyTorch's venv (as bench/peers/run.sh makes it) --------------------------
py="$venv/bin/python"
source "$root/scripts/lib/peer_venv.sh"
run_systems=()
for s in "${system_list[@]}"; do
  case "$s" in
    ddp) venv_install ddp torch torch -- ${torch_index_url:+--index-url "$torch_index_url"} &&
      run_systems+=(ddp) ;;
    *)
      if [[ ! -x "$bin/chief" || ! -x "$bin/ps" || ! -x "$bin/worker" ]] &&
        ! { echo "pstrain: building (no binaries in $bin)"
            "$root/scripts/build.sh" >"$results/build.log" 2>&1; }; then
        echo "skip $s: scripts/build.sh failed: $(grep -v '^ *$' "$results/build.log" | tail -1)"
      else
        run_systems+=("$s")
      fi
      ;;
  esac
done
((${#run_systems[@]})) || { echo "ddp_run.sh: no system can run" >&2; exit 1; }

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) cores, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "load average $(load)"
echo "job: MNIST mlp_relu, sgd $learning_rate, batch $batch_size per worker, $num_workers workers," \
  "$examples training examples, test set every $eval_every_examples, target $target_accuracy," \
  "$threads thread(s) per task, $repeats round(s) of: ${run_systems[*]}"
cat >"$results/settings.json" <<EOF
{"num_workers": $num_workers, "num_ps": $num_ps, "batch_size": $batch_size,
 "learning_rate": $learning_rate, "target_accuracy": $target_accuracy, "examples": $examples,
 "eval_every_examples": $eval_every_examples, "threads": $threads, "seed": $seed,
 "repeats": $repeats, "systems": "$(IFS=,; echo "${run_systems[*]}")", "data_dir": "$data_dir",
 "cores": $(nproc), "cpu": "$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | xargs)",
 "load_start": "$(load)", "commit": "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)",
 "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"}
EOF

now() { date +%s.%N; }
since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$(now)"; }
# run_pstrain MODE R: one pstrain run; its log, run folder and
# MODE-R.json ({"seconds": wall} or {"failed": reason}) in the results.
run_pstrain() {
  local mode="$1" r="$2" steps eval_steps per_step start rc=0
  per_step=$batch_size
  [[ "$mode" == sync ]] && per_step=$sync_examples
  steps=$((examples / per_step)) eval_steps=$((eval_every_examples / per_step))
  start=$(now)
  "$root/scripts/run_local.sh" --num_ps="$num_ps" --num_workers="$num_workers" --mode="$mode" \
    --model=mlp_relu --train_steps="$steps" --quiet --run_dir="$results/$mode-$r-run" -- \
    --data_dir="$data_dir" --batch_size="$batch_size" --learning_rate="$learning_rate" \
    --seed="$seed" --intra_op_threads="$threads" --eval_every_steps="$eval_steps" \
    --progress_every_secs=1 >"$results/$mode-$r.log" 2>&1 </dev/null || rc=$?
  local seconds
  seconds=$(since "$start")
  if ((rc != 0)); then
    local why
    why="$(grep -E 'failed \(exit [0-9]+\)' "$results/$mode-$r.log" | head -1 | cut -c1-300)"
    [[ -n "$why" ]] || why="$(grep -v '^ *$' "$results/$mode-$r.log" | tail -1 | cut -c1-300)"
    printf '{"failed": %s}\n' "$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' \
      "run_local.sh exited $rc: $why")" >"$results/$mode-$r.json"
    echo "  $mode: failed (run_local.sh exited $rc; log: $results/$mode-$r.log)"
  else
    printf '{"seconds": %s, "steps": %s, "examples_per_step": %s}\n' "$seconds" "$steps" \
      "$per_step" >"$results/$mode-$r.json"
    echo "  $mode: done in $seconds s"
  fi
}
run_ddp() {
  local r="$1" start
  start=$(now)
  if "$py" "$here/ddp_mnist.py" --data_dir="$data_dir" --num_workers="$num_workers" \
    --batch_size="$batch_size" --learning_rate="$learning_rate" --threads="$threads" \
    --target_accuracy="$target_accuracy" --train_steps=$((examples / sync_examples)) \
    --eval_every_steps=$((eval_every_examples / sync_examples)) --run_to_budget \
    --seed="$seed" >"$results/ddp-$r.json" 2>"$results/ddp-$r.log" </dev/null; then
    echo "  ddp: done in $(since "$start") s"
  else
    echo "  ddp: failed: $(grep -v '^ *$' "$results/ddp-$r.log" | tail -1 | cut -c1-300)"
    printf '{"failed": %s}\n' "$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' \
      "ddp_mnist.py: $(grep -v '^ *$' "$results/ddp-$r.log" | tail -1 | cut -c1-300)")" \
      >"$results/ddp-$r.json"
  fi
}
# Round r runs every system once, so that each ratio's two sides are
# measured seconds apart on a machine whose load changes.
for ((r = 1; r <= repeats; r++)); do
  echo "round $r/$repeats (load average $(load))"
  for s in "${run_systems[@]}"; do
    case "$s" in
      ddp) run_ddp "$r" ;;
      *) run_pstrain "$s" "$r" ;;
    esac
  done
done
echo "load average at the end: $(load)"
echo
python3 "$here/ddp_report.py" "$results" | tee "$results/table.md"
