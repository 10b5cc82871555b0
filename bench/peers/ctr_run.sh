#!/usr/bin/env bash
# pstrain against TensorFlow 1's parameter-server training on a sparse click
# job: the same model (--model=wide_deep, the default: a [ROWS, 1] wide table
# and a [ROWS, 8] embedding table, both partitioned over the ps tasks, an MLP
# 64-32-1 on top; --model=deepfm or dcn_v2: dim 16, MLP 256-128, as
# bench/peers/ctr_tf.py describes, pstrain with its own --model of that
# name), the same synthetic click log in Criteo's layout, Adagrad (or
# --optimizer=adam, with --learning_rate=0.001 say), async, 2 ps
# + 2 workers on 127.0.0.1, a fixed number of global steps. Prints one
# markdown table: steps/s, the test AUC (exact) and log-loss of each system,
# the problem's Bayes AUC (problem.json: the true probabilities' test AUC),
# pstrain / TensorFlow in steps/s and pstrain's AUC minus TensorFlow's
# (bench/peers/ctr_report.py). About 3 minutes once the venv and data exist.
#
#   bench/peers/ctr_run.sh [--model=wide_deep|deepfm|dcn_v2] [--optimizer=adagrad|adam]
#       [--rows=100000] [--steps=3000] [--batch_size=256]
#       [--learning_rate=0.05] [--threads=1] [--seed=1]
#       [--train_examples=200000] [--test_examples=50000] [--data_dir=DIR]
#       [--problem=interactions|linear|rare]
#       [--systems=tensorflow,pstrain] [--results=DIR] [--no_install]
#
# Data: DIR/train.txt, DIR/test.txt and DIR/problem.json, made by
# examples/make_ctr_problem.py when DIR has no train.txt or test.txt (default
# DIR: $BUILD_DIR/ctr-data/<problem>-seed<S>-train<N>-test<M>; an existing DIR
# is reused as it is). --problem: the generator's default problem with
# planted interactions ("interactions", the default), --linear or --rare.
#
# TensorFlow (bench/peers/ctr_tf.py): from the venv $BUILD_DIR/peers-venv
# that bench/peers/run.sh makes and uses (default build/peers-venv);
# `tensorflow-cpu` (else `tensorflow`) from PyPI is installed into it when
# missing (about 1.4 GB, a minute or two); --no_install never calls pip.
# pstrain (built by scripts/build.sh first when $BUILD_DIR/bin lacks it):
# scripts/run_local.sh --num_ps=2 --num_workers=2 --mode=async
# --train_steps=STEPS --quiet --run_dir=RESULTS/pstrain-run --
# --dataset=criteo --train_file=...
# --test_file=... --model=MODEL --embedding_rows=ROWS --optimizer=OPTIMIZER
# --learning_rate=LR --batch_size=B, plus --seed, --intra_op_threads=T,
# --eval_every_steps=0 (TensorFlow's side evaluates only at the end too) and
# --progress_every_secs=1 (the steps/s after the warm-up comes from the
# chief's progress lines). A system that fails is reported with its reason
# and left out of the table; the other still runs.
#
# Threads: --threads=T is every TensorFlow task's intra-op and inter-op
# thread count and pstrain's --intra_op_threads (its tasks are otherwise
# single-threaded). Default 1: 4 TensorFlow tasks, 5 pstrain tasks (its
# chief is a task of its own) on a 2-core machine. The environment passes
# through: at --threads=2 pstrain's oneDNN kernels spin in OpenMP's waits
# unless OMP_WAIT_POLICY=passive (on 2 busy cores: 59 steps/s, 297 with it).
#
# steps/s: global steps per second after a warm-up, leaving out the first
# 10% of --steps, as each chief sees them; when pstrain's progress lines do
# not give that, both sides' whole-run rates are compared (the table says
# which). Wall time: each system's whole run, start-up, data loading and
# the final evaluation included.
#
# --results  where the logs, tf.json, settings.json, results.jsonl and
#            table.md go (default results/peers-ctr)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/bench/peers"
build="${BUILD_DIR:-$root/build}"
bin="${PST_BIN_DIR:-$build/bin}"
venv="$build/peers-venv"
results="$root/results/peers-ctr"
model=wide_deep
optimizer=adagrad
problem=interactions
rows=100000
steps=3000
batch_size=256
learning_rate=0.05
threads=1
seed=1
train_examples=200000
test_examples=50000
data_dir=""
systems=tensorflow,pstrain
install=1
for arg in "$@"; do
  case "$arg" in
    --model=*) model="${arg#*=}" ;;
    --optimizer=*) optimizer="${arg#*=}" ;;
    --problem=*) problem="${arg#*=}" ;;
    --rows=*) rows="${arg#*=}" ;;
    --steps=*) steps="${arg#*=}" ;;
    --batch_size=*) batch_size="${arg#*=}" ;;
    --learning_rate=*) learning_rate="${arg#*=}" ;;
    --threads=*) threads="${arg#*=}" ;;
    --seed=*) seed="${arg#*=}" ;;
    --train_examples=*) train_examples="${arg#*=}" ;;
    --test_examples=*) test_examples="${arg#*=}" ;;
    --data_dir=*) data_dir="${arg#*=}" ;;
    --systems=*) systems="${arg#*=}" ;;
    --results=*) results="${arg#*=}" ;;
    --no_install) install=0 ;;
    *) echo "ctr_run.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$rows" "$steps" "$batch_size" "$threads" "$train_examples" "$test_examples"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] ||
    { echo "ctr_run.sh: --rows, --steps, --batch_size, --threads and the example counts" \
        "must be positive integers (got '$n')" >&2; exit 2; }
