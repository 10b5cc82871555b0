#!/usr/bin/env bash
# Checks that every C++ and CUDA source file of the checkout is formatted as
# the project's .clang-format says (Google style, 100 columns): runs
# clang-format --dry-run --Werror on each and lists the files that differ.
# Fix them with: clang-format -i FILE (or git clang-format for a change).
#
# usage: scripts/check_format.sh
# Exits 1 when a file differs, 2 when clang-format is missing (Debian:
# apt-get install clang-format; scripts/setup.sh installs it).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "check_format.sh: clang-format is missing (apt-get install clang-format)" >&2
  exit 2
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
else
  mapfile -t files < <(find . -path ./build -prune -o -path './build-*' -prune -o \
    \( -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print)
fi
unformatted=()
for file in "${files[@]}"; do
  clang-format --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if [[ ${#unformatted[@]} -gt 0 ]]; then
  echo "check_format.sh: ${#unformatted[@]} of ${#files[@]} files are not formatted" \
    "(clang-format -i FILE):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check_format.sh: all ${#files[@]} files formatted"
