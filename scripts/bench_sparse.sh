#!/usr/bin/env bash
# Benchmark: the cost of a click job does not grow with its embedding table.
# Trains the same job (examples/ctr_dim16.spec on the generated click log, 2
# ps, 2 workers, async, Adagrad, batch 256) with a 100,000 x 16 and a
# 10,000,000 x 16 fixed table (two tables: deep 16 wide, wide 1), the two
# alternated --rounds times, and prints a table: steps/s over the whole run
# and after the first third of it (the first touch of each row costs a page
# of memory once; after it, the step's cost is what it is for good), bytes
# the ps received and sent per step, test AUC, and the large table's ratios
# to the small one's (measured in the same run).
#
#   scripts/bench_sparse.sh [--steps=6000] [--rounds=2] [--results=DIR]
#                           [--data_dir=DIR] [--model=NAME]
#
# --model=NAME: a zoo click model (deepfm, dcn_v2, ...) with its own
# optimizer instead of the spec and Adagrad.
#
# Needs the built binaries (scripts/build.sh). The data (200,000 training
# and 50,000 test lines from examples/make_ctr_problem.py) is made in
# DATA_DIR when absent.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
steps=6000
rounds=2
results="$root/results/bench_sparse"
data="$root/build/ctr-data/seed1-train200000-test50000"
model_flags=(--model_spec="$root/examples/ctr_dim16.spec" --optimizer=adagrad)
for arg in "$@"; do
  case "$arg" in
    --model=*) model_flags=("$arg") ;;
    --steps=*) steps="${arg#*=}" ;;
    --rounds=*) rounds="${arg#*=}" ;;
    --results=*) results="${arg#*=}" ;;
    --data_dir=*) data="${arg#*=}" ;;
    *) echo "bench_sparse.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
if [[ ! -f "$data/train.txt" ]]; then
  python3 "$root/examples/make_ctr_problem.py" "$data" --seed=1 --linear --lr_epochs=0
fi
rm -rf "$results"
mkdir -p "$results"

# run ROWS ROUND: one training run into $results/ROWS-ROUND.
run() {
  "$root/scripts/run_local.sh" --num_ps=2 --num_workers=2 --mode=async --train_steps="$steps" \
    --quiet --run_dir="$results/$1-$2" -- --dataset=criteo --train_file="$data/train.txt" \
    --test_file="$data/test.txt" "${model_flags[@]}" \
    --embedding_rows="$1" --batch_size=256 --eval_every_steps=0 \
    --progress_every_secs=0.5 \
    >"$results/$1-$2.out" 2>&1 || {
    echo "bench_sparse.sh: the run with $1 rows failed: $results/$1-$2.out" >&2
    exit 1
  }
}
for ((round = 1; round <= rounds; ++round)); do
  run 100000 "$round"
  run 10000000 "$round"
done

python3 - "$results" "$rounds" <<'PY'
import json, re, sys
results, rounds = sys.argv[1], int(sys.argv[2])

# The chief's progress lines: (step, elapsed seconds).
PROGRESS = re.compile(r"Progress: step (\d+)/(\d+) .* elapsed ([0-9.]+) s")

def steady_rate(log):
    marks = [(int(m[1]), int(m[2]), float(m[3])) for m in map(PROGRESS.search, open(log)) if m]
    start = next(m for m in marks if m[0] >= m[1] / 3)
    end = marks[-1]
    return (end[0] - start[0]) / (end[2] - start[2])

def figures(rows):
    runs = []
    for r in range(1, rounds + 1):
        run = f"{results}/{rows}-{r}"
        last = json.loads(open(f"{run}/metrics.jsonl").read().splitlines()[-1])
        moved = sum(v for k, v in last.items() if re.fullmatch(r"ps\d+_bytes_(in|out)", k))
        runs.append((last["steps_per_sec"], steady_rate(f"{run}/chief.log"), moved / last["step"],
                     last["test_auc"]))
    return [sum(column) / rounds for column in zip(*runs)]

small, large = figures(100000), figures(10000000)
print("| table | steps/s, whole run | steps/s, after the first third | bytes per step (ps in + out) | test AUC |")
print("|---|---|---|---|---|")
print(f"| 100,000 x 16 | {small[0]:.1f} | {small[1]:.1f} | {small[2]:,.0f} | {small[3]:.4f} |")
print(f"| 10,000,000 x 16 | {large[0]:.1f} | {large[1]:.1f} | {large[2]:,.0f} | {large[3]:.4f} |")
print(f"| ratio 10M / 100k | {large[0] / small[0]:.3f} | {large[1] / small[1]:.3f} "
      f"| {large[2] / small[2]:.3f} | |")
PY
