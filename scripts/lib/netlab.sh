# Hosts on a network of a set speed, on one machine, for run_local.sh
# --link_gbit: one Linux network namespace per host, each joined by a veth
# pair to a bridge in a "switch" namespace, and every link shaped to the
# same rate in both directions (tc's token bucket), as machines on one
# switch. Needs root (ip netns) and iproute2. Sourced:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/netlab.sh"
#
# netlab_create COUNT GBIT: makes hosts 0 .. COUNT-1; NETLAB_ADDRESS[i] is
#   host i's address (10.78.0.<i+1>), NETLAB_EXEC[i] the command prefix that
#   runs a program there ("ip netns exec NS", which execs it: the PID stays
#   the program's). Returns 1, saying why, when it cannot.
# netlab_delete: deletes every namespace netlab_create made (their links go
#   with them). Safe to call twice.
NETLAB_ADDRESS=()
NETLAB_EXEC=()
NETLAB_NAMESPACES=()

netlab_create() {
  local count="$1" gbit="$2" tag="pl$$" i host switch_port
  if ((EUID != 0)) || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    echo "netlab: --link_gbit needs root and iproute2 (ip, tc)" >&2
    return 1
  fi
  local switch="${tag}sw"
  # tbf's bucket must hold at least one timer tick of traffic at the rate.
  local shape=(root tbf rate "${gbit}gbit" burst 4mb latency 20ms)
  ip netns add "$switch" || return 1
  NETLAB_NAMESPACES+=("$switch")
  ip -n "$switch" link add br0 type bridge && ip -n "$switch" link set br0 up || return 1
  for ((i = 0; i < count; i++)); do
    host="${tag}h$i" switch_port="${tag}s$i"
    ip netns add "$host" || return 1
    NETLAB_NAMESPACES+=("$host")
    ip link add "$host" type veth peer name "$switch_port" &&
      ip link set "$host" netns "$host" && ip link set "$switch_port" netns "$switch" &&
      ip -n "$switch" link set "$switch_port" master br0 &&
      ip -n "$switch" link set "$switch_port" up &&
      ip -n "$host" addr add "10.78.0.$((i + 1))/24" dev "$host" &&
      ip -n "$host" link set "$host" up && ip -n "$host" link set lo up &&
      tc -n "$host" qdisc add dev "$host" "${shape[@]}" &&
      tc -n "$switch" qdisc add dev "$switch_port" "${shape[@]}" || return 1
    NETLAB_ADDRESS+=("10.78.0.$((i + 1))")
    NETLAB_EXEC+=("ip netns exec $host")
  done
}

netlab_delete() {
  local ns
  for ns in "${NETLAB_NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
  NETLAB_NAMESPACES=()
}
