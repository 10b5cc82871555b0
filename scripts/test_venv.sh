#!/usr/bin/env bash
# Makes the Python environment the tests use to check what the project writes
# with the real readers (TensorBoard's event reader, prometheus_client's
# parser, PyYAML for the deploy manifests, ONNX's checker and ONNX Runtime
# for exported models): $BUILD_DIR/test-venv (default build/test-venv) with
# `tensorboard`, `prometheus_client`, `PyYAML`, `onnx` and `onnxruntime`
# from PyPI, the last two installed on their own (no wheel for this Python
# skips only the ONNX test). Quick when they are already there.
#
# usage: scripts/test_venv.sh
# Exits 1, with a message, when the venv cannot be made or PyPI cannot be
# reached; the tests that need it then report skipped with their own message.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${BUILD_DIR:-$root/build}/test-venv"
packages=(tensorboard prometheus_client PyYAML)
imports=tensorboard,prometheus_client,yaml
onnx_packages=(onnx onnxruntime)

if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import $imports,onnx,onnxruntime" \
  2>/dev/null; then
  exit 0
fi
if ! python3 -m venv "$venv"; then
  echo "test_venv.sh: cannot make a venv in $venv (Debian: apt-get install python3-venv);" \
    "the Python-based tests will skip" >&2
  exit 1
fi
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${packages[@]}"; then
  echo "test_venv.sh: cannot install ${packages[*]} from PyPI into $venv (offline?);" \
    "the Python-based tests will skip" >&2
  exit 1
fi
echo "test_venv.sh: $venv has ${packages[*]}" >&2
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${onnx_packages[@]}"; then
  echo "test_venv.sh: cannot install ${onnx_packages[*]} from PyPI into $venv;" \
    "onnx_runtime_test will skip" >&2
  exit 0
fi
echo "test_venv.sh: $venv has ${onnx_packages[*]}" >&2
