#!/usr/bin/env bash
# Builds the project and runs the whole test suite with ctest.
# MNIST_DIR (or ../shared/data/mnist beside the checkout, when present) enables
# the tests that need the full MNIST set; without it they report skipped.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${MNIST_DIR:-}" && -d "$root/../shared/data/mnist" ]]; then
  export MNIST_DIR="$root/../shared/data/mnist"
fi
echo "test.sh: MNIST_DIR=${MNIST_DIR:-<unset: full-MNIST tests will skip>}"
"$root/scripts/build.sh"
ctest --test-dir "${BUILD_DIR:-$root/build}" --output-on-failure -j "$(nproc)"
