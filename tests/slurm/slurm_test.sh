#!/usr/bin/env bash
# The Slurm recipe on a real, single-node Slurm (tests/slurm/local_slurm.sh:
# munged, slurmctld and slurmd started here, stopped by PID at the end):
#   0. cluster_from_slurm.sh places tasks and ports for a 3-node nodelist;
#   1. sbatch scripts/slurm/pstrain.sbatch with 1 ps and 2 workers (async):
#      the job completes, its exit status and exit_code are the chief's (0)
#      and the job's output carries the chief's Test-Accuracy line (>= 0.9);
#   2. a long job is scancel'ed mid-run: the chief writes its final
#      checkpoint and exits 143, and no ps, worker or chief process is left;
#   3. the same job submitted again resumes from that checkpoint.
# MNIST from MNIST_DIR when set, else a small synthetic set. Exits 77
# (skipped) when the daemons cannot start (not root, slurm-wlm or munge not
# installed: scripts/setup.sh installs them). Registered in ctest with the
# label slurm: ctest -L slurm.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${PST_BIN_DIR:-$root/build/bin}"
work="$(mktemp -d "${TMPDIR:-/tmp}/pst-slurm-test.XXXXXX")"
state="$work/slurm"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
elapsed_ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

cleanup() {
  "$root/tests/slurm/local_slurm.sh" stop "$state"
  # Keep the state and logs of a failed run for a look.
  if ((failures == 0)); then rm -rf "$work"; else echo "slurm_test: files kept in $work" >&2; fi
}
trap cleanup EXIT

t0=$(date +%s%N)
"$root/tests/slurm/local_slurm.sh" start "$state" >"$work/env" 2>"$work/start.log"
rc=$?
cat "$work/start.log" >&2
if ((rc == 3)); then
  echo "slurm_test: SKIPPED: $(tail -n 1 "$work/start.log")"
  exit 77
elif ((rc != 0)); then
  fail "local_slurm.sh start exited $rc"
  exit 1
fi
echo "slurm_test: single-node Slurm started in $(elapsed_ms "$t0") ms"
export SLURM_CONF="$state/slurm.conf"

# The data: MNIST, else synthetic IDX files (each class lights its own band
# of rows, plus noise; as tests/integration/synthetic_mnist.cc).
data_dir="${MNIST_DIR:-}"
steps=1000
if [[ -z "$data_dir" || ! -e "$data_dir/train-labels-idx1-ubyte.gz" && ! -e "$data_dir/train-labels-idx1-ubyte" ]]; then
  data_dir="$work/synthetic"
  steps=400
  mkdir -p "$data_dir"
  python3 - "$data_dir" <<'PY'
import random, struct, sys
d = sys.argv[1]
rng = random.Random(7)
for prefix, count in (("train", 3000), ("t10k", 500)):
    with open(f"{d}/{prefix}-images-idx3-ubyte", "wb") as images, \
         open(f"{d}/{prefix}-labels-idx1-ubyte", "wb") as labels:
        images.write(struct.pack(">IIII", 0x803, count, 28, 28))
        labels.write(struct.pack(">II", 0x801, count))
        for i in range(count):
            label = i % 10
            px = bytearray(rng.randint(0, 90) for _ in range(784))
            for p in range(28 * (2 + 2 * label), 28 * (4 + 2 * label)):
                px[p] = 160 + rng.randint(0, 90)
            images.write(px)
            labels.write(bytes([label]))
PY
  echo "slurm_test: MNIST_DIR unset: synthetic data in $data_dir"
fi

