#!/usr/bin/env python3
"""Checks that no include runs up the library layers: a file in a folder may
include headers of its own folder and of the folders below it, never above.
The layers, lowest first (as the top-level CMakeLists.txt adds them):

  common, scheduler, cluster, schema, transport, monitoring, kernels, model, data, job,
  export, ps, worker, chief, predict, serve, cli

tests/, bench/, fuzz/ and python/ (the extension) sit above them all. It also checks that no file of
the repository includes itself through others (an include cycle). Prints each
include that runs up and each cycle, and exits 1 when there is one.

usage: scripts/check_includes.py
"""
import os
import re
import subprocess
import sys

LAYERS = ["common", "scheduler", "cluster", "schema", "transport", "monitoring", "kernels", "model",
          "data", "job", "export", "ps", "worker", "chief", "predict", "serve", "cli"]
RANK = {folder: i for i, folder in enumerate(LAYERS)}
INCLUDE = re.compile(r'\s*#\s*include\s+"(([^/"]+)/[^"]+)"')


def main():
    if any(arg in ("-h", "--help") for arg in sys.argv[1:]):
        print(__doc__.strip())
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = subprocess.check_output(["git", "ls-files", "*.cc", "*.h", "*.cu"], cwd=root,
                                    text=True).split()
    known = set(files)
    includes = {}  # file -> the repository files it includes
    upward = []
    for path in files:
        folder = path.split("/")[0]
        includes[path] = []
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                if m.group(1) in known:
                    includes[path].append(m.group(1))
                if folder in RANK and m.group(2) in RANK and RANK[m.group(2)] > RANK[folder]:
                    upward.append(f"{path}:{number}: {line.strip()}")
    cycles = find_cycles(includes)
    for line in upward:
        print(line)
    for cycle in cycles:
        print("include cycle among: " + ", ".join(cycle))
    failed = bool(upward or cycles)
    print(f"check_includes.py: {len(upward)} includes run up the layers, {len(cycles)} include "
          f"cycles in {len(files)} files", file=sys.stderr if failed else sys.stdout)
    return 1 if failed else 0


def find_cycles(graph):
    """Returns one cycle (a list of files) per strongly connected group of more
    than one file, or of one file that includes itself (Tarjan's algorithm,
    iterative so that deep include chains cannot overflow the stack)."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, []))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in graph.get(node, []):
                    cycles.append(sorted(group))
    return cycles


if __name__ == "__main__":
    sys.exit(main())
