#!/usr/bin/env bash
# Runs the cluster tests (ctest label "cluster": real ps, worker and chief
# processes) N times while a CPU hog keeps one busy process per core, and
# reports each test's failures. A test that passes on an idle machine but
# fails under load is a failing test; this is how to find it. With --idle,
# the same N runs without the hog: a test that assumes a slow machine (the
# job's steps outrunning the chief's looks) fails only when it is fast.
#
# usage: scripts/stress.sh [--idle] N [CTEST_REGEX]
#   --idle       no hog: repeat the runs on the machine as it is
#   N            how many runs of the whole set (>= 1)
#   CTEST_REGEX  only the cluster tests whose name matches (ctest -R)
# Uses the Release build in ${BUILD_DIR:-build/} as it is (scripts/test.sh
# --stress=N builds it first). Prints one line per run and a table of
# failures per test; a failed run's output stays in
# ${BUILD_DIR}/stress/run-K.log. Exits 1 when any test failed in any run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

idle=0
if [[ "${1:-}" == --idle ]]; then
  idle=1
  shift
fi
runs="${1:-}"
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "stress.sh: expected the number of runs (a positive integer), got '${runs}' (see --help)" >&2
  exit 2
fi
filter=()
[[ -n "${2:-}" ]] && filter=(-R "$2")

hog_pids=()
stop_hog() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hog_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  hog_pids=()
}
trap stop_hog EXIT
if [[ $idle -eq 1 ]]; then
  echo "stress.sh: $runs runs of the cluster tests, idle (no hog)"
else
  for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    hog_pids+=("$!")
  done
  echo "stress.sh: $runs runs of the cluster tests beside $(nproc) busy processes (pids ${hog_pids[*]})"
fi

mkdir -p "$build/stress"
declare -A failures=()
tests_run=0
started=$SECONDS
for run in $(seq "$runs"); do
  log="$build/stress/run-$run.log"
  run_started=$SECONDS
  if ctest --test-dir "$build" -L cluster "${filter[@]}" --output-on-failure -j "$(nproc)" \
      >"$log" 2>&1; then
    rm -f "$log"
    failed=()
  else
    mapfile -t failed < <(sed -n 's/^[0-9]*:\([A-Za-z0-9_]*\)$/\1/p' \
                            "$build/Testing/Temporary/LastTestsFailed.log" 2>/dev/null)
    [[ ${#failed[@]} -eq 0 ]] && failed=("<ctest itself: see $log>")
  fi
  count=$(ctest --test-dir "$build" -L cluster "${filter[@]}" -N | sed -n 's/^Total Tests: //p')
  tests_run=$((tests_run + count))
  for name in "${failed[@]}"; do failures[$name]=$((${failures[$name]:-0} + 1)); done
  echo "stress.sh: run $run/$runs: $count tests, ${#failed[@]} failed ${failed[*]:-}" \
       "($((SECONDS - run_started)) s)"
done
stop_hog

conditions="under the hog"
[[ $idle -eq 1 ]] && conditions="idle"
echo "stress.sh: $runs runs, $tests_run test runs in $((SECONDS - started)) s $conditions"
if [[ ${#failures[@]} -eq 0 ]]; then
  echo "stress.sh: 0 failures"
  exit 0
fi
printf '%-40s %s\n' "test" "failed runs"
for name in "${!failures[@]}"; do printf '%-40s %d of %d\n' "$name" "${failures[$name]}" "$runs"; done
exit 1
