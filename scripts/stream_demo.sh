#!/usr/bin/env bash
# A click log that never ends, on this machine: files of a generated click
# log (examples/make_ctr_problem.py, planted interactions) appear one every
# few seconds in a folder; a cluster of 2 ps, 2 workers and the chief trains
# on them as they come (--follow), exports the model every few seconds
# (--export_every_secs), and, when build/bin/serve exists, a server follows
# the exports. At the end the chief gets SIGTERM, and the script writes
#   OUT/progressive.png   each file's progressive AUC and the 10-file window,
#                         against the problem's Bayes and logistic-regression AUC
#   OUT/lag.tsv           every second: the training's global step, the
#                         served model's step, and the served model's lag in
#                         seconds (how long ago training was at that step)
#   OUT/summary.txt       files, lines, the final test AUC, the lag's median
#                         and 90th percentile, in export intervals too
#
# usage: scripts/stream_demo.sh [--files=24] [--lines=10000] [--every_secs=5]
#          [--export_every_secs=5] [--model=deepfm] [--out=runs/stream-demo]
# Needs the binaries (scripts/build.sh) and Debian's python3 with matplotlib.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
files=24 lines=10000 every=5 export_every=5 model=deepfm out="$root/runs/stream-demo"
for arg in "$@"; do
  case "$arg" in
    --files=*) files="${arg#*=}" ;;
    --lines=*) lines="${arg#*=}" ;;
    --every_secs=*) every="${arg#*=}" ;;
    --export_every_secs=*) export_every="${arg#*=}" ;;
    --model=*) model="${arg#*=}" ;;
    --out=*) out="${arg#*=}" ;;
    *) echo "stream_demo.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
bin="${PST_BIN_DIR:-$root/build/bin}"
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$out/in" "$out/src" "$out/run" "$out/ckpt" "$out"/*.log "$out/lag.tsv"
mkdir -p "$out/in" "$out/src"

data="$out/data-$files-$lines"
if [[ ! -f "$data/train.txt" ]]; then
  "$python" "$root/examples/make_ctr_problem.py" "$data" --train_examples=$((files * lines)) \
    --test_examples=20000 --seed=5 --lr_epochs=1 > "$out/generator.log"
fi
split -l "$lines" -d -a 4 "$data/train.txt" "$out/src/part-"

read -r -a ports <<< "$("$python" "$root/scripts/free_ports.py" 7 | tr '\n' ' ')"
cluster=(--ps_hosts=127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}
         --worker_hosts=127.0.0.1:${ports[2]},127.0.0.1:${ports[3]}
         --chief_host=127.0.0.1:${ports[4]})
job=(--dataset=criteo --model="$model" --embedding_rows=200000 --batch_size=256 --follow
     --train_files="$out/in/part-*")
pids=()
stop_everything() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_everything EXIT
for k in 0 1; do
  "$bin/ps" "${cluster[@]}" --task_index=$k --checkpoint_dir="$out/ckpt" > "$out/ps$k.log" 2>&1 &
  pids+=($!)
done
"$bin/chief" "${cluster[@]}" "${job[@]}" --test_file="$data/test.txt" --train_steps=0 \
  --run_dir="$out/run" --checkpoint_dir="$out/ckpt" --checkpoint_every_secs=60 \
  --export_every_secs="$export_every" --eval_every_steps=0 --metrics_port="${ports[5]}" \
  > "$out/chief.log" 2>&1 &
chief=$!
pids+=($chief)
for k in 0 1; do
  "$bin/worker" "${cluster[@]}" "${job[@]}" --task_index=$k > "$out/worker$k.log" 2>&1 &
  pids+=($!)
done
serve_port=""
if [[ -x "$bin/serve" ]]; then
  "$bin/serve" --export_dir="$out/run/export" --port="${ports[6]}" > "$out/serve.log" 2>&1 &
  pids+=($!)
  serve_port="${ports[6]}"
fi

# The gauge `name` of the /metrics page on `port` ("" while it cannot be read).
gauge() { curl -s "127.0.0.1:$1/metrics" 2>/dev/null | awk -v n="$2" '$1 == n { print $2 }'; }
sample_lag() {
  echo -e "seconds\ttrain_step\tserved_step" > "$out/lag.tsv"
  local start=$SECONDS
  while kill -0 "$chief" 2>/dev/null; do
    echo -e "$((SECONDS - start))\t$(gauge "${ports[5]}" pstrain_global_step)\t$(
      [[ -n "$serve_port" ]] && gauge "$serve_port" pstrain_serve_model_step)" >> "$out/lag.tsv"
    sleep 1
  done
}
sample_lag &
sampler=$!

for ((i = 0; i < files; ++i)); do
  name=$(printf 'part-%04d' "$i")
  cp "$out/src/$name" "$out/in/.$name" && mv "$out/in/.$name" "$out/in/$name"
  sleep "$every"
done
# The last file trained and exported, then the end of the stream.
for _ in $(seq 120); do
  grep -q "stream caught up: $files files" "$out/chief.log" && break
  sleep 1
done
sleep "$export_every"
kill -TERM "$chief"
wait "$chief" || { echo "stream_demo.sh: the chief failed; see $out/chief.log" >&2; exit 1; }
wait "$sampler" || true
"$python" "$root/scripts/plot_stream.py" "$out" "$data/problem.json" "$export_every"
cat "$out/summary.txt"