done
case "$model" in wide_deep|deepfm|dcn_v2) ;; *)
  echo "ctr_run.sh: --model must be wide_deep, deepfm or dcn_v2 (got '$model')" >&2; exit 2 ;; esac
case "$optimizer" in adagrad|adam) ;; *)
  echo "ctr_run.sh: --optimizer must be adagrad or adam (got '$optimizer')" >&2; exit 2 ;; esac
problem_flag=()
case "$problem" in
  interactions) ;;
  linear) problem_flag=(--linear) ;;
  rare) problem_flag=(--rare) ;;
  *) echo "ctr_run.sh: --problem must be interactions, linear or rare (got '$problem')" >&2
     exit 2 ;;
esac
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "ctr_run.sh: --seed must be an integer >= 0" >&2; exit 2; }
[[ "$learning_rate" =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] ||
  { echo "ctr_run.sh: --learning_rate=$learning_rate is not a number" >&2; exit 2; }
IFS=, read -ra system_list <<<"$systems"
run_tf=0 run_pstrain=0
for s in "${system_list[@]}"; do
  case "$s" in
    tensorflow) run_tf=1 ;;
    pstrain) run_pstrain=1 ;;
    *) echo "ctr_run.sh: unknown system '$s' (tensorflow, pstrain)" >&2; exit 2 ;;
  esac
done
data_dir="${data_dir:-$build/ctr-data/$problem-seed$seed-train$train_examples-test$test_examples}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"
rm -rf "$results/tf" "$results/pstrain-run"
rm -f "$results"/tf.json "$results"/tf.log "$results"/pstrain.log "$results"/pstrain.json \
  "$results"/settings.json "$results"/results.jsonl "$results"/table.md

# --- the data ---------------------------------------------------------------
if [[ ! -f "$data_dir/train.txt" || ! -f "$data_dir/test.txt" ]]; then
  generator="$root/examples/make_ctr_problem.py"
  if [[ ! -f "$generator" ]]; then
    echo "ctr_run.sh: no $data_dir/train.txt and test.txt, and no $generator to make them" >&2
    exit 1
  fi
  echo "making the click log in $data_dir ($train_examples training, $test_examples test examples, seed $seed)"
  start=$SECONDS
  mkdir -p "$data_dir"
  # The folder: an argument of its own, or --out_dir=DIR where the generator has that flag.
  out=("$data_dir")
  grep -q -- '"--out_dir"' "$generator" && out=(--out_dir="$data_dir")
  if ! python3 "$generator" "${out[@]}" --seed="$seed" "${problem_flag[@]}" \
    --train_examples="$train_examples" --test_examples="$test_examples" \
    >"$data_dir/make.log" 2>&1; then
    echo "ctr_run.sh: $generator failed: $(grep -v '^ *$' "$data_dir/make.log" | tail -1)" >&2
    rm -f "$data_dir/train.txt" "$data_dir/test.txt"
    exit 1
  fi
  echo "made in $((SECONDS - start)) s: $(du -sh "$data_dir" | cut -f1)"
else
  echo "data: reusing $data_dir"
