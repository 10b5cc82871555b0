#!/usr/bin/env bash
# Builds the project with AddressSanitizer + UndefinedBehaviorSanitizer
# (-DPST_SANITIZE=ON, CPU only, no benchmarks) in build-asan and runs the
# whole test suite there: the cluster tests start the sanitized ps, worker
# and chief executables, so a finding in any process fails its test. Leaks
# are checked (LeakSanitizer) and the first UB report stops the process.
#
# usage: scripts/sanitize.sh [--fuzz SECONDS]
#   --fuzz SECONDS  also build the libFuzzer targets (fuzz/) and run each
#                   for SECONDS as a test of the suite (fuzz_*_smoke); this
#                   builds with clang, installing clang and its runtimes.
#                   scripts/fuzz.sh is for long runs.
# environment:
#   ASAN_BUILD_DIR  build folder (default: build-asan beside the sources)
#   CXX             compiler (default: the system c++, i.e. gcc, or clang++
#                   with --fuzz; a clang++ installs clang and its runtimes)
#   JOBS            parallel compile jobs (default: nproc)
#   CTEST_JOBS      parallel tests (default: nproc)
#   CTEST_ARGS      extra ctest arguments, e.g. "-R message_test"
#   MNIST_DIR       unlike scripts/test.sh, not looked for beside the
#                   checkout: without it the full-MNIST training tests skip.
#                   Under ASan they are 10-20x slower (mnist_e2e_test needs
#                   well over its 600 s timeout on 2 cores).
# Prints the time of each phase. Exits non-zero when a test fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ASAN_BUILD_DIR:-$root/build-asan}"
jobs="${JOBS:-$(nproc)}"
ctest_jobs="${CTEST_JOBS:-$(nproc)}"

fuzz_seconds=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --fuzz)
      [[ $# -ge 2 ]] || { echo "sanitize.sh: --fuzz needs SECONDS" >&2; exit 2; }
      fuzz_seconds="$2"
      shift 2
      ;;
    *) echo "sanitize.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# Installs missing Debian packages; idempotent like scripts/setup.sh.
install_packages() {
  local missing=() pkg status
  for pkg in "$@"; do
    status="$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)"
    [[ "${status}" == "install ok installed" ]] || missing+=("${pkg}")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  local apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
  [[ "$(id -u)" -eq 0 ]] || apt_get=(sudo "${apt_get[@]}")
  echo "sanitize.sh: installing ${missing[*]}"
  "${apt_get[@]}" update
  "${apt_get[@]}" install -y --no-install-recommends "${missing[@]}"
}

if [[ ! "$fuzz_seconds" =~ ^[0-9]+$ ]]; then
  echo "sanitize.sh: --fuzz needs a whole number of seconds, got '$fuzz_seconds'" >&2
  exit 2
fi
fuzzers=OFF
if [[ "$fuzz_seconds" -gt 0 ]]; then
  fuzzers=ON
  export CXX="${CXX:-clang++}"
fi

# gcc's ASan/UBSan runtimes (libasan, libubsan) come with build-essential;
# clang's are in libclang-rt-14-dev.
if [[ "${CXX:-}" == *clang* ]]; then
  install_packages clang libclang-rt-14-dev
fi

# The options apply to every sanitized process, children included. Options
# already in the environment come after ours and so take precedence.
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
t0="$(now)"

# RelWithDebInfo at -O1: file:line in every report, tests still fast enough.
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="${CXX:-c++}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
  -DPST_SANITIZE=ON -DWITH_CUDA=OFF -DBUILD_BENCHMARKS=OFF -DBUILD_TESTS=ON \
  -DBUILD_FUZZERS="$fuzzers" -DPST_FUZZ_SECONDS="$fuzz_seconds"
cmake --build "$build" -j "$jobs"
t1="$(now)"
echo "sanitize.sh: configure + build took $(elapsed "$t0" "$t1") s (-j $jobs)"

echo "sanitize.sh: ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
echo "sanitize.sh: MNIST_DIR=${MNIST_DIR:-<unset: the full-MNIST tests skip>}"
BUILD_DIR="$build" "$root/scripts/test_venv.sh" ||
  echo "sanitize.sh: no test venv: the Python-based tests will skip" >&2
test_rc=0
# shellcheck disable=SC2086  # CTEST_ARGS is a list of arguments
ctest --test-dir "$build" --output-on-failure -j "$ctest_jobs" ${CTEST_ARGS:-} || test_rc=$?
t2="$(now)"
echo "sanitize.sh: ctest took $(elapsed "$t1" "$t2") s (-j $ctest_jobs), exit code $test_rc"

echo "sanitize.sh: total $(elapsed "$t0" "$(now)") s"
if [[ $test_rc -ne 0 ]]; then
  echo "sanitize.sh: FAILED (ctest exit code $test_rc)" >&2
  exit 1
fi
echo "sanitize.sh: all tests passed under ASan + UBSan"
