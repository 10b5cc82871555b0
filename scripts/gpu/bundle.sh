#!/usr/bin/env bash
# Packs what the GPU checklist (scripts/gpu/checklist.sh) needs on a GPU
# machine that has CUDA, cuDNN and Python but none of the Debian libraries:
# the binaries of build/ (built here with nvcc, WITH_CUDA=ON), the shared
# libraries they load that are neither glibc's nor CUDA's (ldd), and MNIST.
# CUDA's own libraries (cudart, cuBLAS, cuDNN) are the GPU machine's.
#
#   scripts/gpu/bundle.sh [OUT_DIR]   (default .gpu; writes OUT_DIR/bundle.tar.xz)
#
# MNIST comes from MNIST_DIR (default ../shared/data/mnist).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$root/.gpu}"
mnist="${MNIST_DIR:-$root/../shared/data/mnist}"
binaries=(bin/ps bin/worker bin/chief bin/predict bin/bench_kernels tests/gpu_kernels_test)

grep -q '^WITH_CUDA:BOOL=ON' "$root/build/CMakeCache.txt" ||
  { echo "bundle.sh: build/ is not a WITH_CUDA=ON build (nvcc missing?)" >&2; exit 1; }
cmake --build "$root/build" -j"$(nproc)" --target ps worker chief predict bench_kernels gpu_kernels_test

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/mnist"
for b in "${binaries[@]}"; do cp "$root/build/$b" "$stage/bin/"; done
# Every library the binaries load, less glibc's (the GPU machine's is newer),
# libstdc++/libgcc (likewise), zlib and xz (every Ubuntu has them) and CUDA's
# (the GPU machine's match its driver).
for b in "$stage"/bin/*; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' |
  grep -Ev '/lib(cudart|cublas|cublasLt|cudnn[^/]*|z|lzma)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp "$mnist"/*.gz "$stage/mnist/"
mkdir -p "$out"
tar -C "$stage" -cJf "$out/bundle.tar.xz" bin lib mnist
echo "bundle.sh: $out/bundle.tar.xz ($(du -h "$out/bundle.tar.xz" | cut -f1)): $(ls "$stage/bin" | xargs), $(ls "$stage/lib" | wc -l) libraries, MNIST"
