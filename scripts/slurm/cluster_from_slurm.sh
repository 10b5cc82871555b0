#!/usr/bin/env bash
# Derives a pstrain cluster from a Slurm allocation, in one place: the nodes
# (`scontrol show hostnames "$SLURM_JOB_NODELIST"`), how many ps and workers
# go on each, and ports derived from SLURM_JOB_ID (so two jobs sharing a node
# do not collide). Writes
#   RUN_DIR/cluster.flags  --chief_host, --ps_hosts, --worker_hosts (then any
#                          EXTRA flags): every task reads it with --flagfile
#   RUN_DIR/tasks          one task a line: NAME NODE BINARY TASK_INDEX
#                          (chief first, then the ps tasks, then the workers)
#
#   scripts/slurm/cluster_from_slurm.sh --run_dir=DIR [--ps_per_node=1]
#       [--workers_per_node=2] [--num_ps=P] [--num_workers=W]
#       [--chief_node=NODE] [--port_base=10000] [--resolve=ip|name] [EXTRA FLAGS...]
#
# --num_ps / --num_workers (totals) place tasks round-robin over the nodes
# instead of per node. The chief goes on the first node (or --chief_node).
# Ports: on each node its tasks take consecutive ports from
# PORT_BASE + (SLURM_JOB_ID mod 550) * 40 (at most 40 tasks per node; ports
# 10000-31999 stay below Linux's ephemeral range). --resolve=ip (default)
# writes each node's IPv4 address (`getent ahostsv4`); name keeps host names.
# Reads SLURM_JOB_ID and SLURM_JOB_NODELIST (SLURM_NODELIST too), so it runs
# inside an allocation (sbatch, salloc).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/usage.sh" "$@"

die() { echo "cluster_from_slurm.sh: $*" >&2; exit 2; }
run_dir="" ps_per_node=1 workers_per_node=2 num_ps="" num_workers="" chief_node=""
port_base=10000 resolve=ip extra=()
for arg in "$@"; do
  case "$arg" in
    --run_dir=*) run_dir="${arg#*=}" ;;
    --ps_per_node=*) ps_per_node="${arg#*=}" ;;
    --workers_per_node=*) workers_per_node="${arg#*=}" ;;
    --num_ps=*) num_ps="${arg#*=}" ;;
    --num_workers=*) num_workers="${arg#*=}" ;;
    --chief_node=*) chief_node="${arg#*=}" ;;
    --port_base=*) port_base="${arg#*=}" ;;
    --resolve=*) resolve="${arg#*=}" ;;
    *) extra+=("$arg") ;;
  esac
done
[[ -n "$run_dir" ]] || die "--run_dir is required"
for n in "$ps_per_node" "$workers_per_node" "$port_base" ${num_ps:+"$num_ps"} ${num_workers:+"$num_workers"}; do
  [[ "$n" =~ ^[0-9]+$ ]] || die "'$n' is not a number"
done
[[ "$resolve" == ip || "$resolve" == name ]] || die "--resolve must be ip or name"
job_id="${SLURM_JOB_ID:-}"
nodelist="${SLURM_JOB_NODELIST:-${SLURM_NODELIST:-}}"
[[ -n "$job_id" && -n "$nodelist" ]] || die "SLURM_JOB_ID and SLURM_JOB_NODELIST are unset: run inside a Slurm allocation"

mapfile -t nodes < <(scontrol show hostnames "$nodelist")
((${#nodes[@]} > 0)) || die "no nodes in '$nodelist'"
n=${#nodes[@]}
[[ -n "$chief_node" ]] || chief_node="${nodes[0]}"

ps_nodes=() worker_nodes=()
if [[ -n "$num_ps" ]]; then
  for ((k = 0; k < num_ps; k++)); do ps_nodes+=("${nodes[k % n]}"); done
else
  for node in "${nodes[@]}"; do for ((k = 0; k < ps_per_node; k++)); do ps_nodes+=("$node"); done; done
fi
if [[ -n "$num_workers" ]]; then
  for ((k = 0; k < num_workers; k++)); do worker_nodes+=("${nodes[k % n]}"); done
else
  for node in "${nodes[@]}"; do for ((k = 0; k < workers_per_node; k++)); do worker_nodes+=("$node"); done; done
fi
((${#ps_nodes[@]} > 0)) || die "no ps task (--ps_per_node or --num_ps)"
((${#worker_nodes[@]} > 0)) || die "no worker (--workers_per_node or --num_workers)"

declare -A address next_port
first_port=$((port_base + (job_id % 550) * 40))
host_of() {  # host_of NODE: the address other nodes reach it at
  if [[ -z "${address[$1]:-}" ]]; then
    if [[ "$resolve" == ip ]]; then
      address[$1]="$(getent ahostsv4 "$1" | awk 'NR == 1 { print $1 }')"
      [[ -n "${address[$1]}" ]] || die "cannot resolve node '$1' to an IPv4 address (--resolve=name keeps names)"
    else
      address[$1]="$1"
    fi
  fi
}
endpoint() {  # endpoint NODE -> sets ep to ADDRESS:PORT, the node's next port
  host_of "$1"
  local port=$((first_port + ${next_port[$1]:-0}))
  next_port[$1]=$((${next_port[$1]:-0} + 1))
  ((next_port[$1] <= 40)) || die "more than 40 tasks on node $1"
  ep="${address[$1]}:$port"
}

mkdir -p "$run_dir" || die "cannot create $run_dir"
tasks="chief $chief_node chief 0"$'\n'
endpoint "$chief_node"
chief_host="$ep"
ps_hosts=""
for k in "${!ps_nodes[@]}"; do
  endpoint "${ps_nodes[k]}"
  ps_hosts+="${ps_hosts:+,}$ep"
  tasks+="ps-$k ${ps_nodes[k]} ps $k"$'\n'
done
worker_hosts=""
for k in "${!worker_nodes[@]}"; do
  endpoint "${worker_nodes[k]}"
  worker_hosts+="${worker_hosts:+,}$ep"
  tasks+="worker-$k ${worker_nodes[k]} worker $k"$'\n'
done
{
  echo "--chief_host=$chief_host"
  echo "--ps_hosts=$ps_hosts"
  echo "--worker_hosts=$worker_hosts"
  ((${#extra[@]})) && printf '%s\n' "${extra[@]}"
} >"$run_dir/cluster.flags.tmp" && mv -f "$run_dir/cluster.flags.tmp" "$run_dir/cluster.flags"
printf '%s' "$tasks" >"$run_dir/tasks"
echo "cluster_from_slurm.sh: job $job_id on ${nodes[*]}: chief $chief_host, ps $ps_hosts, workers $worker_hosts" >&2
