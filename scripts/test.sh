#!/usr/bin/env bash
# Builds the project and runs the whole test suite, in three stages:
#   1. the formatting of every C++ file (scripts/check_format.sh), the
#      include layering (scripts/check_includes.py), the rules that tend
#      to regrow (scripts/check_rules.py: one clock, ZeroMQ in transport/
#      only) and the length of library functions
#      (scripts/check_function_length.py: 80 lines at most), then
#      build/ (Release): every test, with ctest;
#   2. the Python package (scripts/test_python.sh): `pip install .` into a
#      fresh venv (its own CMake build in build/python/), then pytest
#      python/tests;
#   3. build-asan/ (clang, ASan + UBSan, scripts/sanitize.sh --fuzz): every
#      test again under the sanitizers but experiments_test, sweep_test,
#      sparse_test and click_models_test (the experiment scripts and the
#      click-model runs to a
#      target AUC drive the same executables the other cluster tests run
#      there, and took minutes of the stage; the sparse code's unit and
#      in-process tests do run), plus a 30 s run of each libFuzzer
#      target (fuzz_*_smoke). Installs clang on first use.
#
# usage: scripts/test.sh [--quick | --stress=N | --repeat=N]
#   --quick     stage 1 only
#   --stress=N  stage 1's build, then its cluster tests N times under a CPU
#               hog of one busy process per core, with each test's failures
#               (scripts/stress.sh)
#   --repeat=N  the same without the hog: the cluster tests N times on the
#               machine as it is (scripts/stress.sh --idle); a test that
#               assumes a slow machine fails here when the machine is fast
# MNIST_DIR (or ../shared/data/mnist beside the checkout, when present)
# enables the tests that need the full MNIST set in stage 1; without it they
# report skipped. Stage 3 always runs them as skipped: under ASan they are
# 10-20x slower. The tests that read what the project writes with real
# Python readers (TensorBoard, prometheus_client) use the venv that
# scripts/test_venv.sh makes; without PyPI they report skipped.
# Exits non-zero when a stage fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

quick=0
stress_runs=""
stress_args=()
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  --stress=*) stress_runs="${1#--stress=}" ;;
  --repeat=*) stress_runs="${1#--repeat=}" stress_args=(--idle) ;;
  *) echo "test.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
if [[ -n "${1:-}" && "$1" != --quick && ! "$stress_runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "test.sh: ${1%%=*} needs a positive number of runs, got '${stress_runs}'" >&2
  exit 2
fi

if [[ -z "${MNIST_DIR:-}" && -d "$root/../shared/data/mnist" ]]; then
  export MNIST_DIR="$root/../shared/data/mnist"
fi
echo "test.sh: stage 1: Release build, MNIST_DIR=${MNIST_DIR:-<unset: full-MNIST tests will skip>}"
"$root/scripts/check_format.sh"
"$root/scripts/check_includes.py"
"$root/scripts/check_rules.py"
"$root/scripts/check_function_length.py"
"$root/scripts/build.sh"
"$root/scripts/test_venv.sh" || echo "test.sh: no test venv: the Python-based tests will skip" >&2
[[ -n "$stress_runs" ]] && exec "$root/scripts/stress.sh" "${stress_args[@]}" "$stress_runs"
ctest --test-dir "${BUILD_DIR:-$root/build}" --output-on-failure -j "$(nproc)"

[[ $quick -eq 1 ]] && exit 0
echo "test.sh: stage 2: the Python package"
"$root/scripts/test_python.sh"
echo "test.sh: stage 3: ASan + UBSan build (clang) with 30 s of each fuzz target"
env -u MNIST_DIR CTEST_ARGS="-E ^(experiments|sweep|sparse|click_models)_test$" "$root/scripts/sanitize.sh" --fuzz 30
