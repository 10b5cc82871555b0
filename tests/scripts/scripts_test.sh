#!/usr/bin/env bash
# What the scripts promise, without building or training anything (cmake is
# a fake on PATH that records its arguments; ctest runs a hand-written test
# file of its own):
#   1. run_local.sh without binaries builds only ps, worker and chief;
#   2. stress.sh --idle repeats the cluster tests with no hog, and says so;
#      a failing one is counted in every run;
#   3. test.sh refuses --repeat/--stress without a positive count before
#      it builds anything.
# Registered in ctest as scripts_test.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/pst-scripts-test.XXXXXX")"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
trap 'if ((failures == 0)); then rm -rf "$work"; else echo "files kept in $work" >&2; fi' EXIT

# 1. A fake cmake: records each call, builds nothing.
mkdir -p "$work/fakebin" "$work/mnist" "$work/build"
cat >"$work/fakebin/cmake" <<FAKE
#!/usr/bin/env bash
echo "\$*" >>"$work/cmake.calls"
FAKE
chmod +x "$work/fakebin/cmake"
touch "$work/mnist/train-images-idx3-ubyte.gz"
out="$(env -u PST_BIN_DIR PATH="$work/fakebin:$PATH" BUILD_DIR="$work/build" \
         MNIST_DIR="$work/mnist" bash "$root/scripts/run_local.sh" --num_ps=1 --num_workers=1 \
         --run_dir="$work/run" 2>&1)"
code=$?
[[ $code -eq 1 ]] || fail "run_local.sh without binaries: exit $code, expected 1: $out"
[[ "$out" == *"the build wrote no ps, worker and chief in $work/build/bin"* ]] ||
  fail "run_local.sh did not say the build wrote no binaries: $out"
build_call="$(grep -- '--build' "$work/cmake.calls" 2>/dev/null)"
[[ "$build_call" == "--build $work/build -j "*" --target ps worker chief" ]] ||
  fail "run_local.sh built '$build_call', expected only --target ps worker chief"

# 2. A ctest tree of two cluster tests, one failing, and a unit test.
cat >"$work/build/CTestTestfile.cmake" <<CTEST
add_test(passes "/bin/true")
set_tests_properties(passes PROPERTIES LABELS "cluster")
add_test(fails "/bin/false")
set_tests_properties(fails PROPERTIES LABELS "cluster")
add_test(unit "/bin/false")
CTEST
out="$(BUILD_DIR="$work/build" bash "$root/scripts/stress.sh" --idle 2 2>&1)"
code=$?
[[ $code -eq 1 ]] || fail "stress.sh --idle with a failing test: exit $code, expected 1: $out"
[[ "$out" == *"2 runs of the cluster tests, idle (no hog)"* ]] || fail "not idle: $out"
[[ "$out" != *"busy processes"* ]] || fail "stress.sh --idle started a hog: $out"
[[ "$out" == *"run 2/2: 2 tests, 1 failed fails"* ]] || fail "run 2 not reported: $out"
grep -Eq '^fails +2 of 2$' <<<"$out" || fail "the failing test's count: $out"
grep -q '^unit' <<<"$out" && fail "a test without the cluster label ran: $out"
out="$(BUILD_DIR="$work/build" bash "$root/scripts/stress.sh" --idle 1 passes 2>&1)"
code=$?
[[ $code -eq 0 && "$out" == *"0 failures"* ]] || fail "stress.sh --idle 1 passes: exit $code: $out"

# 3. No count, no build.
for arg in --repeat=0 --repeat= --stress=x; do
  out="$(PATH="$work/fakebin:$PATH" bash "$root/scripts/test.sh" "$arg" 2>&1)"
  code=$?
  [[ $code -eq 2 && "$out" == *"needs a positive number of runs"* ]] ||
    fail "test.sh $arg: exit $code: $out"
done

if ((failures > 0)); then
  echo "scripts_test: $failures failures" >&2
  exit 1
fi
echo "scripts_test: passed"
