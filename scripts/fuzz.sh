#!/usr/bin/env bash
# Fuzzes what a ps does with untrusted bytes. Builds the libFuzzer targets
# (clang, libFuzzer + ASan + UBSan) in build-fuzz and runs each on a copy of
# its seed corpus (fuzz/corpus/<name>/; the seeds are never modified):
#   fuzz_decode       messages: DecodeMessage, then PsService::Handle
#   fuzz_tensor_file  checkpoint parts: ReadTensorFile, then Restore
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET] [-- LIBFUZZER_FLAGS...]
#   SECONDS  total fuzzing time, default 600; with TARGET "all" (the
#            default) fuzz_decode gets 2/3 of it and fuzz_tensor_file 1/3
#   TARGET   all | decode | tensor_file
# environment:
#   FUZZ_BUILD_DIR  build folder (default: build-fuzz beside the sources)
#   FUZZ_WORK_DIR   where the growing corpora, logs and crash files go
#                   (default: a fresh folder under FUZZ_BUILD_DIR/fuzz/runs)
#   JOBS            parallel compile jobs (default: nproc)
# Prints the number of executions of each target. Exits 1 when a fuzzer
# finds a crash, a leak, undefined behaviour or a failed check (the input is
# saved as crash-*/leak-*/timeout-*/oom-* in the work folder; replay it with
# build-fuzz/bin/fuzz_<target> FILE), 2 on a usage error.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${JOBS:-$(nproc)}"

seconds=600
target=all
if [[ $# -gt 0 && "$1" != "--" ]]; then
  seconds="$1"
  shift
fi
if [[ $# -gt 0 && "$1" != "--" ]]; then
  target="$1"
  shift
fi
[[ $# -gt 0 && "$1" == "--" ]] && shift
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -eq 0 ]]; then
  echo "fuzz.sh: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi
case "$target" in
  all)
    names=(decode tensor_file)
    times=($((seconds - seconds / 3)) $((seconds / 3)))
    [[ ${times[1]} -gt 0 ]] || { names=(decode); times=("$seconds"); }
    ;;
  decode|tensor_file) names=("$target"); times=("$seconds") ;;
  *) echo "fuzz.sh: TARGET must be all, decode or tensor_file, got '$target'" >&2; exit 2 ;;
esac

# clang and its runtimes (libFuzzer, ASan, UBSan); idempotent like setup.sh.
packages=(clang libclang-rt-14-dev)
missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)"
  [[ "${status}" == "install ok installed" ]] || missing+=("${pkg}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
  [[ "$(id -u)" -eq 0 ]] || apt_get=(sudo "${apt_get[@]}")
  echo "fuzz.sh: installing ${missing[*]}"
  "${apt_get[@]}" update
  "${apt_get[@]}" install -y --no-install-recommends "${missing[@]}"
fi

cmake -S "$root" -B "$build" \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
  -DPST_SANITIZE=ON -DBUILD_FUZZERS=ON \
  -DWITH_CUDA=OFF -DBUILD_BENCHMARKS=OFF -DBUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "$jobs" --target "${names[@]/#/fuzz_}"

work="${FUZZ_WORK_DIR:-$build/fuzz/runs/$(date +%Y%m%d-%H%M%S)}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
failed=0
for i in "${!names[@]}"; do
  name="${names[$i]}"
  dir="$work/$name"
  mkdir -p "$dir/corpus"
  cp "$root/fuzz/corpus/$name"/* "$dir/corpus/"
  seeds="$(find "$dir/corpus" -type f | wc -l)"
  log="$dir/fuzz.log"
  echo "fuzz.sh: fuzz_$name for ${times[$i]} s from $seeds seeds in $dir"
  rc=0
  "$build/bin/fuzz_$name" -max_total_time="${times[$i]}" -print_final_stats=1 \
    -artifact_prefix="$dir/" "$@" "$dir/corpus" >"$log" 2>&1 || rc=$?

  grep -E '^#[0-9]+' "$log" | tail -n 2 || true
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  took="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)"
  echo "fuzz.sh: fuzz_$name: executions: ${runs:-unknown} in ${took:-?} s;" \
    "corpus $seeds -> $(find "$dir/corpus" -type f | wc -l) inputs; log $log"
  artifacts="$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | sort)"
  if [[ $rc -ne 0 || -n "$artifacts" ]]; then
    failed=1
    echo "fuzz.sh: fuzz_$name FAILED (exit code $rc). Report:" >&2
    grep -E -A40 '^==[0-9]+==ERROR|runtime error:|Check failed|^F[0-9]{4} ' "$log" \
      | head -n 80 >&2 || true
    [[ -n "$artifacts" ]] && echo "fuzz.sh: input(s): $artifacts" >&2
  fi
done
if [[ $failed -ne 0 ]]; then
  exit 1
fi
echo "fuzz.sh: no crash"
