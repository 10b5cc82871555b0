#!/usr/bin/env bash
# Experiment: is sync with spare replicas better than async here? With the
# same model, data and hyperparameters (2 ps, 3 workers, mlp_relu), runs a
# local cluster for each of:
#   async; async with a straggler; async dropping stale gradients
#   (--staleness_policy=drop --max_staleness=2); async scaling them (scale);
#   sync N=3; sync N=3 with a straggler; sync N=2 (one spare); sync N=2 with
#   a straggler; sync with N picked per step (--replicas_to_aggregate=auto)
#   with a straggler; bounded staleness (--mode=ssp) with a straggler, for
#   --staleness_bound = 1, 3 and 10
# (the straggler: worker 2 sleeping 30 ms per step, about three normal
# steps). Writes into the results folder: runs/ (every run's logs and
# metrics), table.md (time to 97% test accuracy, final accuracy, steps/s,
# examples/s, stale gradients dropped) and accuracy.png (test accuracy
# against wall time and against global step, one curve per run).
#
#   scripts/sync_vs_async.sh [--quick] [--results=DIR] [--data_dir=DIR]
#
# --quick: a short version (for tests): few steps, frequent evaluation, a
# learning rate of 0.1.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
results="$root/results/sync_vs_async"
steps=2000
eval_every=100
delay_ms=30
data_flag=() quick_flags=()
for arg in "$@"; do
  case "$arg" in
    # A gentler rate: 60 async steps at mlp_relu's 0.3 sometimes end above
    # the untrained loss, which the chief reports as a diverged run.
    --quick) steps=60 eval_every=20 quick_flags=(--learning_rate=0.1) ;;
    --results=*) results="${arg#*=}" ;;
    --data_dir=*) data_flag=(--data_dir="${arg#*=}") ;;
    *) echo "sync_vs_async.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
# Debian's python3 has python3-matplotlib (scripts/setup.sh); another python3
# earlier on PATH (pyenv, a venv) may not.
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3
rm -rf "$results/runs"
mkdir -p "$results/runs"

n=0
run() {  # run NAME [run_local.sh arguments...] [-- task flags...]
  local name="$1"
  shift
  n=$((n + 1))
  local dir
  dir="$results/runs/$(printf '%02d' "$n")-$name"
  mkdir -p "$dir"
  echo "sync_vs_async.sh: $name" >&2
  local launcher=() tasks=() seen_dashes=0
  for a in "$@"; do
    if [[ "$a" == -- ]]; then seen_dashes=1; elif ((seen_dashes)); then tasks+=("$a"); else launcher+=("$a"); fi
  done
  "$root/scripts/run_local.sh" --num_ps=2 --num_workers=3 --model=mlp_relu \
    --train_steps="$steps" --run_dir="$dir" "${launcher[@]}" -- \
    --eval_every_steps="$eval_every" "${data_flag[@]}" "${quick_flags[@]}" "${tasks[@]}" \
    >"$dir/launcher.log" 2>&1 ||
    { echo "sync_vs_async.sh: run $name failed, see $dir/launcher.log" >&2; exit 1; }
}

mkdir -p "$results/runs"
run async --mode=async
run async_straggler --mode=async --slow_worker=2:"$delay_ms"
run async_drop_stale --mode=async -- --staleness_policy=drop --max_staleness=2
run async_scale_stale --mode=async -- --staleness_policy=scale
run sync_n3 --mode=sync --replicas_to_aggregate=3
run sync_n3_straggler --mode=sync --replicas_to_aggregate=3 --slow_worker=2:"$delay_ms"
run sync_n2_spare --mode=sync --replicas_to_aggregate=2
run sync_n2_spare_straggler --mode=sync --replicas_to_aggregate=2 --slow_worker=2:"$delay_ms"
run sync_auto_straggler --mode=sync --replicas_to_aggregate=auto --slow_worker=2:"$delay_ms"
for s in 1 3 10; do
  run "ssp_s${s}_straggler" --mode=ssp --staleness_bound="$s" --slow_worker=2:"$delay_ms"
done

"$python" "$root/scripts/summarize_runs.py" accuracy "$results/runs" "$results"
echo "sync_vs_async.sh: wrote $results/table.md and $results/accuracy.png" >&2
