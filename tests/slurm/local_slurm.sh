#!/usr/bin/env bash
# A single-node Slurm on this machine, for tests and trying the sbatch recipe:
# munged, slurmctld and slurmd as plain background processes (no systemd, no
# cgroups, proctrack/linuxproc) with a generated slurm.conf: one node
# `localhost` with this machine's CPUs, one partition `debug`, free ports.
#
#   tests/slurm/local_slurm.sh start STATE_DIR   # prints "export SLURM_CONF=..."
#   tests/slurm/local_slurm.sh stop STATE_DIR    # stops the three daemons by PID
#
# Needs root (slurmd runs jobs as their submitter) and the Debian packages
# slurm-wlm and munge (scripts/setup.sh installs them). start exits 3 when a
# daemon cannot start (not root, packages missing): the caller may skip.
# Every file (slurm.conf, the munge key, spools, logs, PID files) lives in
# STATE_DIR; client commands need SLURM_CONF=STATE_DIR/slurm.conf.
set -uo pipefail

cmd="${1:-}"
state="${2:-}"
if [[ "$cmd" == -h || "$cmd" == --help || -z "$cmd" || -z "$state" ]]; then
  awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"
  [[ -n "$cmd" && "$cmd" != -h && "$cmd" != --help ]] && exit 2
  [[ -z "$cmd" ]] && exit 2
  exit 0
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

stop_daemons() {  # by the PIDs this script recorded, slurmd first
  local name pid i
  for name in slurmd slurmctld munged; do
    pid="$(cat "$state/$name.pid" 2>/dev/null)" || continue
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    kill -TERM "$pid" 2>/dev/null || continue
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    rm -f "$state/$name.pid"
  done
}

if [[ "$cmd" == stop ]]; then
  stop_daemons
  exit 0
fi
if [[ "$cmd" != start ]]; then
  echo "local_slurm.sh: unknown command '$cmd' (start or stop)" >&2
  exit 2
fi

skip() { echo "local_slurm.sh: cannot start a local Slurm: $*" >&2; stop_daemons; exit 3; }
[[ "$(id -u)" -eq 0 ]] || skip "not root (slurmd must run as root)"
for tool in munged mungekey slurmctld slurmd sinfo sbatch squeue scontrol scancel; do
  command -v "$tool" >/dev/null || skip "'$tool' not found (scripts/setup.sh installs slurm-wlm and munge)"
done

mkdir -p "$state" && state="$(cd "$state" && pwd)"
mkdir -p "$state/munge" "$state/ctld" "$state/spool"
chmod 700 "$state/munge"
start_ns=$(date +%s%N)

# munge: a fresh key, its own socket; slurm finds it through AuthInfo.
rm -f "$state/munge/munge.key"
mungekey --create --keyfile="$state/munge/munge.key" >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
socket="$state/munge/munge.socket"
munged --foreground --force --key-file="$state/munge/munge.key" --socket="$socket" \
  --pid-file="$state/munge/munged.pidfile" --log-file="$state/munge/munged.log" \
  --seed-file="$state/munge/munged.seed" >"$state/munged.out" 2>&1 &
echo $! >"$state/munged.pid"
for ((i = 0; i < 50; i++)); do [[ -S "$socket" ]] && break; sleep 0.1; done
[[ -S "$socket" ]] || skip "munged did not start: $(tail -n 3 "$state/munged.out" "$state/munge/munged.log" 2>/dev/null)"

mapfile -t ports < <(python3 "$root/scripts/free_ports.py" 2)
cpus="$(nproc)"
cat >"$state/slurm.conf" <<CONF
ClusterName=pstlocal
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pidfile
SlurmdPidFile=$state/slurmd.pidfile
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
export SLURM_CONF="$state/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$state/slurmctld.out" 2>&1 &
echo $! >"$state/slurmctld.pid"
slurmd -D -f "$SLURM_CONF" -N localhost >"$state/slurmd.out" 2>&1 &
echo $! >"$state/slurmd.pid"

# Up when the node is idle (slurmd registered with slurmctld).
up=0
for ((i = 0; i < 300; i++)); do
  for name in slurmctld slurmd; do
    kill -0 "$(cat "$state/$name.pid")" 2>/dev/null ||
      skip "$name exited: $(tail -n 5 "$state/$name.out" "$state/$name.log" 2>/dev/null)"
  done
  if [[ "$(sinfo -h -n localhost -o %t 2>/dev/null)" == idle ]]; then up=1; break; fi
  sleep 0.1
done
((up)) || skip "node localhost not idle after 30 s: $(sinfo 2>&1 | tail -n 2); $(tail -n 5 "$state/slurmctld.log")"
echo "local_slurm.sh: single-node Slurm up in $(( ($(date +%s%N) - start_ns) / 1000000 )) ms ($cpus CPUs; state in $state)" >&2
echo "export SLURM_CONF=$SLURM_CONF"
