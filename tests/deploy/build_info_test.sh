#!/usr/bin/env bash
# What --version names (cli/build_info.cmake), and how the image gets it:
#   1. sources that are no git checkout (the image's build: .dockerignore
#      leaves .git out) name GIVEN_COMMIT, or "unknown" without it;
#   2. a git checkout names its own commit, whatever was given;
#   3. the Dockerfile takes PST_GIT_COMMIT as a build argument and hands it
#      to the build.
# Registered in ctest as build_info_test (label deploy).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/pst-build-info-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
git_exe="$(command -v git || true)"

# build_info.h's commit for SOURCE_DIR=$1, GIVEN_COMMIT=$2.
commit_of() {
  rm -f "$work/build_info.h"
  cmake -DSOURCE_DIR="$1" -DOUTPUT="$work/build_info.h" -DGIT_EXECUTABLE="$git_exe" \
        "-DGIVEN_COMMIT=$2" -P "$root/cli/build_info.cmake" >/dev/null 2>&1
  sed -n 's/^#define PST_GIT_COMMIT "\(.*\)"$/\1/p' "$work/build_info.h"
}

mkdir -p "$work/plain"
got="$(commit_of "$work/plain" abc1234)"
[[ "$got" == abc1234 ]] || fail "no checkout, given abc1234: '$got'"
got="$(commit_of "$work/plain" "")"
[[ "$got" == unknown ]] || fail "no checkout, nothing given: '$got'"

if [[ -n "$git_exe" ]]; then
  mkdir -p "$work/repo"
  git -C "$work/repo" init -q &&
    git -C "$work/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
  head="$(git -C "$work/repo" rev-parse --short=7 HEAD)"
  got="$(commit_of "$work/repo" abc1234)"
  [[ "$got" == "$head" ]] || fail "a checkout at $head, given abc1234: '$got'"
fi

grep -q '^ARG PST_GIT_COMMIT' "$root/Dockerfile" || fail "the Dockerfile has no ARG PST_GIT_COMMIT"
grep -q -- '-DPST_GIT_COMMIT=${PST_GIT_COMMIT}' "$root/Dockerfile" ||
  fail "the Dockerfile does not pass PST_GIT_COMMIT to the build"
grep -q '^\.git/$' "$root/.dockerignore" || fail ".dockerignore keeps .git (then this test is moot)"

if ((failures > 0)); then
  echo "build_info_test: $failures failures" >&2
  exit 1
fi
echo "build_info_test: passed"
