#!/usr/bin/env python3
"""Checks that the container image's runtime stage can run ps, worker and chief.

No container engine runs on the build machines, so instead of building the
image this test checks the runtime stage's package list
(deploy/docker/runtime-packages.txt, the one list the Dockerfile installs)
against what the dynamic loader needs for the executables built here. Run
on Debian 12, the image's release, so the packages and sonames are the same:

  1. every library an executable names directly (DT_NEEDED, `objdump -p`)
     belongs to a package the list names itself, or to libc6 (the C library,
     libm, ld-linux: the base image's);
  2. every library `ldd` resolves (the whole tree: libzmq's libsodium,
     libgssapi-krb5, ...) belongs to the list, to a package apt installs with
     it (the Depends / Pre-Depends closure, read from dpkg on this machine), or
     to libc6; and none is "not found".

The image is built with -DWITH_CUDA=OFF. A local build with the CUDA back end
links libcudart, libcublas, libcublasLt and libcudnn from the CUDA toolkit
(not Debian packages, not in the image): those are left out, and said so.

After the check passes it runs it again on lists with one package removed
(libzmq5, libgoogle-glog0v6) and fails unless each of those is reported:
the test proves it can fail.

Usage: runtime_libs_test.py [--bin_dir DIR] [--packages FILE]
Exit 0: satisfied; 1: a library is not covered (each one named); 77: skipped
(not a dpkg system, or the executables are not built).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXECUTABLES = ("ps", "worker", "chief")
# The base image's: debian:12-slim always holds the C library.
BASE_PACKAGES = {"libc6"}
# Only in a build with the CUDA back end; the image's build has -DWITH_CUDA=OFF.
CUDA_LIBS = re.compile(r"^lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nvrtc|nvJitLink)\.so")
SKIP = 77


def read_packages(path):
    """The package names of a runtime-packages.txt ('#' starts a comment)."""
    packages = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            packages.extend(line.split("#", 1)[0].split())
    return packages


def run(cmd):
    return subprocess.run(cmd, check=False, capture_output=True, text=True)


def needed(binary):
    """The sonames a binary names directly (DT_NEEDED)."""
    out = run(["objdump", "-p", binary])
    if out.returncode != 0:
        sys.exit(f"objdump -p {binary} failed: {out.stderr.strip()}")
    return re.findall(r"^\s*NEEDED\s+(\S+)", out.stdout, re.M)


def ldd(binary):
    """{soname: resolved path or None (not found)} for the whole tree."""
    out = run(["ldd", binary])
    if out.returncode != 0:
        sys.exit(f"ldd {binary} failed: {out.stderr.strip()}")
    libs = {}
    for line in out.stdout.splitlines():
        line = line.strip()
        m = re.match(r"^(\S+) => not found", line)
        if m:
            libs[m.group(1)] = None
            continue
        m = re.match(r"^(\S+) => (\S+) \(", line)
        if m:
            libs[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^(/\S+) \(", line)  # the loader: /lib64/ld-linux-x86-64.so.2
        if m:
            libs[os.path.basename(m.group(1))] = m.group(1)
    libs.pop("linux-vdso.so.1", None)  # the kernel's, no file
    return libs


_owner_cache = {}


def owner(path):
    """The Debian package that holds path, or None (dpkg -S; tries the path,
    its target, and each with /usr added or taken off: /lib is /usr/lib)."""
    if path in _owner_cache:
        return _owner_cache[path]
    candidates = []
    for p in (path, os.path.realpath(path)):
        candidates.append(p)
        candidates.append(p[len("/usr"):] if p.startswith("/usr/") else "/usr" + p)
    result = None
    for p in candidates:
        out = run(["dpkg", "-S", p])
        if out.returncode == 0:
            # "libzmq5:amd64: /usr/lib/x86_64-linux-gnu/libzmq.so.5"
            result = out.stdout.splitlines()[0].split(":")[0].split(",")[0].strip()
            break
    _owner_cache[path] = result
    return result


_depends_cache = {}


def installed(pkg):
    out = run(["dpkg-query", "-W", "-f=${Status}", pkg])
    return out.returncode == 0 and out.stdout.strip() == "install ok installed"


def depends(pkg):
    """The packages apt installs with pkg (Depends, Pre-Depends), as dpkg
    records them here; of alternatives, those installed (else the first)."""
    if pkg in _depends_cache:
        return _depends_cache[pkg]
    out = run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", pkg])
    result = set()
    if out.returncode == 0:
        for clause in out.stdout.split(","):
            alternatives = [re.sub(r"\(.*?\)", "", a).strip().split(":")[0]
                            for a in clause.split("|")]
            alternatives = [a for a in alternatives if a]
            if not alternatives:
                continue
            present = [a for a in alternatives if installed(a)]
            result.update(present or alternatives[:1])
    _depends_cache[pkg] = result
    return result


def closure(packages):
    seen = set()
    todo = list(packages)
    while todo:
        pkg = todo.pop()
        if pkg in seen:
            continue
        seen.add(pkg)
        todo.extend(depends(pkg) - seen)
    return seen


def check(bin_dir, packages, quiet=False):
    """Returns the problems (one line each) of the package list for the
    executables in bin_dir."""
    listed = set(packages) | BASE_PACKAGES
    installs = closure(listed)
    problems = []
    excluded = set()
    for name in EXECUTABLES:
        binary = os.path.join(bin_dir, name)
        libs = ldd(binary)
        for soname in needed(binary):
            if CUDA_LIBS.match(soname):
                excluded.add(soname)
                continue
            path = libs.get(soname)
            if path is None:
                problems.append(f"{name}: {soname} not found by ldd")
                continue
            pkg = owner(path)
            if pkg not in listed:
                problems.append(f"{name}: {soname} ({path}) is in package {pkg or '(none)'}, "
                                f"which the runtime list does not name")
        for soname, path in sorted(libs.items()):
            if CUDA_LIBS.match(soname):
                excluded.add(soname)
                continue
            if path is None:
                problems.append(f"{name}: {soname} not found by ldd")
                continue
            if os.path.realpath(path).startswith("/usr/local/cuda"):
                excluded.add(soname)
                continue
            pkg = owner(path)
            if pkg not in installs:
                problems.append(f"{name}: {soname} ({path}) is in package {pkg or '(none)'}, "
                                f"which the runtime image does not install")
    if excluded and not quiet:
        print("left out (CUDA back end of this build; the image is built with "
              f"-DWITH_CUDA=OFF): {', '.join(sorted(excluded))}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin_dir", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--packages",
                        default=os.path.join(ROOT, "deploy", "docker", "runtime-packages.txt"))
    args = parser.parse_args()

    for tool in ("dpkg", "dpkg-query", "ldd", "objdump"):
        if shutil.which(tool) is None:
            print(f"SKIPPED: {tool} is not installed (needs Debian 12, the image's release)")
            return SKIP
    for name in EXECUTABLES:
        if not os.access(os.path.join(args.bin_dir, name), os.X_OK):
            print(f"SKIPPED: {args.bin_dir}/{name} is not built")
            return SKIP
    with open("/etc/os-release", encoding="utf-8") as f:
        release = f.read()
    if 'VERSION_ID="12"' not in release:
        print("note: not Debian 12; package names are checked against this system's")

    packages = read_packages(args.packages)
    print(f"runtime packages ({args.packages}): {' '.join(packages)}")
    problems = check(args.bin_dir, packages)
    if problems:
        print("FAILED: the runtime image would lack libraries:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"OK: every library of {', '.join(EXECUTABLES)} comes from the runtime packages, "
          f"their dependencies or libc6")

    # The check must be able to fail: take out a package that is named only
    # for the executables, and each must be reported with its library.
    for removed, soname in (("libzmq5", "libzmq.so.5"), ("libgoogle-glog0v6", "libglog.so.1")):
        if removed not in packages:
            continue
        problems = check(args.bin_dir, [p for p in packages if p != removed], quiet=True)
        if not any(soname in p for p in problems):
            print(f"FAILED: without {removed} in the list the check still passes")
            return 1
        print(f"OK: without {removed} the check fails: {problems[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
