#!/usr/bin/env bash
# Configures and builds the project into build/ (Release). Extra arguments
# go to cmake's configure step, e.g. scripts/build.sh -DWITH_CUDA=OFF.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
