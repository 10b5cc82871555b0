#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages needed to build and test pstrain.
# Idempotent: when every package is already installed it does nothing, so a
# re-run is fast and needs no network. Uses sudo unless run as root.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"

readonly PACKAGES=(
  build-essential cmake pkg-config git clang-format
  libzmq3-dev cppzmq-dev libflatbuffers-dev flatbuffers-compiler
  libeigen3-dev libdnnl-dev libgflags-dev libgoogle-glog-dev libgtest-dev zlib1g-dev
  libmicrohttpd-dev nlohmann-json3-dev librocksdb-dev
  python3 python3-dev python3-matplotlib python3-venv
  curl ca-certificates iproute2 procps
  slurm-wlm munge
)

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "setup.sh: needs a Debian-based system (dpkg-query and apt-get)" >&2
  exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  # "install ok installed" only for a fully installed package (not one that
  # was removed but left its config files behind).
  status="$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)"
  if [[ "${status}" != "install ok installed" ]]; then
    missing+=("${pkg}")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup.sh: all ${#PACKAGES[@]} packages already installed; nothing to do"
  exit 0
fi

# env, not export: sudo resets the environment.
apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "setup.sh: not root and sudo is not installed; run as root" >&2
    exit 1
  fi
  apt_get=(sudo "${apt_get[@]}")
fi

echo "setup.sh: installing ${#missing[@]} missing package(s): ${missing[*]}"
"${apt_get[@]}" update
"${apt_get[@]}" install -y --no-install-recommends "${missing[@]}"
echo "setup.sh: done"