submit() {  # submit NAME ARGS...: prints the job id
  local name="$1"
  shift
  PSTRAIN_ROOT="$root" PST_BIN_DIR="$bin" sbatch --parsable --job-name="$name" \
    --output="$work/$name.out" --chdir="$work" \
    "$root/scripts/slurm/pstrain.sbatch" --run_dir="$work/$name" "$@"
}
wait_gone() {  # wait_gone JOB SECONDS: 0 once squeue no longer lists JOB
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    [[ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]] && return 0
    sleep 0.2
  done
  return 1
}
job_field() {  # job_field JOB FIELD: from scontrol (kept MinJobAge=300 s)
  scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# 0. The cluster spec from SLURM_* variables, for a 3-node allocation.
SLURM_JOB_ID=1234 SLURM_JOB_NODELIST="n[1-2],gpu7" "$root/scripts/slurm/cluster_from_slurm.sh" \
  --run_dir="$work/spec" --num_ps=2 --workers_per_node=1 --resolve=name --model=cnn 2>/dev/null
expected="--chief_host=n1:15360 --ps_hosts=n1:15361,n2:15360 --worker_hosts=n1:15362,n2:15361,gpu7:15360 --model=cnn"
got="$(tr '\n' ' ' <"$work/spec/cluster.flags" 2>/dev/null)"
[[ "$got" == "$expected " ]] || fail "cluster_from_slurm.sh wrote '$got', expected '$expected'"
[[ "$(awk '{ printf "%s@%s ", $1, $2 }' "$work/spec/tasks" 2>/dev/null)" == "chief@n1 ps-0@n1 ps-1@n2 worker-0@n1 worker-1@n2 worker-2@gpu7 " ]] ||
  fail "cluster_from_slurm.sh tasks: $(cat "$work/spec/tasks" 2>/dev/null)"

# 1. A whole training job.
t1=$(date +%s%N)
job="$(submit train --ps_per_node=1 --workers_per_node=2 --mode=async -- \
  --data_dir="$data_dir" --model=mlp_relu --train_steps="$steps" --eval_every_steps=0)"
if [[ -z "$job" ]]; then
  fail "sbatch failed"
  exit 1
fi
if ! wait_gone "$job" 120; then
  fail "job $job still queued or running after 120 s"
  scancel "$job"
  wait_gone "$job" 30
fi
echo "slurm_test: job $job ran in $(elapsed_ms "$t1") ms (submit to gone from squeue)"
state_line="$(job_field "$job" JobState) $(job_field "$job" ExitCode)"
[[ "$state_line" == "COMPLETED 0:0" ]] || fail "job $job: state and exit code '$state_line', expected 'COMPLETED 0:0'"
[[ "$(cat "$work/train/exit_code" 2>/dev/null)" == 0 ]] || fail "exit_code file: '$(cat "$work/train/exit_code" 2>/dev/null)'"
accuracy="$(sed -n 's/^\[chief\] Test-Accuracy: //p' "$work/train.out")"
echo "slurm_test: Test-Accuracy ${accuracy:-<none>}"
if [[ -z "$accuracy" ]] || ! python3 -c "import sys; sys.exit(float('$accuracy') < 0.9)"; then
  fail "no Test-Accuracy >= 0.9 in the job's output; its tail:"$'\n'"$(tail -n 20 "$work/train.out")"
fi
for log in chief ps-0 worker-0 worker-1; do
  [[ -s "$work/train/$log.log" ]] || fail "no log $work/train/$log.log"
done

# 2. scancel mid-run: the chief's final checkpoint is written (the ps wait
# for it), and no task is left behind. Periodic checkpoints are off.
job="$(submit cancelled --ps_per_node=1 --workers_per_node=2 --mode=async -- \
  --data_dir="$data_dir" --model=mlp_relu --train_steps=10000000 --log_every_steps=50 \
  --checkpoint_dir="$work/ckpt" --checkpoint_every_steps=100000000 --checkpoint_every_secs=0)"
trained=0
for ((i = 0; i < 300; i++)); do
  grep -q "^Step: " "$work/cancelled/chief.log" 2>/dev/null && { trained=1; break; }
  sleep 0.2
done
((trained)) || fail "job $job: no step trained within 60 s"
tasks_of_job() { pgrep -f -- "--flagfile=$work/cancelled/cluster.flags" || true; }
[[ -n "$(tasks_of_job)" ]] || fail "job $job: no task process found while it runs"
t2=$(date +%s%N)
scancel "$job"
wait_gone "$job" 60 || fail "job $job still listed 60 s after scancel"
echo "slurm_test: job $job gone $(elapsed_ms "$t2") ms after scancel"
left="$(tasks_of_job)"
if [[ -n "$left" ]]; then
  fail "processes of cancelled job $job left: $(ps -o pid=,args= -p "${left//$'\n'/,}")"
fi
[[ "$(job_field "$job" JobState)" == CANCELLED ]] || fail "job $job state $(job_field "$job" JobState)"
saved="$(sed -n 's/.*stopped by a signal after checkpointing at step \([0-9]*\).*/\1/p' "$work/cancelled/chief.log")"
if [[ -z "$saved" ]]; then
  fail "job $job: no final checkpoint on scancel; the chief's log ends:"$'\n'"$(tail -n 8 "$work/cancelled/chief.log")"
elif ! ls "$work"/ckpt/ckpt-*"$saved"/manifest >/dev/null 2>&1; then
  fail "job $job: the chief reported a checkpoint at step $saved, but $work/ckpt has no complete one"
else
  echo "slurm_test: scancel kept a final checkpoint at step $saved"
fi
[[ "$(cat "$work/cancelled/exit_code" 2>/dev/null)" == 143 ]] ||
  fail "job $job: exit_code '$(cat "$work/cancelled/exit_code" 2>/dev/null)', expected 143 (the chief's, stopped by SIGTERM)"

# 3. The same job submitted again resumes from that checkpoint.
if [[ -n "$saved" ]]; then
  job="$(submit resumed --ps_per_node=1 --workers_per_node=2 --mode=async -- \
    --data_dir="$data_dir" --model=mlp_relu --train_steps=$((saved + 200)) --log_every_steps=50 \
    --checkpoint_dir="$work/ckpt" --checkpoint_every_steps=100000000 --checkpoint_every_secs=0)"
  wait_gone "$job" 120 || fail "job $job still listed after 120 s"
  grep -q "restored checkpoint .*ckpt-0*$saved at step $saved" "$work/resumed/chief.log" ||
    fail "job $job did not resume from step $saved; the chief's log:"$'\n'"$(grep -i checkpoint "$work/resumed/chief.log" | tail -n 5)"
  [[ "$(job_field "$job" JobState) $(job_field "$job" ExitCode)" == "COMPLETED 0:0" ]] ||
    fail "job $job: $(job_field "$job" JobState) $(job_field "$job" ExitCode), expected COMPLETED 0:0"
  echo "slurm_test: resubmitted job $job resumed at step $saved and completed"
fi

if ((failures)); then
  echo "slurm_test: $failures failure(s)"
  exit 1
fi
echo "slurm_test: PASSED"