fi
data_dir="$(cd "$data_dir" && pwd)"
train_file="$data_dir/train.txt" test_file="$data_dir/test.txt"

# --- TensorFlow's venv (as bench/peers/run.sh makes it) ---------------------
py="$venv/bin/python"
source "$root/scripts/lib/peer_venv.sh"

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) cores, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "load average $(load)"
echo "job: $model, $rows rows, $steps global steps, batch $batch_size, $optimizer $learning_rate," \
  "async, 2 ps + 2 workers, $threads thread(s) per task"
cat >"$results/settings.json" <<EOF
{"rows": $rows, "steps": $steps, "batch_size": $batch_size, "learning_rate": $learning_rate,
 "threads": $threads, "seed": $seed, "data_dir": "$data_dir", "num_ps": 2, "num_workers": 2,
 "mode": "async", "model": "$model", "optimizer": "$optimizer", "problem": "$problem",
 "cores": $(nproc)}
EOF

# --- TensorFlow -------------------------------------------------------------------
if ((run_tf)) && venv_install tensorflow tensorflow tensorflow-cpu tensorflow; then
  echo "tensorflow: training (logs in $results/tf)"
  if "$py" "$here/ctr_tf.py" --train_file="$train_file" --test_file="$test_file" \
    --rows="$rows" --train_steps="$steps" --batch_size="$batch_size" \
    --model="$model" --optimizer="$optimizer" \
    --learning_rate="$learning_rate" --seed="$seed" --intra_op_threads="$threads" \
    --inter_op_threads="$threads" --num_ps=2 --num_workers=2 --log_dir="$results/tf" \
    >"$results/tf.json" 2>"$results/tf.log"; then
    echo "tensorflow: done"
  else
    echo "skip tensorflow: ctr_tf.py failed: $(grep -v '^ *$' "$results/tf.log" | tail -1)"
    rm -f "$results/tf.json"
  fi
fi

# --- pstrain ------------------------------------------------------------------------
pstrain_note() {  # a line for the report: why pstrain has no figures
  printf '{"system": "pstrain", "skipped": %s}\n' \
    "$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1")" >"$results/pstrain.json"
  echo "skip pstrain: $1"
}
if ((run_pstrain)); then
  if [[ ! -x "$bin/chief" || ! -x "$bin/ps" || ! -x "$bin/worker" ]] &&
    ! { echo "pstrain: building (no binaries in $bin)"; "$root/scripts/build.sh" >"$results/build.log" 2>&1; }; then
    pstrain_note "scripts/build.sh failed: $(grep -v '^ *$' "$results/build.log" | tail -1)"
  else
    echo "pstrain: training (log: $results/pstrain.log, run folder $results/pstrain-run)"
    start=$(date +%s.%N)
    rc=0
    "$root/scripts/run_local.sh" --num_ps=2 --num_workers=2 --mode=async \
      --train_steps="$steps" --quiet --run_dir="$results/pstrain-run" -- \
      --dataset=criteo --train_file="$train_file" --test_file="$test_file" \
      --model="$model" --embedding_rows="$rows" --optimizer="$optimizer" \
      --learning_rate="$learning_rate" --batch_size="$batch_size" --seed="$seed" \
      --intra_op_threads="$threads" --eval_every_steps=0 --progress_every_secs=1 \
      >"$results/pstrain.log" 2>&1 </dev/null || rc=$?
    seconds=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")
    if ((rc != 0)); then
      # run_local.sh names the task that failed and quotes its last line.
      why="$(grep -E 'failed \(exit [0-9]+\)' "$results/pstrain.log" | head -1 | cut -c1-300)"
      [[ -n "$why" ]] || why="$(grep -v '^ *$' "$results/pstrain.log" | tail -1 | cut -c1-300)"
      pstrain_note "its sparse job failed (run_local.sh exited $rc): $why -- pstrain's sparse support (--dataset=criteo, --model=$model, --embedding_rows) may not be built yet; full log: $results/pstrain.log"
    elif ! grep -q 'Test-AUC:' "$results/pstrain.log"; then
      pstrain_note "its chief printed no 'Test-AUC:' line (log: $results/pstrain.log)"
    else
      printf '{"system": "pstrain", "seconds": %s}\n' "$seconds" >"$results/pstrain.json"
      echo "pstrain: done"
    fi
  fi
fi

echo "load average at the end: $(load)"
echo
python3 "$here/ctr_report.py" "$results" | tee "$results/table.md"
