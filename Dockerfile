# pstrain container image: the ps, worker and chief executables (CPU-only)
# and the shared libraries they need, nothing else. Used by both Kubernetes
# recipes in deploy/k8s/ (the manifest picks the role by `command`).
#
#   docker build -t pstrain:latest .
#   docker run --rm pstrain:latest chief --help
#
# Two stages: `build` installs the toolchain with the project's own
# scripts/setup.sh and builds with scripts/build.sh; the runtime stage
# (debian:12-slim) installs only deploy/docker/runtime-packages.txt, which
# tests/deploy/runtime_libs_test.py checks against `ldd` of the executables.
#
# PST_CPU_ARCH: -march of the build. The default, x86-64-v3 (AVX2 + FMA),
# makes the Eigen kernels 2-3x faster but needs a Haswell (2013) or newer CPU
# on every node that runs the image; pass --build-arg PST_CPU_ARCH= for the
# compiler's baseline x86-64.
#
# PST_GIT_COMMIT: the commit `--version` names. .dockerignore leaves .git
# out of the build context, so pass it in:
#   docker build --build-arg PST_GIT_COMMIT=$(git rev-parse --short=7 HEAD) -t pstrain:latest .
# (without it: "commit unknown").
#
# /dev/shm: tasks in one container move tensors through shared-memory
# rings, 32 MiB per (worker or chief, ps) pair: a layout of W workers and P
# ps in one container needs (W + 1) x P x 32 MiB, e.g. 192 MiB for 2 ps and
# 2 workers; Docker's default is 64 MB (docker run --shm-size=256m ...).
# With less, each link takes smaller rings from what is free, down to
# 1 MiB, and the rest goes over TCP (logged). One task per
# container (the Kubernetes recipes) takes none. docs/DEPLOYMENT.md.

FROM debian:12 AS build
ARG PST_CPU_ARCH=x86-64-v3
ARG PST_GIT_COMMIT=
WORKDIR /src
# setup.sh first, alone: its layer (the apt packages) is cached across
# source changes.
COPY scripts/setup.sh scripts/setup.sh
COPY scripts/lib/ scripts/lib/
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN scripts/build.sh -DWITH_CUDA=OFF -DBUILD_TESTS=OFF -DBUILD_BENCHMARKS=OFF \
      "-DPST_CPU_ARCH=${PST_CPU_ARCH}" "-DPST_GIT_COMMIT=${PST_GIT_COMMIT}" \
 && strip build/bin/ps build/bin/worker build/bin/chief \
 && build/bin/chief --version

FROM debian:12-slim AS runtime
COPY deploy/docker/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update \
 && sed -e 's/#.*//' /tmp/runtime-packages.txt | xargs \
      env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && useradd --uid 1000 --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin pstrain
COPY --from=build /src/build/bin/ps /src/build/bin/worker /src/build/bin/chief /usr/local/bin/
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
WORKDIR /tmp
# 2222: the port both Kubernetes recipes give every task.
EXPOSE 2222
# No ENTRYPOINT: the role is the command (`ps`, `worker` or `chief`, then its
# flags); TF_CONFIG or the cluster flags say where the others are.
CMD ["chief", "--help"]
