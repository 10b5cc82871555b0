#!/usr/bin/env bash
# Starts a whole cluster (chief, ps tasks, workers) on 127.0.0.1 with free
# ports, streams every task's log with a [task] prefix, keeps each log in the
# run folder, stops every process on Ctrl-C or when a task fails, and exits
# with the chief's status. RUN_DIR/tasks.pid lists the running tasks, one
# "NAME PID" a line, rewritten whenever one starts, restarts or ends.
#
#   scripts/run_local.sh --num_ps=2 --num_workers=2 --mode=async|sync|ssp \
#       [--replicas_to_aggregate=N] [--staleness_bound=S] [--slow_worker=I:D ...] \
#       [--train_steps=S] [--model=M] [--run_dir=DIR] [--quiet|--console=chief|all]
#       [--ps_hosts=HOST:PORT,...] [--link_gbit=G] [-- FLAGS for every task]
#
# --ps_hosts: use these ps tasks, already running (e.g. shared by several
# jobs, each with its own --container=NAME), instead of starting --num_ps of
# them; they are left running at the end.
#
# --link_gbit=G runs every task on a host of its own, all on one switch with
# links of G Gbit/s each way (network namespaces and tc, lib/netlab.sh; needs
# root), instead of all on 127.0.0.1, whose loopback moves bytes as fast as
# the CPU copies them: for what the wire costs on a real network (e.g. the
# bfloat16 wire). Not with --ps_hosts.
#
# The chief prints a progress line (step/total, steps/s, loss, ETA) every
# --progress_every_secs (5). --quiet (same as --console=chief) shows only
# the chief's progress, warnings and final report on the console; every
# task's full log is still in the run folder. TensorBoard event files go into
# the run folder (--logdir=PARENT, one sub-folder per run, unless --logdir is
# given); the command that shows them is printed.
#
# --slow_worker=I:D makes worker I a straggler: it sleeps D ms in every step;
# --slow_worker=I:D@S from its own step S on (it turns slow mid-run).
# --restart_failed restarts a task that dies (exponential backoff from 1 s to
# 16 s, back to 1 s once a task has run for 10 s; at most --max_restarts=5
# times per task) instead of stopping the run; with --checkpoint_dir the
# cluster resumes from its last checkpoint.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${PST_BIN_DIR:-${BUILD_DIR:-$root/build}/bin}"
num_ps=1
num_workers=2
run_dir=""
ps_hosts=""  # --ps_hosts: running ps tasks to use instead of starting some
link_gbit=""  # --link_gbit: each task on its own host, links of this speed
task_flags=()
declare -A worker_delay_ms worker_delay_from
restart_failed=0
max_restarts=5

quiet=0
logdir=""

usage() {  # the comment block above, up to the first line of code
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --num_ps=*) num_ps="${1#*=}" ;;
    --num_workers=*) num_workers="${1#*=}" ;;
    --run_dir=*) run_dir="${1#*=}" ;;
    --ps_hosts=*) ps_hosts="${1#*=}" ;;
    --link_gbit=*)
      link_gbit="${1#*=}"
      if ! [[ "$link_gbit" =~ ^[0-9]+(\.[0-9]+)?$ ]] || [[ "$link_gbit" =~ ^0+(\.0*)?$ ]]; then
        echo "run_local.sh: --link_gbit=$link_gbit is not a positive number of Gbit/s" >&2
        exit 2
      fi
      ;;
    --restart_failed) restart_failed=1 ;;
    --max_restarts=*) max_restarts="${1#*=}" ;;
    --slow_worker=*)
      spec="${1#*=}"
      if ! [[ "$spec" =~ ^([0-9]+):([0-9]+)(@([0-9]+))?$ ]]; then
        echo "run_local.sh: --slow_worker=$spec is not WORKER_INDEX:DELAY_MS[@FROM_STEP]" >&2
        exit 2
      fi
      worker_delay_ms[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]}"
      worker_delay_from[${BASH_REMATCH[1]}]="${BASH_REMATCH[4]:-0}"
      ;;
    --quiet|--console=chief) quiet=1 ;;
    --console=all) quiet=0 ;;
    --help|-h) usage; exit 0 ;;
    --) shift; task_flags+=("$@"); break ;;
    --*) task_flags+=("$1") ;;  # --mode, --train_steps, --model, ...: every task gets them
    *) echo "run_local.sh: unexpected argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
