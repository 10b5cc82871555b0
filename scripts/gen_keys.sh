#!/usr/bin/env bash
# Makes the cluster's CURVE key pair: scripts/gen_keys.sh DIR writes
# DIR/cluster.key (mode 0600). Copy DIR to every host and start every task
# with --curve_keys_dir=DIR: sockets are then encrypted and peers without
# the key are refused.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${PST_BIN_DIR:-$root/build/bin}"
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/gen_keys.sh DIR" >&2
  exit 2
fi
[[ -x "$bin/pst_keygen" ]] || "$root/scripts/build.sh"
"$bin/pst_keygen" "$1"
