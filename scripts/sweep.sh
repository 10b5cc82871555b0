#!/usr/bin/env bash
# Hyperparameter sweep: trains one job per point of a grid of task flags, at
# most K at a time, all on one shared ps cluster (each job in its own named
# container, --container=sweep-NN), with a validation split held out; ranks
# the jobs by validation accuracy and ensembles the best three.
#
#   scripts/sweep.sh [--grid="learning_rate=0.05,0.1,0.3 batch_size=50,100"]
#       [--parallel=K] [--quick] [--results=DIR] [--data_dir=DIR] [--model=M]
#       [--train_steps=S] [--num_ps=N] [--workers_per_job=W]
#       [--validation_examples=N] [-- FLAGS for every task]
#
# --grid: space-separated axes FLAG=V1,V2,...; one job per point of their
#   cartesian product (at least 3 points). Default: the one above.
# --parallel: jobs running at once (default 2).
# --quick: a short version (for tests): 150 steps, 500 examples held out,
#   1 worker per job, evaluation every 50 steps; grid learning_rate=0.05,0.1,0.3.
# Defaults: --model=mlp_relu, --train_steps=3000, --num_ps=2,
#   --workers_per_job=2, --validation_examples=5000, async training,
#   evaluation 20 times per job, MNIST from --data_dir, else $MNIST_DIR, else
#   ../shared/data/mnist beside the checkout. FLAGS after -- go to every task
#   (the ps too) and to predict; a grid value wins over them.
#
# Writes into the results folder (default results/sweep-<date-time>):
#   jobs/NAME/    each job's run folder (logs, metrics.jsonl, model.bin)
#   ps/           the shared ps tasks' logs
#   table.md      the jobs by validation accuracy, best first: flags,
#                 validation and test accuracy, final global step, wall seconds
#   curves.png    validation accuracy against global step, one line per job
#   top1.bin, top2.bin, top3.bin   the three best jobs' models
#   ensemble.md   predict --ensemble=top1.bin,top2.bin,top3.bin: each
#                 member's and the ensemble's validation and test accuracy
# and prints the table and ensemble.md. Exits 2 on misuse, 1 when a job fails
# (naming it); every process it started is stopped, also on Ctrl-C.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/lib/launcher.sh"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${PST_BIN_DIR:-$root/build/bin}"
grid="learning_rate=0.05,0.1,0.3 batch_size=50,100"
grid_given=0
parallel=2
quick=0
results="$root/results/sweep-$(date +%Y%m%d-%H%M%S)"
data_dir="${MNIST_DIR:-}"
[[ -z "$data_dir" && -d "$root/../shared/data/mnist" ]] && data_dir="$root/../shared/data/mnist"
model=mlp_relu
steps=3000
num_ps=2
workers_per_job=2
validation=5000
eval_every=""
task_flags=()

misuse() {
  echo "sweep.sh: $*" >&2
  echo "Run scripts/sweep.sh --help for the usage." >&2
  exit 2
}

parse_args() {
  local given=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --grid=*) grid="${1#*=}" grid_given=1 ;;
      --parallel=*) parallel="${1#*=}" ;;
      --quick) quick=1 ;;
      --results=*) results="${1#*=}" ;;
      --data_dir=*) data_dir="${1#*=}" ;;
      --model=*) model="${1#*=}" ;;
      --train_steps=*) steps="${1#*=}" given+=(steps) ;;
      --num_ps=*) num_ps="${1#*=}" ;;
      --workers_per_job=*) workers_per_job="${1#*=}" given+=(workers) ;;
      --validation_examples=*) validation="${1#*=}" given+=(validation) ;;
      --) shift; task_flags+=("$@"); break ;;
      *) misuse "unknown argument '$1'" ;;
    esac
    shift
  done
  if ((quick)); then  # what was not given explicitly
    ((grid_given)) || grid="learning_rate=0.05,0.1,0.3"
    [[ " ${given[*]} " == *" steps "* ]] || steps=150
    [[ " ${given[*]} " == *" workers "* ]] || workers_per_job=1
    [[ " ${given[*]} " == *" validation "* ]] || validation=500
    eval_every=50
  fi
  local pair
  for pair in "parallel:$parallel" "train_steps:$steps" "num_ps:$num_ps" \
    "workers_per_job:$workers_per_job" "validation_examples:$validation"; do
    [[ "${pair#*:}" =~ ^[1-9][0-9]*$ ]] ||
      misuse "--${pair%%:*} must be a positive integer, got '${pair#*:}'"
  done
  eval_every="${eval_every:-$(((steps + 19) / 20))}"
}

