#!/usr/bin/env bash
# Benchmark: a click stream with far more distinct keys than a ps keeps in
# RAM, trained with its tables on disk (--embedding_storage=disk:DIR, a RAM
# cache of --cache_rows rows per table) against the same job with every row
# in RAM, on the same stream (the issue's figure: steps/s ratio, ps RSS,
# AUC of each).
#
#   scripts/bench_beyond_ram.sh [--keys=50000000] [--lines=4000000]
#       [--cache_rows=1000000] [--file_lines=100000] [--rounds=1]
#       [--model=wide_deep] [--out=DIR] [--only=disk|ram|data|report]
#
# --only=data makes the stream and stops; --only=disk or ram runs one job;
# --only=report prints the table of the runs in OUT again.
#
# The stream (made in OUT/data-KEYS-LINES when absent, Python's standard
# library only): --lines lines of Criteo's layout in files of --file_lines
# lines, trained once each, in order (--follow, 2 ps, 2 workers, async,
# Adagrad, batch 256). The 13 integer fields are empty; each of the 26
# categorical fields takes, with probability q, a value never seen before
# (a key of the long tail), else one of 20,000 values of the field (fewer
# when --keys < 8 M) drawn from a Zipf law (exponent 1.1). q is chosen so
# that about --keys distinct keys appear. The label is drawn from a logistic model over the frequent
# values only (a weight per field and value, N(0, 0.4^2), bias -1.2): the
# tail carries no signal, as a hashed id seen once cannot. A test file of
# 50,000 lines comes from the same law (its tail values are new keys too).
#
# Both runs get --embedding_capacity=0.6 x KEYS (per ps: each of the 2 ps
# holds about half the keys, so no row is evicted from either and no key
# refused); the disk run adds --embedding_storage=disk:OUT/tables
# --embedding_cache_rows=CACHE_ROWS. Printed per run: steps/s over the run
# and after its first tenth, the largest VmRSS of any ps (sampled every
# second from /proc), the CPU time the ps and the workers spent per step
# (from /proc, every thread: a figure that holds on a machine other jobs
# share, where steps/s follow their load), the final test AUC and the
# stream's progressive AUC (each line predicted before its update, lines
# weighted), and the distinct keys the tables hold at the end.
#
# Needs the built binaries in $PST_BIN_DIR (default build/bin). Disk: the
# stream is about 250 bytes a line (1 GB at 4 M lines); the disk tables
# about 100 bytes a key (wide_deep, Adagrad) with RocksDB's compactions.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
keys=50000000 lines=4000000 cache_rows=1000000 file_lines=100000 rounds=1
model=wide_deep out="$root/runs/beyond-ram" only=""
for arg in "$@"; do
  case "$arg" in
    --keys=*) keys="${arg#*=}" ;;
    --lines=*) lines="${arg#*=}" ;;
    --cache_rows=*) cache_rows="${arg#*=}" ;;
    --file_lines=*) file_lines="${arg#*=}" ;;
    --rounds=*) rounds="${arg#*=}" ;;
    --model=*) model="${arg#*=}" ;;
    --out=*) out="${arg#*=}" ;;
    --only=*) only="${arg#*=}" ;;
    *) echo "bench_beyond_ram.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
export PST_BIN_DIR="${PST_BIN_DIR:-$root/build/bin}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
data="$out/data-$keys-$lines"

if [[ ! -f "$data/done" ]]; then
  rm -rf "$data"
  mkdir -p "$data/train"
  python3 - "$data" "$keys" "$lines" "$file_lines" <<'PY'
