#!/usr/bin/env bash
# Chaos benchmark: does training survive tasks that die at random? For each
# mode, one undisturbed baseline run, then N chaos runs of a local cluster
# (2 ps, 3 workers; sync averages N=2 of them, so one worker is a spare),
# each started by scripts/run_local.sh with --restart_failed and checkpoints
# (every --checkpoint_every steps, into the run folder). During a chaos run
# a killer sends SIGKILL to a random task (the chief, a ps or a worker) every
# MIN..MAX seconds, chosen from the PIDs the launcher records in
# RUN/tasks.pid; before each kill it checks in /proc that the PID still runs
# this run's binary with this run's flag file, so it never touches another
# process. Kills stop once the chief has reported global step >= the train
# steps (a Step or Progress line), or its Global-Step line (what remains is
# the final evaluation, checkpoint and shutdown).
#
#   scripts/chaos.sh [--runs=N] [--modes=sync,async] [--kill_every=MIN:MAX]
#       [--kill_roles=chief,ps,worker] [--ps_replicas=R]
#       [--train_steps=S] [--model=M] [--out=DIR] [--data_dir=DIR]
#       [--checkpoint_every=STEPS] [--stall_after=SECONDS]
#       [--stop_after=SECONDS] [--run_timeout=SECONDS] [--seed=N]
#       [-- FLAGS for every task]
#
# Defaults: 10 runs of each of sync and async, a kill every 3 to 8 s, 3000
# steps of mlp_relu, checkpoints every 200 steps, MNIST from MNIST_DIR (or
# --data_dir), results in results/chaos. Per run it measures:
#   finished      the launcher exited 0 and the chief printed Test-Accuracy
#                 and Global-Step >= the train steps;
#   kills         SIGKILLs sent (by role: chief/ps/worker; --kill_roles
#                 picks the roles a victim is drawn from);
#   stall per kill  for each kill, the time until the chief reports a global
#                 step past the one at the kill by more than the workers
#                 (their pushes already in flight may land without the
#                 cluster going on); 0.5 s resolution;
#   stalls        times the chief's reported global step (its Step: lines,
#                 printed every 10 steps here) did not change for
#                 --stall_after (30) s while the run was alive; a run without
#                 progress for --stop_after (90) s, or running longer than
#                 --run_timeout (900) s, is stopped and counts as not
#                 finished;
#   lost updates  in the run's final checkpoint (the one at step S >= the
#                 train steps that the chief writes before it stops), the
#                 updates the global step counts but a variable never got:
#                 the sum over every trainable variable of every ps part of
#                 max(0, S - the variable's version), where a version is the
#                 number of updates applied to it (restored with it from a
#                 checkpoint). A step that reached one shard but not another
#                 (a push half lost), or a shard left behind by a rollback,
#                 shows here. Updates applied but not counted (version > S)
#                 are reported apart as "uncounted"; in sync mode a part
#                 whose @sync_step is not S counts the difference as lost
#                 too. Checked for finished
#                 runs only (an async checkpoint taken while workers push is
#                 not a snapshot of one instant, so only the final one is
#                 comparable);
#   accuracy      the chief's final Test-Accuracy; the summary compares the
#                 mean over finished chaos runs with the baseline's.
# Writes OUT/MODE/{baseline,run-NN}/ (the launcher's run folders, plus
# launcher.log, kills.log and chaos.txt), OUT/summary.md (a Markdown table
# per mode and one line per mode, also printed), e.g.
#   sync: finished 10/10, kills 37, stalls 0, lost_updates 0 (checked 10),
#   accuracy 0.9750 (baseline 0.9770, ratio 0.998)
# --ps_replicas=R passes R to every task (replicated shards: a lost ps costs
# no rollback; docs/REPLICATED_SHARDS.md). The ps mode of issue 25 is
#   scripts/chaos.sh --modes=async --kill_roles=ps --ps_replicas=2 --kill_every=5:10
# Exits 0 however the runs went (it is a measurement), 2 on misuse. Ctrl-C
# stops every process it started.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=10
modes=sync,async
kill_min=3
kill_max=8
steps=3000
model=mlp_relu
out="$root/results/chaos"
data_dir="${MNIST_DIR:-}"
checkpoint_every=200
stall_after=30
stop_after=90
run_timeout=900
seed=1
num_ps=2
num_workers=3
replicas=2
kill_roles=chief,ps,worker
ps_replicas=1
task_flags=()