# expand_grid: fills points[] with one string of task flags per grid point
# ("--learning_rate=0.05 --batch_size=50"), the first axis varying slowest.
points=()
expand_grid() {
  local axis flag values value point next axes=() seen=" "
  read -r -a axes <<<"$grid"
  ((${#axes[@]} > 0)) || misuse "--grid is empty"
  points=("")
  for axis in "${axes[@]}"; do
    [[ "$axis" =~ ^([a-z][a-z0-9_]*)=([^,=]+(,[^,=]+)*)$ ]] ||
      misuse "--grid: '$axis' is not FLAG=V1,V2,... (e.g. learning_rate=0.05,0.1)"
    flag="${BASH_REMATCH[1]}"
    [[ "$seen" != *" $flag "* ]] || misuse "--grid: $flag is given twice"
    seen+="$flag "
    IFS=, read -r -a values <<<"${BASH_REMATCH[2]}"
    next=()
    for point in "${points[@]}"; do
      for value in "${values[@]}"; do next+=("${point:+$point }--$flag=$value"); done
    done
    points=("${next[@]}")
  done
  ((${#points[@]} >= 3)) ||
    misuse "--grid='$grid' has ${#points[@]} point(s); the top three and their ensemble need 3 or more"
}

job_name() { printf 'sweep-%02d' $(($1 + 1)); }

# The data flags of every task and of predict.
data_flags() {
  echo "--data_dir=$data_dir"
  echo "--validation_examples=$validation"
}

# start_ps: the shared ps cluster (ps_pids[], ps_hosts), with a flag file in
# RESULTS/ps/ (the worker and chief ports in it are placeholders: each job
# names its own).
ps_pids=()
ps_hosts=""
start_ps() {
  local ports k dir="$results/ps"
  mkdir -p "$dir"
  mapfile -t ports < <(python3 "$root/scripts/free_ports.py" $((num_ps + 2)))
  for ((k = 0; k < num_ps; k++)); do ps_hosts+="${ps_hosts:+,}127.0.0.1:${ports[$k]}"; done
  {
    echo "--ps_hosts=$ps_hosts"
    echo "--worker_hosts=127.0.0.1:${ports[$num_ps]}"
    echo "--chief_host=127.0.0.1:${ports[$((num_ps + 1))]}"
    echo "--stop_grace_ms=0"  # they are stopped once every job is over
    printf '%s\n' "${task_flags[@]}"
  } >"$dir/cluster.flags"
  for ((k = 0; k < num_ps; k++)); do
    setsid "$bin/ps" --flagfile="$dir/cluster.flags" --task_index="$k" >"$dir/ps-$k.log" 2>&1 &
    ps_pids+=($!)
  done
  echo "sweep.sh: $num_ps ps at $ps_hosts, logs in $dir" >&2
}

# start_job INDEX: launches job INDEX (run_local.sh on the shared ps, in its
# own container and process group) in the background.
declare -A job_pid=() job_start=()
start_job() {
  local i="$1" name dir point
  name="$(job_name "$i")"
  dir="$results/jobs/$name"
  mkdir -p "$dir"
  read -r -a point <<<"${points[$i]}"
  echo "sweep.sh: $name: ${points[$i]}" >&2
  local data
  mapfile -t data < <(data_flags)
  setsid "$root/scripts/run_local.sh" --ps_hosts="$ps_hosts" --num_workers="$workers_per_job" \
    --mode=async --model="$model" --train_steps="$steps" --run_dir="$dir" --quiet -- \
    --container="$name" "${data[@]}" --eval_every_steps="$eval_every" "${task_flags[@]}" \
    "${point[@]}" >"$dir/launcher.log" 2>&1 &
  job_pid[$i]=$!
  job_start[$i]=$EPOCHREALTIME
}

# reap_jobs: records the jobs that ended in RESULTS/jobs.tsv; a failed one
# ends the sweep (exit 1; the EXIT trap stops the rest).
reap_jobs() {
  local i rc name
  for i in "${!job_pid[@]}"; do
    kill -0 "${job_pid[$i]}" 2>/dev/null && continue
    rc=0
    wait "${job_pid[$i]}" || rc=$?
    unset "job_pid[$i]"
    name="$(job_name "$i")"
    local log="$results/jobs/$name/launcher.log"
    if ((rc != 0)); then
      echo "sweep.sh: job $name (${points[$i]}) failed (exit $rc):" \
        "$(grep -m1 -E 'failed|diverged|rror' "$log" || tail -n 1 "$log")" >&2
      echo "sweep.sh: see $log; stopping the sweep" >&2
      exit 1
    fi
    awk -v name="$name" -v flags="${points[$i]}" -v start="${job_start[$i]}" \
      -v end="$EPOCHREALTIME" 'BEGIN { printf "%s\t%s\t%.1f\n", name, flags, end - start }' \
      >>"$results/jobs.tsv"
    echo "sweep.sh: $name done: $(grep -m1 -o 'Validation-Accuracy: [0-9.]*' "$log")" >&2
  done
}

# check_ps: a ps of the shared cluster that is gone ends the sweep (exit 1).
check_ps() {
  local k
  for k in "${!ps_pids[@]}"; do
    kill -0 "${ps_pids[$k]}" 2>/dev/null && continue
    echo "sweep.sh: ps-$k exited: $(tail -n 1 "$results/ps/ps-$k.log"); stopping the sweep" >&2
    exit 1
  done
}

run_jobs() {  # every grid point, at most $parallel at a time
  local i
  for i in "${!points[@]}"; do
    while ((${#job_pid[@]} >= parallel)); do
      sleep 0.2
      reap_jobs
      check_ps
    done
    start_job "$i"
  done
  while ((${#job_pid[@]} > 0)); do
    sleep 0.2
    reap_jobs
    check_ps
  done
}

stop_everything() {  # the EXIT trap: every job still running, then the ps
  local i
  ((${#job_pid[@]} == 0)) || kill -TERM "${job_pid[@]}" 2>/dev/null  # all stop at once
  for i in "${!job_pid[@]}"; do stop_launcher "${job_pid[$i]}" "$results/jobs/$(job_name "$i")"; done
  job_pid=()
  stop_pids "${ps_pids[@]}"
  ps_pids=()
}

# copy_top: RESULTS/top.txt (the best jobs, best first) -> top1.bin, ...
copy_top() {
  local k=0 name
  while IFS=$'\t' read -r name _; do
    k=$((k + 1))
    cp "$results/jobs/$name/model.bin" "$results/top$k.bin" || exit 1
  done <"$results/top.txt"
}

# ensemble: predict --ensemble=top1.bin,top2.bin,top3.bin on the same data,
# run in the results folder (so its table names the files as they are there).
ensemble() {
  local data
  mapfile -t data < <(data_flags)
  (cd "$results" && "$bin/predict" --ensemble=top1.bin,top2.bin,top3.bin "${data[@]}" \
    "${task_flags[@]}" >ensemble.txt 2>predict.log) ||
    { echo "sweep.sh: predict --ensemble failed: $(tail -n 1 "$results/predict.log")" >&2; exit 1; }
}

parse_args "$@"
expand_grid
if [[ " ${task_flags[*]} " != *" --dataset="* || " ${task_flags[*]} " == *" --dataset=mnist "* ]]; then
  source "$(dirname "${BASH_SOURCE[0]}")/lib/mnist.sh"
  require_mnist sweep.sh "$data_dir" "pass --data_dir=DIR"
fi
if [[ ! -x "$bin/chief" || ! -x "$bin/ps" || ! -x "$bin/worker" || ! -x "$bin/predict" ]]; then
  echo "sweep.sh: building (no binaries in $bin)" >&2
  "$root/scripts/build.sh" >&2 || exit 1
fi
# Debian's python3 has python3-matplotlib (scripts/setup.sh); another python3
# earlier on PATH (pyenv, a venv) may not.
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3
mkdir -p "$results" || exit 1
results="$(cd "$results" && pwd)"
rm -rf "$results/jobs" "$results/ps" "$results"/top?.bin "$results"/{jobs.tsv,top.txt} \
  "$results"/{table.md,curves.png,ensemble.md,ensemble.txt,predict.log}
trap stop_everything EXIT
trap 'echo "sweep.sh: interrupted, stopping every job" >&2; exit 130' INT TERM

echo "sweep.sh: ${#points[@]} jobs, $parallel at a time; results in $results" >&2
start_ps
run_jobs
stop_everything
"$python" "$root/scripts/summarize_runs.py" sweep "$results/jobs" "$results" || exit 1
copy_top
ensemble
"$python" "$root/scripts/summarize_runs.py" ensemble "$results/jobs" "$results" || exit 1
echo "sweep.sh: wrote $results/table.md, curves.png, top1.bin..top3.bin, ensemble.md" >&2
