#!/usr/bin/env python3
"""report.py: the table of bench/peers/run.sh from the files of one run.

Reads, in the results folder that run.sh fills:
  bench_kernels-t<T>-b<B>.txt  bench_kernels' output at T threads, batch B:
                               its training table gives pstrain's
                               examples/s per cpu kernels (the columns
                               cpu/eigen, cpu/onednn; gpu columns ignored);
  <peer>-t<T>.jsonl            peers.py's JSON lines for one peer at T
                               threads ("info", "result" or "skip").
Prints one markdown table: a row per model, thread count and batch size;
pstrain's examples/s per cpu kernels, each peer's, and every pstrain / peer
ratio. Then, per pstrain cpu kernels and peer, the smallest ratio and where
it is. Writes every figure as JSON lines to results.jsonl in the folder.
Only the standard library: it runs on any python3.
"""

import glob
import json
import os
import re
import sys

MODEL_ORDER = {"mlp_relu": 0, "cnn": 1}


def parse_bench_kernels(path, threads, batch):
    """Result dicts from bench_kernels' training table, one per cpu kernels."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("training, batch")), None)
    if start is None or start + 1 >= len(lines):
        raise ValueError(f"{path}: no training table")
    header = lines[start + 1].split()
    back_ends = [header[i - 1] for i, word in enumerate(header)
                 if word == "examples/s"]
    results = []
    for line in lines[start + 2:]:
        fields = line.split()
        if not fields or fields[0].endswith(":"):
            break
        model, values = fields[0], fields[1:]
        for k, back_end in enumerate(back_ends):
            if not back_end.startswith("cpu/"):
                continue
            results.append({"kind": "result", "peer": "pstrain",
                            "kernels": back_end, "model": model,
                            "threads": threads, "batch": batch,
                            "examples_per_s": float(values[2 * k]),
                            "ms_per_step": float(values[2 * k + 1])})
    return results


def load(folder):
    pstrain, peers, notes = [], [], []
    for path in sorted(glob.glob(os.path.join(folder, "bench_kernels-t*-b*.txt"))):
        m = re.search(r"-t(\d+)-b(\d+)\.txt$", path)
        pstrain += parse_bench_kernels(path, int(m.group(1)), int(m.group(2)))
    for path in sorted(glob.glob(os.path.join(folder, "*-t*.jsonl"))):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                obj = json.loads(line)
                if obj["kind"] == "result":
                    peers.append(obj)
                else:
                    notes.append(obj)
    return pstrain, peers, notes


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_FOLDER")
    folder = sys.argv[1]
    pstrain, peers, notes = load(folder)
    if not pstrain:
        sys.exit(f"report.py: no bench_kernels training figures in {folder}")

    kernels = sorted({r["kernels"] for r in pstrain})
    peer_names = sorted({r["peer"] for r in peers}, reverse=True)  # torch first
    keys = sorted({(r["model"], r["threads"], r["batch"]) for r in pstrain + peers},
                  key=lambda k: (MODEL_ORDER.get(k[0], 9), k[0], k[1], k[2]))
    ours = {(r["kernels"], r["model"], r["threads"], r["batch"]): r["examples_per_s"]
            for r in pstrain}
    theirs = {(r["peer"], r["model"], r["threads"], r["batch"]): r["examples_per_s"]
              for r in peers}

    for note in notes:
        if note["kind"] == "info":
            details = ", ".join(f"{k} {v}" for k, v in note.items()
                                if k not in ("kind", "peer", "threads"))
            print(f"{note['peer']} at {note['threads']} thread(s): {details}")
        elif note["kind"] == "skip":
            print(f"{note['peer']}: skipped, {note['reason']}")

    short = {k: k.split("/", 1)[1] for k in kernels}
    columns = ["model", "threads", "batch"]
    columns += [f"pstrain {k}" for k in kernels] + peer_names
    columns += [f"{short[k]} / {p}" for k in kernels for p in peer_names]
    print("\nexamples/s (median of repeats) and pstrain / peer ratios:\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    rows = []
    worst = {}  # (kernels, peer) -> (ratio, key)
    for key in keys:
        cells = [key[0], str(key[1]), str(key[2])]
        for k in kernels:
            v = ours.get((k,) + key)
            cells.append(f"{v:.0f}" if v else "-")
        for p in peer_names:
            v = theirs.get((p,) + key)
            cells.append(f"{v:.0f}" if v else "-")
        for k in kernels:
            for p in peer_names:
                a, b = ours.get((k,) + key), theirs.get((p,) + key)
                if a and b:
                    ratio = a / b
                    cells.append(f"{ratio:.2f}")
                    rows.append({"kind": "ratio", "kernels": k, "peer": p,
                                 "model": key[0], "threads": key[1],
                                 "batch": key[2], "ratio": ratio})
                    if (k, p) not in worst or ratio < worst[(k, p)][0]:
                        worst[(k, p)] = (ratio, key)
                else:
                    cells.append("-")
        print("| " + " | ".join(cells) + " |")
    if "cpu/eigen" in kernels:
        print("\npstrain's Eigen kernels run in one thread whatever the thread "
              "count;\n--intra_op_threads sets oneDNN's.")
    print()
    for (k, p), (ratio, key) in sorted(worst.items()):
        print(f"min_ratio {k} / {p}: {ratio:.2f} "
              f"({key[0]}, {key[1]} thread(s), batch {key[2]})")

    with open(os.path.join(folder, "results.jsonl"), "w") as f:
        for obj in pstrain + peers + rows:
            f.write(json.dumps(obj) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
