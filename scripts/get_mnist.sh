#!/usr/bin/env bash
# Fetches the four MNIST files (gzip-compressed IDX) into DIR and checks their
# SHA-256 sums. Files already in DIR with the right sum are kept; a file with
# the wrong sum is fetched again. Mirrors are tried in order.
#
# Usage: scripts/get_mnist.sh DIR
# Exits non-zero when a file cannot be fetched with the right sum from any mirror.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"

readonly MIRRORS=(
  "https://ossci-datasets.s3.amazonaws.com/mnist/"
  "https://storage.googleapis.com/cvdf-datasets/mnist/"
)

# name sha256, from the original files.
readonly FILES=(
  "train-images-idx3-ubyte.gz 440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"
  "train-labels-idx1-ubyte.gz 3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"
  "t10k-images-idx3-ubyte.gz 8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"
  "t10k-labels-idx1-ubyte.gz f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"
)

die() {
  echo "get_mnist.sh: error: $*" >&2
  exit 1
}

sha256_of() {
  if command -v sha256sum > /dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum > /dev/null; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    die "neither sha256sum nor shasum is installed"
  fi
}

# download URL FILE: returns non-zero on any failure.
download() {
  if command -v curl > /dev/null; then
    curl --fail --silent --show-error --location --connect-timeout 20 \
      --retry 2 --output "$2" "$1"
  elif command -v wget > /dev/null; then
    wget --quiet --timeout=20 --tries=3 --output-document="$2" "$1"
  else
    die "neither curl nor wget is installed"
  fi
}

[[ $# -eq 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
readonly DIR="$1"
mkdir -p "${DIR}"

for entry in "${FILES[@]}"; do
  read -r name want <<< "${entry}"
  path="${DIR}/${name}"
  if [[ -f "${path}" ]]; then
    have="$(sha256_of "${path}")"
    if [[ "${have}" == "${want}" ]]; then
      echo "${name}: present, checksum ok"
      continue
    fi
    echo "${name}: present but its checksum is ${have}, expected ${want}; fetching it again"
  fi
  # Download beside the target and rename only once the sum matches, so an
  # interrupted or corrupt download never leaves a wrong file under the name.
  partial="${path}.partial"
  fetched=0
  for mirror in "${MIRRORS[@]}"; do
    echo "${name}: fetching ${mirror}${name}"
    if ! download "${mirror}${name}" "${partial}"; then
      echo "${name}: download from ${mirror} failed" >&2
      continue
    fi
    have="$(sha256_of "${partial}")"
    if [[ "${have}" != "${want}" ]]; then
      echo "${name}: checksum mismatch from ${mirror}: got ${have}, expected ${want}" >&2
      continue
    fi
    mv -f "${partial}" "${path}"
    fetched=1
    break
  done
  rm -f "${partial}"
  [[ "${fetched}" -eq 1 ]] \
    || die "could not fetch ${name} with SHA-256 ${want} from any mirror (${MIRRORS[*]})"
  echo "${name}: fetched, checksum ok"
done
echo "MNIST is in ${DIR}"
