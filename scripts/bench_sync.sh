#!/usr/bin/env bash
# Benchmark: what a straggler costs synchronous training, with and without a
# spare replica. Runs, in one invocation, on a local cluster (2 ps, 3
# workers, mlp_relu on MNIST):
#   (a) N=3 of W=3, no straggler           the baseline
#   (b) N=3 of W=3, worker 2 delayed       the straggler gates every step
#   (c) N=2 of W=3, worker 2 delayed       one spare replica absorbs it
#   (d) auto, no straggler                 --replicas_to_aggregate=auto
# and with worker 2 turning slow half-way through the run (a straggler that
# appears), every fixed N against auto:
#   (e) N=3   (f) N=2   (g) N=1   (h) auto
# The delay is three times the baseline's step time. Prints, for each, steps/s
# and aggregated batches/s (the gradients that went into the steps, per
# second: what a smaller N trades away) with their ratios to (a), then
# "spare_ratio: X" = (c)/(a) in steps/s and, last, "auto_vs_best_fixed: X" =
# (h) / the best of (e), (f), (g) in aggregated batches/s.
#
#   MNIST_DIR=... scripts/bench_sync.sh [--train_steps=N]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
steps=600
for arg in "$@"; do
  case "$arg" in
    --train_steps=*) steps="${arg#*=}" ;;
    *) echo "bench_sync.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
out="$(mktemp -d /tmp/bench_sync.XXXXXX)"

# run NAME N [run_local.sh flags...] -> prints the run's training steps/s
# and aggregated batches/s
run() {
  local name="$1" n="$2"
  shift 2
  "$root/scripts/run_local.sh" --num_ps=2 --num_workers=3 --mode=sync \
    --replicas_to_aggregate="$n" --model=mlp_relu --train_steps="$steps" \
    --run_dir="$out/$name" "$@" -- --eval_every_steps=0 >"$out/$name.log" 2>&1 ||
    { echo "bench_sync.sh: run $name failed, see $out/$name.log" >&2; exit 1; }
  python3 - "$out/$name/metrics.jsonl" "$out/$name.log" "$steps" <<'PY'
import json, re, sys
rate = json.loads(open(sys.argv[1]).readlines()[-1])["steps_per_sec"]
line = [l for l in open(sys.argv[2]) if "Aggregated-Gradients:" in l][-1]
aggregated = sum(int(n) for n in re.findall(r"worker:\d+=(\d+)", line))
print(rate, aggregated * rate / int(sys.argv[3]))
PY
}

a=$(run baseline 3)
delay=$(python3 -c "print(max(10, round(3 * 1000 / ${a%% *})))")
b=$(run straggler_no_spare 3 --slow_worker=2:"$delay")
c=$(run straggler_one_spare 2 --slow_worker=2:"$delay")
d=$(run auto auto)
half=$((steps / 2))
e=$(run appears_n3 3 --slow_worker=2:"$delay@$half")
f=$(run appears_n2 2 --slow_worker=2:"$delay@$half")
g=$(run appears_n1 1 --slow_worker=2:"$delay@$half")
h=$(run appears_auto auto --slow_worker=2:"$delay@$half")
changes=$(grep -c "replicas_to_aggregate=auto: step" "$out/appears_auto.log" || true)

python3 - "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" "$delay" "$steps" "$changes" <<'PY'
import sys
a, b, c, d, e, f, g, h = (tuple(map(float, v.split())) for v in sys.argv[1:9])
delay, steps, changes = sys.argv[9:12]
print(f"sync steps/s, 2 ps, 3 workers, mlp_relu, {steps} steps; straggler: worker 2 sleeps {delay} ms per step")
print(f"{'configuration':<50} {'steps/s':>9} {'vs (a)':>8} {'batches/s':>10} {'vs (a)':>8}")
rows = [("(a) N=3, no straggler", a), ("(b) N=3, straggler (no spare)", b),
        ("(c) N=2, straggler (one spare)", c), ("(d) auto, no straggler", d),
        (f"(e) N=3, straggler from step {int(steps) // 2}", e),
        (f"(f) N=2, straggler from step {int(steps) // 2}", f),
        (f"(g) N=1, straggler from step {int(steps) // 2}", g),
        (f"(h) auto, straggler from step {int(steps) // 2} ({changes} changes of N)", h)]
for label, (steps_s, batches_s) in rows:
    print(f"{label:<50} {steps_s:9.1f} {steps_s / a[0]:8.2f} {batches_s:10.1f} {batches_s / a[1]:8.2f}")
print(f"gate_ratio: {b[0] / a[0]:.2f}")
print(f"spare_ratio: {c[0] / a[0]:.2f}")
print(f"auto_vs_best_fixed: {h[1] / max(e[1], f[1], g[1]):.2f}")
PY
