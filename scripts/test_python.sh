#!/usr/bin/env bash
# Builds and tests the Python package: makes a fresh venv ($BUILD_DIR/py-venv,
# BUILD_DIR defaulting to build), runs `pip install .` from the repository
# root into it (timed: a first build compiles the C++, a later one only what
# changed, in $BUILD_DIR/python/), installs pytest (and PyYAML, to read the
# Kubernetes manifest) and runs python/tests.
#
# usage: [BUILD_DIR=DIR] [MNIST_DIR=DIR] scripts/test_python.sh [PYTEST ARGS...]
# Exits 0 with a message saying it skipped when PyPI (the build requirements
# scikit-build-core and pybind11) cannot be reached or no venv can be made;
# otherwise pytest's status (1 when the install fails).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="$(mkdir -p "${BUILD_DIR:-$root/build}" && cd "${BUILD_DIR:-$root/build}" && pwd)"
venv="$build_dir/py-venv"
pip_flags=(--quiet --disable-pip-version-check)
# The C++ build on every core (scikit-build-core's generator may not default to it).
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

if ! python3 -m venv --clear "$venv"; then
  echo "test_python.sh: SKIPPED: cannot make a venv in $venv (Debian: apt-get install python3-venv)" >&2
  exit 0
fi
# Reachable when pip can fetch the build requirements (a build error later is a failure).
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
if ! "$venv/bin/python" -m pip download "${pip_flags[@]}" --no-deps -d "$probe" \
  "scikit-build-core>=0.10" "pybind11>=2.10" >/dev/null 2>&1; then
  echo "test_python.sh: SKIPPED: PyPI cannot be reached (no scikit-build-core, pybind11)" >&2
  exit 0
fi

echo "test_python.sh: pip install . into $venv (C++ build in $build_dir/python)" >&2
start=$EPOCHREALTIME
if ! (cd "$root" && "$venv/bin/python" -m pip install "${pip_flags[@]}" \
  -C build-dir="$build_dir/python/{wheel_tag}" .); then
  echo "test_python.sh: pip install . failed" >&2
  exit 1
fi
echo "test_python.sh: pip install . took $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s" >&2
if ! "$venv/bin/python" -m pip install "${pip_flags[@]}" pytest PyYAML; then
  echo "test_python.sh: cannot install pytest and PyYAML" >&2
  exit 1
fi
cd "$root" && "$venv/bin/python" -m pytest python/tests "$@"