if [[ -n "$link_gbit" && -n "$ps_hosts" ]]; then
  echo "run_local.sh: --link_gbit starts every task on a host of its own; not with --ps_hosts" >&2
  exit 2
fi
for n in "$num_ps" "$num_workers"; do
  if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
    echo "run_local.sh: --num_ps and --num_workers must be positive integers" >&2
    exit 2
  fi
done

# MNIST (the default --dataset): --data_dir among the task flags, else MNIST_DIR.
data_dir="${MNIST_DIR:-}" dataset=mnist
for f in "${task_flags[@]}"; do
  [[ "$f" == --data_dir=* ]] && data_dir="${f#*=}"
  [[ "$f" == --dataset=* ]] && dataset="${f#*=}"
  [[ "$f" == --logdir=* ]] && logdir="${f#*=}"
done
if [[ "$dataset" == mnist ]]; then
  source "$(dirname "${BASH_SOURCE[0]}")/lib/mnist.sh"
  require_mnist run_local.sh "$data_dir" "pass --data_dir=DIR after '--'"
fi

# Only the three programs it starts (and the libraries they link): the
# tests and benchmarks build in scripts/test.sh and scripts/build.sh.
if [[ ! -x "$bin/chief" || ! -x "$bin/ps" || ! -x "$bin/worker" ]]; then
  echo "run_local.sh: building ps, worker and chief (no binaries in $bin)" >&2
  "$root/scripts/build.sh" --target ps worker chief || exit 1
  if [[ ! -x "$bin/chief" || ! -x "$bin/ps" || ! -x "$bin/worker" ]]; then
    echo "run_local.sh: the build wrote no ps, worker and chief in $bin" >&2
    exit 1
  fi
fi

run_dir="${run_dir:-$root/runs/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$run_dir" || exit 1
run_dir="$(cd "$run_dir" && pwd)"
# The chief writes events into LOGDIR/<run folder's name>: by default the
# run folder itself, and runs beside it show side by side in TensorBoard.
chief_flags=()
if [[ -z "$logdir" ]]; then
  logdir="$(dirname "$run_dir")"
  chief_flags+=(--logdir="$logdir")
fi

[[ -n "$ps_hosts" ]] && num_ps=0  # ports and tasks: none for the ps
# Host i of the cluster: 0 the chief, then the ps tasks, then the workers.
num_hosts=$((1 + num_ps + num_workers))
mapfile -t ports < <(python3 "$root/scripts/free_ports.py" "$num_hosts")
address=() on_host=()  # each host's address, and the prefix that runs a task there
if [[ -n "$link_gbit" ]]; then
  source "$root/scripts/lib/netlab.sh"
  trap netlab_delete EXIT
  netlab_create "$num_hosts" "$link_gbit" || exit 1
  address=("${NETLAB_ADDRESS[@]}") on_host=("${NETLAB_EXEC[@]}")
  echo "run_local.sh: every task on a host of its own, links of $link_gbit Gbit/s" >&2
else
  for ((i = 0; i < num_hosts; i++)); do address+=(127.0.0.1) on_host+=(""); done
fi
hosts() {  # hosts FIRST COUNT -> "ADDRESS:p1,ADDRESS:p2,..."
  local out="" i
  for ((i = $1; i < $1 + $2; i++)); do out+="${out:+,}${address[$i]}:${ports[$i]}"; done
  echo "$out"
}
flagfile="$run_dir/cluster.flags"
{
  echo "--chief_host=$(hosts 0 1)"
  echo "--ps_hosts=${ps_hosts:-$(hosts 1 "$num_ps")}"
  echo "--worker_hosts=$(hosts $((1 + num_ps)) "$num_workers")"
  echo "--data_dir=$data_dir"
  printf '%s\n' "${task_flags[@]}"
} >"$flagfile"

