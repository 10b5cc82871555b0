#!/usr/bin/env bash
# Experiment: how many ps shards does this model need? For 1, 2 and 4 ps,
# with whole and with partitioned variables (--partition_bytes=1 MiB), and
# with round-robin and greedy placement side by side, trains wide_mlp
# (784-2048-2048-10, 5.8 M parameters, 23 MB) with 2 workers and records
# steps/s, the ps's pull+push throughput and the bytes each shard holds (load
# balance). Writes into the results folder: runs/, table.md, shards.png and
# recommendation.txt (also printed: the fewest shards within 10% of the best
# step rate). Then, per shard count, the whole/round-robin configuration again
# with --wire_dtype=bfloat16: wire.md gives its steps/s and bytes moved per
# step as ratios to float32's.
#
#   scripts/tune_shards.sh [--quick] [--results=DIR] [--data_dir=DIR]
#
# --quick: a short version (for tests): 1 and 2 ps, few steps.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
results="$root/results/tune_shards"
steps=150
shard_counts=(1 2 4)
data_flag=()
for arg in "$@"; do
  case "$arg" in
    --quick) steps=15 shard_counts=(1 2) ;;
    --results=*) results="${arg#*=}" ;;
    --data_dir=*) data_flag=(--data_dir="${arg#*=}") ;;
    *) echo "tune_shards.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
# Debian's python3 has python3-matplotlib (scripts/setup.sh); another python3
# earlier on PATH (pyenv, a venv) may not.
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3
rm -rf "$results/runs"
mkdir -p "$results/runs"

# run NAME PS [FLAGS for every task...]: one wide_mlp run into the next
# numbered folder of $results/runs.
n=0
run() {
  local name="$1" ps="$2"
  shift 2
  n=$((n + 1))
  local dir="$results/runs/$(printf '%02d' "$n")-$name"
  mkdir -p "$dir"
  echo "tune_shards.sh: $name" >&2
  "$root/scripts/run_local.sh" --num_ps="$ps" --num_workers=2 --mode=async \
    --model=wide_mlp --train_steps="$steps" --run_dir="$dir" -- \
    --eval_every_steps=0 "${data_flag[@]}" "$@" >"$dir/launcher.log" 2>&1 ||
    { echo "tune_shards.sh: run $name failed, see $dir/launcher.log" >&2; exit 1; }
}

for ps in "${shard_counts[@]}"; do
  for partition in 0 1048576; do
    for placement in round_robin greedy; do
      run "ps${ps}_$([[ $partition == 0 ]] && echo whole || echo parts1MiB)_$placement" "$ps" \
        --partition_bytes="$partition" --placement="$placement"
    done
  done
done
for ps in "${shard_counts[@]}"; do
  run "ps${ps}_whole_round_robin_bf16" "$ps" --wire_dtype=bfloat16
done

"$python" "$root/scripts/summarize_runs.py" shards "$results/runs" "$results"
echo "tune_shards.sh: wrote $results/table.md, $results/wire.md, $results/shards.png," \
  "$results/recommendation.txt" >&2