misuse() {
  echo "chaos.sh: $*" >&2
  echo "Run scripts/chaos.sh --help for the usage." >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs=*) runs="${1#*=}" ;;
    --modes=*) modes="${1#*=}" ;;
    --kill_every=*)
      [[ "${1#*=}" =~ ^([0-9]+):([0-9]+)$ ]] || misuse "--kill_every=${1#*=} is not MIN:MAX (whole seconds)"
      kill_min="${BASH_REMATCH[1]}" kill_max="${BASH_REMATCH[2]}"
      ;;
    --train_steps=*) steps="${1#*=}" ;;
    --model=*) model="${1#*=}" ;;
    --out=*) out="${1#*=}" ;;
    --data_dir=*) data_dir="${1#*=}" ;;
    --checkpoint_every=*) checkpoint_every="${1#*=}" ;;
    --stall_after=*) stall_after="${1#*=}" ;;
    --stop_after=*) stop_after="${1#*=}" ;;
    --run_timeout=*) run_timeout="${1#*=}" ;;
    --seed=*) seed="${1#*=}" ;;
    --kill_roles=*) kill_roles="${1#*=}" ;;
    --ps_replicas=*) ps_replicas="${1#*=}" ;;
    --) shift; task_flags+=("$@"); break ;;
    *) misuse "unknown argument '$1'" ;;
  esac
  shift
done
for pair in "runs:$runs" "train_steps:$steps" "checkpoint_every:$checkpoint_every" \
  "stall_after:$stall_after" "stop_after:$stop_after" "run_timeout:$run_timeout" \
  "kill_every MAX:$kill_max"; do
  [[ "${pair#*:}" =~ ^[1-9][0-9]*$ ]] || misuse "--${pair%%:*} must be a positive integer, got '${pair#*:}'"
