#!/usr/bin/env python3
"""Checks that no include runs up the library layers: a file in a folder may
include headers of its own folder and of the folders below it, never above.
The layers, lowest first (as the top-level CMakeLists.txt adds them):

  common, cluster, schema, transport, monitoring, kernels, model, data, job,
  export, ps, worker, scheduler, predict, cli

tests/, bench/ and fuzz/ sit above them all. Prints each include that runs up
and exits 1 when there is one.

usage: scripts/check_includes.py
"""
import os
import re
import subprocess
import sys

LAYERS = ["common", "cluster", "schema", "transport", "monitoring", "kernels", "model", "data",
          "job", "export", "ps", "worker", "scheduler", "predict", "cli"]
RANK = {folder: i for i, folder in enumerate(LAYERS)}
INCLUDE = re.compile(r'\s*#\s*include\s+"([^/"]+)/')


def main():
    if any(arg in ("-h", "--help") for arg in sys.argv[1:]):
        print(__doc__.strip())
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = subprocess.check_output(["git", "ls-files", "*.cc", "*.h", "*.cu"], cwd=root,
                                    text=True).split()
    upward = []
    for path in files:
        folder = path.split("/")[0]
        if folder not in RANK:
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m and m.group(1) in RANK and RANK[m.group(1)] > RANK[folder]:
                    upward.append(f"{path}:{number}: {line.strip()}")
    for line in upward:
        print(line)
    print(f"check_includes.py: {len(upward)} includes run up the layers in {len(files)} files",
          file=sys.stderr if upward else sys.stdout)
    return 1 if upward else 0


if __name__ == "__main__":
    sys.exit(main())
