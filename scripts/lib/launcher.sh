# Stopping processes that the scripts in scripts/ started, sourced:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/launcher.sh"
#
# Safe under set -e.
#
# is_task_of_run PID RUN_DIR: PID runs a pstrain binary with RUN_DIR's flag
# file (run_local.sh's RUN_DIR/cluster.flags), i.e. it is still that run's
# task and not some later process that got the PID.
is_task_of_run() {
  local cmdline
  [[ "$1" =~ ^[0-9]+$ ]] || return 1
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline")" || return 1
  [[ "$cmdline" == *"--flagfile=$2/cluster.flags"* ]]
}

# wait_gone SECONDS PID...: returns once none of the PIDs runs (0), or after
# SECONDS (1).
wait_gone() {
  local deadline=$((SECONDS + $1)) pid alive
  shift
  while :; do
    alive=0
    for pid in "$@"; do if kill -0 "$pid" 2>/dev/null; then alive=1; fi; done
    ((alive)) || return 0
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# stop_pids PID...: SIGTERM, up to 5 s to leave, then SIGKILL; reaps them
# (they must be this shell's children).
stop_pids() {
  (($# > 0)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  wait_gone 5 "$@" || kill -KILL "$@" 2>/dev/null || true
  wait "$@" 2>/dev/null || true
}

# stop_launcher PID RUN_DIR: stops a run_local.sh started with setsid (the
# leader of its own process group) and every task it started: SIGTERM (it
# stops its tasks) and up to 10 s, then SIGKILL to its group and to any task
# in RUN_DIR/tasks.pid that outlived it (belt and braces).
stop_launcher() {
  local launcher="$1" run_dir="$2" name pid
  kill -TERM "$launcher" 2>/dev/null || true
  wait_gone 10 "$launcher" || true
  kill -KILL -- "-$launcher" 2>/dev/null || true
  while read -r name pid; do
    if is_task_of_run "$pid" "$run_dir"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done < <(cat "$run_dir/tasks.pid" 2>/dev/null || true)
  wait "$launcher" 2>/dev/null || true
}