done
[[ "$seed" =~ ^[0-9]+$ ]] || misuse "--seed must be a non-negative integer"
[[ "$ps_replicas" =~ ^[1-9][0-9]*$ ]] || misuse "--ps_replicas must be a positive integer"
((ps_replicas <= num_ps)) || misuse "--ps_replicas=$ps_replicas is above the $num_ps ps"
IFS=, read -r -a role_list <<<"$kill_roles"
((${#role_list[@]} > 0)) || misuse "--kill_roles is empty"
for r in "${role_list[@]}"; do
  [[ "$r" == chief || "$r" == ps || "$r" == worker ]] || misuse "--kill_roles: '$r' is not chief, ps or worker"
done
# True when the task named $1 ("ps-1") has one of --kill_roles.
killable() {
  local r
  for r in "${role_list[@]}"; do [[ "${1%-*}" == "$r" ]] && return 0; done
  return 1
}
((kill_min <= kill_max)) || misuse "--kill_every=$kill_min:$kill_max: MIN is above MAX"
((stall_after <= stop_after)) || misuse "--stall_after must not exceed --stop_after"
IFS=, read -r -a mode_list <<<"$modes"
((${#mode_list[@]} > 0)) || misuse "--modes is empty"
for m in "${mode_list[@]}"; do
  [[ "$m" == sync || "$m" == async ]] || misuse "--modes: '$m' is neither sync nor async"
done
source "$(dirname "${BASH_SOURCE[0]}")/lib/mnist.sh"
require_mnist chaos.sh "$data_dir" "pass --data_dir=DIR"
if [[ ! -x "$root/build/bin/chief" && -z "${PST_BIN_DIR:-}" ]]; then
  "$root/scripts/build.sh" >&2
fi
RANDOM=$seed
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The run in progress: the launcher (leader of its own process group) and
# its folder. stop_run stops it and everything it started.
launcher_pid=""
run_dir=""
source "$(dirname "${BASH_SOURCE[0]}")/lib/launcher.sh"
stop_run() {
  [[ -n "$launcher_pid" ]] || return 0
  stop_launcher "$launcher_pid" "$run_dir"
  launcher_pid=""
}
trap 'echo "chaos.sh: interrupted, stopping the run" >&2; stop_run; exit 130' INT TERM
trap 'stop_run' EXIT

# The chief's newest reported global step ("" before its first Step or
# Progress line). A chief restarted after the workers reached the end prints
# no Step line before its report, only a Progress line at the end.
reported_step() {
  { grep -oE '^Step: [0-9]+|Progress: step [0-9]+' "$run_dir/chief.log" 2>/dev/null || true; } |
    tail -n 1 | grep -oE '[0-9]+$' || true
}

# one_run MODE NAME CHAOS(0|1): runs one cluster, kills tasks when CHAOS is
# 1, writes RUN/chaos.txt.
one_run() {
  local mode="$1" name="$2" chaos="$3"
  run_dir="$out/$mode/$name"
  mkdir -p "$run_dir"
  local launcher=(--num_ps="$num_ps" --num_workers="$num_workers" --mode="$mode"
    --model="$model" --train_steps="$steps" --run_dir="$run_dir"
    --restart_failed --max_restarts=1000)
  [[ "$mode" == sync ]] && launcher+=(--replicas_to_aggregate="$replicas")
  setsid "$root/scripts/run_local.sh" "${launcher[@]}" -- --data_dir="$data_dir" \
    --checkpoint_dir="$run_dir/ckpt" --checkpoint_every_steps="$checkpoint_every" \
    --log_every_steps=10 --eval_every_steps=0 --ps_replicas="$ps_replicas" "${task_flags[@]}" \
    >"$run_dir/launcher.log" 2>&1 &
  launcher_pid=$!
  : >"$run_dir/kills.log"
  : >"$run_dir/kill_stalls.log"
  local kill_ms=() kill_step=()  # the kills not followed by progress yet
  local start=$SECONDS started_ns kills=0 stalls=0 in_stall=0 stopped=""
  started_ns=$(date +%s%N)
  local last_step="" last_progress=$SECONDS step now
  local next_kill=$((SECONDS + kill_min + RANDOM % (kill_max - kill_min + 1)))
  while kill -0 "$launcher_pid" 2>/dev/null; do
    sleep 0.5
    now=$SECONDS
    step="$(reported_step)"
    if [[ "$step" != "$last_step" ]]; then
      last_step="$step" last_progress=$now in_stall=0
    fi
    if ((${#kill_ms[@]} > 0)) && [[ -n "$step" ]]; then
      local now_ms=$(($(date +%s%N) / 1000000)) k waiting_ms=() waiting_step=()
      for k in "${!kill_ms[@]}"; do
        if ((step > kill_step[k] + num_workers)); then
          echo $((now_ms - kill_ms[k])) >>"$run_dir/kill_stalls.log"
        else
          waiting_ms+=("${kill_ms[k]}") waiting_step+=("${kill_step[k]}")
        fi
      done
      kill_ms=("${waiting_ms[@]}") kill_step=("${waiting_step[@]}")
    fi
    local training_over=0
    if [[ -n "$step" ]] && ((step >= steps)) || grep -q '^Global-Step: ' "$run_dir/chief.log" 2>/dev/null; then
      training_over=1
    fi
    if ((!training_over)); then
      if ((!in_stall && now - last_progress >= stall_after)); then
        stalls=$((stalls + 1)) in_stall=1
        echo "chaos.sh: $mode/$name: no progress for ${stall_after} s (step ${last_step:-none})" >&2
      fi
      if ((now - last_progress >= stop_after)); then
        stopped="no progress for $stop_after s"
        break
      fi
    fi
    if ((now - start >= run_timeout)); then
      stopped="ran longer than $run_timeout s"
      break
    fi
    if ((chaos && !training_over && now >= next_kill)); then
      next_kill=$((now + kill_min + RANDOM % (kill_max - kill_min + 1)))
      local live=() line
      while read -r line; do
        [[ -n "$line" ]] && killable "${line% *}" && is_task_of_run "${line#* }" "$run_dir" &&
          live+=("$line")
      done < <(cat "$run_dir/tasks.pid" 2>/dev/null || true)
      ((${#live[@]} > 0)) || continue
      line="${live[RANDOM % ${#live[@]}]}"
      if kill -KILL "${line#* }" 2>/dev/null; then
        kills=$((kills + 1))
        kill_ms+=($(($(date +%s%N) / 1000000))) kill_step+=("${step:-0}")
        echo "$((now - start)) ${line% *} ${line#* } step=${step:-none}" >>"$run_dir/kills.log"
      fi
    fi
  done
  local rc
  if [[ -n "$stopped" ]]; then
    echo "chaos.sh: $mode/$name: stopping it: $stopped" >&2
    stop_run
    rc=stopped
  else
    rc=0
    wait "$launcher_pid" || rc=$?
    launcher_pid=""
  fi
  cat >"$run_dir/chaos.txt" <<EOF
mode=$mode
chaos=$chaos
launcher_rc=$rc
stopped=$stopped
kills=$kills
stalls=$stalls
train_steps=$steps
wall_s=$(( ($(date +%s%N) - started_ns) / 1000000 ))
EOF
  echo "chaos.sh: $mode/$name: launcher exit $rc, $kills kills, $stalls stalls, last step ${last_step:-none}, $((SECONDS - start)) s" >&2
}

for mode in "${mode_list[@]}"; do
  rm -rf "${out:?}/$mode"
  one_run "$mode" baseline 0
  for ((r = 1; r <= runs; r++)); do
    one_run "$mode" "$(printf 'run-%02d' "$r")" 1
  done
done

python3 "$root/scripts/chaos_summary.py" "$out" "${mode_list[@]}"
echo "chaos.sh: wrote $out/summary.md" >&2