import bisect, itertools, math, os, random, sys
data, keys, lines, file_lines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
FIELDS = 26
HOT = max(100, min(20000, keys // (4 * FIELDS)))  # 20,000 unless --keys is small
rng = random.Random(7)
# Keys other than the tail's: the hot values, the 13 empty integer fields.
q = max(0.0, min(1.0, (keys - FIELDS * HOT - 13) / (FIELDS * lines)))
cum = list(itertools.accumulate(1.0 / (r + 1) ** 1.1 for r in range(HOT)))
weights = [[rng.gauss(0.0, 0.4) for _ in range(HOT)] for _ in range(FIELDS)]
# Hot value r of field f is written as r; tail values count up from 2^28.
tail = [1 << 28] * FIELDS
empty = "\t" * 13

def line():
    logit = -1.2
    cats = []
    for f in range(FIELDS):
        if rng.random() < q:
            cats.append("%08x" % tail[f])
            tail[f] += 1
        else:
            r = bisect.bisect(cum, rng.random() * cum[-1])
            logit += weights[f][r]
            cats.append("%08x" % r)
    label = 1 if rng.random() < 1.0 / (1.0 + math.exp(-logit)) else 0
    return "%d%s\t%s\n" % (label, empty, "\t".join(cats))

def write(path, n):
    with open(path + ".tmp", "w") as f:
        f.writelines(line() for _ in range(n))
    os.rename(path + ".tmp", path)

for k, start in enumerate(range(0, lines, file_lines)):
    write("%s/train/part-%05d" % (data, k), min(file_lines, lines - start))
print("q %.4f; distinct keys in the training files at most %d" %
      (q, sum(tail) - FIELDS * (1 << 28) + FIELDS * HOT + 13))
write(data + "/test.txt", 50000)
PY
  touch "$data/done"
fi
[[ "$only" == data ]] && exit 0
files=$(find "$data/train" -name 'part-*' | wc -l)
batches=0
for f in "$data"/train/part-*; do
  n=$(wc -l < "$f")
  batches=$((batches + (n + 255) / 256))
done

# Sampled every second while the run in $1 lasts: the largest VmRSS (kB)
# of each ps into $1/ps-rss, the CPU time (clock ticks, user + system) of
# every task so far into $1/cpu-ticks.
sample_tasks() {
  local run="$1"
  declare -A peak ticks
  while [[ ! -f "$run/.done" ]]; do
    if [[ -f "$run/tasks.pid" ]]; then
      while read -r name pid; do
        local kb t
        t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true)
        [[ -n "$t" ]] && ticks[$name]=$t
        [[ "$name" == ps* ]] || continue
        kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [[ -n "$kb" && "$kb" -gt "${peak[$name]:-0}" ]] && peak[$name]=$kb
      done < "$run/tasks.pid"
    fi
    for name in "${!peak[@]}"; do echo "$name ${peak[$name]}"; done > "$run/ps-rss"
    for name in "${!ticks[@]}"; do echo "$name ${ticks[$name]}"; done > "$run/cpu-ticks"
    sleep 1
  done
}

# run disk|ram ROUND
run() {
  local kind="$1" run="$out/$1-$2"
  rm -rf "$run" "$out/tables"
  mkdir -p "$run"
  local storage=()
  if [[ "$kind" == disk ]]; then
    storage=(--embedding_storage=disk:"$out/tables" --embedding_cache_rows="$cache_rows")
  fi
  sample_tasks "$run" &
  local sampler=$!
  local status=0
  "$root/scripts/run_local.sh" --num_ps=2 --num_workers=2 --mode=async --train_steps="$batches" \
    --quiet --run_dir="$run" -- --dataset=criteo --follow --train_files="$data/train/part-*" \
    --test_file="$data/test.txt" --model="$model" --optimizer=adagrad --learning_rate=0.05 \
    --batch_size=256 --embedding_capacity=$((keys * 6 / 10)) "${storage[@]}" --eval_every_steps=0 \
    --progress_every_secs=0.5 >"$run/out.txt" 2>&1 || status=$?
  touch "$run/.done"
  wait "$sampler"
  if [[ "$status" != 0 ]]; then
    echo "bench_beyond_ram.sh: the $kind run failed: $run/out.txt" >&2
    exit 1
  fi
  rm -rf "$out/tables"
}

for ((round = 1; round <= rounds; ++round)); do
  [[ "$only" == ram || "$only" == report ]] || run disk "$round"
  [[ "$only" == disk || "$only" == report ]] || run ram "$round"
done

python3 - "$out" "$rounds" "$batches" "$lines" "$keys" "$cache_rows" "$files" "$(getconf CLK_TCK)" <<'PY'
import glob, json, os, re, sys
out, rounds, batches, lines, keys, cache_rows, files, hz = sys.argv[1], *map(int, sys.argv[2:])
PROGRESS = re.compile(r"Progress: step (\d+)/(\d+) .* elapsed (?:(\d+)h)?(?:(\d+)m)?([0-9.]+) ?s")
AUC = re.compile(r"Test-AUC: ([0-9.]+)")

def figures(run):
    text = open(f"{run}/out.txt").read().splitlines()
    marks = [(int(m[1]), 3600 * int(m[3] or 0) + 60 * int(m[4] or 0) + float(m[5]))
             for m in map(PROGRESS.search, text) if m]
    start = next(m for m in marks if m[0] >= marks[-1][0] / 10)
    steady = (marks[-1][0] - start[0]) / max(marks[-1][1] - start[1], 1e-9)
    whole = marks[-1][0] / marks[-1][1]
    auc = next((float(m[1]) for m in map(AUC.search, text) if m), float("nan"))
    metrics = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
    files = [m for m in metrics if "progressive_auc" in m]
    n = sum(m["file_examples"] for m in files)
    prog = sum(m["progressive_auc"] * m["file_examples"] for m in files) / max(n, 1)
    rss = {}
    for l in open(f"{run}/ps-rss"):
        name, kb = l.split()
        rss[name] = int(kb) / 1024
    held = [v for k, v in metrics[-1].items() if re.fullmatch(r"ps\d+_table_deep/embedding_rows", k)]
    cpu = {"ps": 0.0, "worker": 0.0}
    for l in open(f"{run}/cpu-ticks"):
        name, t = l.split()
        kind = name.split("-")[0]
        if kind in cpu:
            cpu[kind] += int(t) / hz
    steps = marks[-1][0]
    return (whole, steady, max(rss.values()), 1e3 * cpu["ps"] / steps,
            1e3 * cpu["worker"] / steps, auc, prog, n, sum(held))

print(f"stream: {lines} lines in {files} files, {batches} batches of 256, ~{keys} distinct keys;"
      f" disk cache {cache_rows} rows per table and ps; CPU per step summed over the 2 ps and"
      f" over the 2 workers\n")
print("%-7s %8s %12s %11s %11s %11s %9s %10s %8s %9s" %
      ("run", "steps/s", "steps/s 10%-", "max ps RSS", "ps ms/step", "wk ms/step", "test AUC",
       "prog. AUC", "lines", "keys"))
rows = {}
for kind in ("disk", "ram"):
    for r in range(1, rounds + 1):
        run = f"{out}/{kind}-{r}"
        if not os.path.exists(f"{run}/metrics.jsonl"):
            continue
        f = figures(run)
        rows.setdefault(kind, []).append(f)
        print("%-7s %8.1f %12.1f %8.0f MB %11.1f %11.1f %9.4f %10.4f %8d %9d" % (f"{kind}-{r}", *f))
if "disk" in rows and "ram" in rows:
    for i, (d, m) in enumerate(zip(rows["disk"], rows["ram"])):
        print(f"round {i + 1}: disk/ram steps/s {d[0] / m[0]:.3f} (after the first tenth "
              f"{d[1] / m[1]:.3f}), ps CPU per step {d[3] / m[3]:.2f}x, test AUC "
              f"{d[5] - m[5]:+.4f}, progressive AUC {d[6] - m[6]:+.4f}")
PY
