#!/usr/bin/env bash
# Configures and builds the project into build/ (or $BUILD_DIR; Release).
# Extra arguments go to cmake's configure step, e.g. scripts/build.sh
# -DWITH_CUDA=OFF; those after --target name the only targets to build
# (scripts/run_local.sh: --target ps worker chief), else everything is.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
configure=()
targets=()
while [[ $# -gt 0 ]]; do
  if [[ "$1" == --target ]]; then
    shift
    targets=("$@")
    break
  fi
  configure+=("$1")
  shift
done
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "${configure[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" ${targets[@]+--target "${targets[@]}"}