names=()
pids=()
commands=()  # each task's command line, for restarts
log_pids=()  # each task's log writer (tee | console_filter | sed)
console_filter() {  # console_filter NAME: the lines of task NAME's log the console shows
  if ((!quiet)); then
    cat
  elif [[ "$1" == chief ]]; then
    # Not its Step lines, glog INFO lines and their indented continuations:
    # progress lines, warnings, errors and the final report remain.
    grep --line-buffered -v -E '^(Step: |I[0-9]{8} |  )'
  else
    cat >/dev/null
  fi
}
launch() {  # launch INDEX: (re)starts task INDEX, appending to its log
  local name="${names[$1]}" log_fd
  # The log writer is the launcher's own child, so a failed task's last
  # line can be waited for before it is quoted.
  exec {log_fd}> >(tee -a "$run_dir/$name.log" | console_filter "$name" | sed -u "s/^/[$name] /")
  log_pids[$1]=$!
  # exec: the task replaces the background subshell, so $! is the task.
  eval "exec ${commands[$1]}" >&"$log_fd" 2>&1 &
  pids[$1]=$!
  started_pids+=("$!")
  started_at[$1]=$SECONDS
  exec {log_fd}>&-
  write_pid_file
}
write_pid_file() {  # RUN_DIR/tasks.pid: "NAME PID" of every running task
  local i
  for i in "${!pids[@]}"; do
    if [[ -z "${done_rc[${names[$i]}]:-}" && -z "${restart_at[${names[$i]}]:-}" ]]; then
      echo "${names[$i]} ${pids[$i]}"
    fi
  done >"$run_dir/tasks.pid.tmp"
  mv -f "$run_dir/tasks.pid.tmp" "$run_dir/tasks.pid"
}
start_task() {  # start_task NAME HOST BINARY [FLAGS...]
  local name="$1" host="$2" binary="$3"
  shift 3
  names+=("$name")
  commands+=("${on_host[$host]} $(printf '%q ' "$bin/$binary" --flagfile="$flagfile" "$@")")
  : >"$run_dir/$name.log"
  launch $((${#names[@]} - 1))
}

declare -A done_rc restarts restart_at failures_in_a_row
started_at=()
started_pids=()  # every task ever started, restarts too
# A task killed by a signal leaves its shared-memory names in /dev/shm
# ("pst-<cluster id>-<pid>-<purpose>"); the tasks leave them to the next
# start of the same job, which a finished run never gets. Called once every
# task has been reaped; a PID that lives again is someone else's: skipped.
remove_shared_memory() {
  local pid
  for pid in "${started_pids[@]}"; do
    kill -0 "$pid" 2>/dev/null && continue
    rm -f /dev/shm/pst-*-"$pid"-* 2>/dev/null
  done
}
# PIDs of the tasks still running (reaped ones are skipped: their PIDs may
# belong to someone else by now).
live_pids() {
  local i
  for i in "${!pids[@]}"; do
    [[ -z "${done_rc[${names[$i]}]:-}" && -z "${restart_at[${names[$i]}]:-}" ]] && echo "${pids[$i]}"
  done
}
stop_all() {
  local pid i alive
  for pid in $(live_pids); do kill -TERM "$pid" 2>/dev/null; done
  for ((i = 0; i < 50; i++)); do
    alive=0
    for pid in $(live_pids); do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for pid in $(live_pids); do kill -KILL "$pid" 2>/dev/null; done
}
trap 'echo "run_local.sh: interrupted, stopping every task" >&2; stop_all; wait; remove_shared_memory; exit 130' INT TERM

echo "run_local.sh: ${ps_hosts:-$num_ps ps}, $num_workers workers; logs and metrics in $run_dir" >&2
tensorboard_hint="run_local.sh: to plot it: tensorboard --logdir=$logdir (run $(basename "$run_dir"))"
echo "$tensorboard_hint" >&2
for ((k = 0; k < num_ps; k++)); do start_task "ps-$k" $((1 + k)) ps --task_index="$k"; done
start_task chief 0 chief --run_dir="$run_dir" "${chief_flags[@]}"
for ((k = 0; k < num_workers; k++)); do
  # Only for a --slow_worker: a flag after -- (the task flags) is not overridden.
  slow=()
  if [[ -n "${worker_delay_ms[$k]:-}" ]]; then
    slow=(--simulated_delay_ms="${worker_delay_ms[$k]}"
      --simulated_delay_from_step="${worker_delay_from[$k]}")
  fi
  start_task "worker-$k" $((1 + num_ps + k)) worker --task_index="$k" "${slow[@]}"
done

# Follow the tasks: the chief's end ends the run; any other failure stops it
# (or, with --restart_failed, restarts the task after a backoff).
chief_rc=""
while :; do
  for i in "${!pids[@]}"; do
    name="${names[$i]}" pid="${pids[$i]}"
    if [[ -n "${restart_at[$name]:-}" ]]; then
      if ((SECONDS >= restart_at[$name])); then
        unset "restart_at[$name]"
        echo "run_local.sh: restarting $name (restart ${restarts[$name]} of $max_restarts)" >&2
        launch "$i"
      fi
      continue
    fi
    [[ -n "${done_rc[$name]:-}" ]] && continue
    kill -0 "$pid" 2>/dev/null && continue
    wait "$pid"
    rc=$?
    done_rc[$name]=$rc
    write_pid_file
    if ((rc != 0 && restart_failed && ${restarts[$name]:-0} < max_restarts)) && [[ -z "$chief_rc" ]]; then
      restarts[$name]=$((${restarts[$name]:-0} + 1))
      # A task that ran a while failed anew, not again at start-up: the
      # backoff starts over (else a long run soon waits 16 s per restart).
      ((SECONDS - started_at[$i] >= 10)) && failures_in_a_row[$name]=0
      failures_in_a_row[$name]=$((${failures_in_a_row[$name]:-0} + 1))
      backoff=$((1 << (failures_in_a_row[$name] - 1)))
      ((backoff > 16)) && backoff=16
      restart_at[$name]=$((SECONDS + backoff))
      unset "done_rc[$name]"
      echo "run_local.sh: $name died (exit $rc); restarting it in ${backoff} s" >&2
      continue
    fi
    if [[ $rc -ne 0 && ( "$name" == chief || -z "$chief_rc" ) ]]; then
      wait "${log_pids[$i]}"
      echo "run_local.sh: $name failed (exit $rc): $(tail -n 1 "$run_dir/$name.log")" >&2
    fi
    if [[ "$name" == chief ]]; then
      chief_rc=$rc
    elif [[ $rc -ne 0 && -z "$chief_rc" ]]; then
      echo "run_local.sh: stopping every task" >&2
      stop_all
      wait
      remove_shared_memory
      exit "$rc"
    fi
  done
  if [[ -n "$chief_rc" ]]; then break; fi
  sleep 0.2
done

# The chief has finished: the others should be leaving on their own. Once
# every ps is gone too, a worker still running (one that started too late
# to join) has nothing left to do and is stopped at once. With --ps_hosts
# (the ps are not ours) the workers get the same 10 s as with our own.
ps_pids() {
  local i
  for i in "${!pids[@]}"; do [[ "${names[$i]}" == ps-* ]] && echo "${pids[$i]}"; done
}
external_ps=0
[[ -n "$ps_hosts" ]] && external_ps=1
for ((i = 0; i < 100; i++)); do
  alive=0 ps_alive=$external_ps
  for pid in $(live_pids); do kill -0 "$pid" 2>/dev/null && alive=1; done
  for pid in $(ps_pids); do kill -0 "$pid" 2>/dev/null && ps_alive=1; done
  ((alive && ps_alive)) || break
  sleep 0.1
done
if ((alive)); then
  echo "run_local.sh: stopping the tasks still running after the chief ended" >&2
  stop_all
fi
wait
remove_shared_memory
echo "run_local.sh: chief exited $chief_rc; run folder $run_dir" >&2
echo "$tensorboard_hint" >&2
exit "$chief_rc"
