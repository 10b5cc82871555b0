#!/usr/bin/env python3
"""Prints pstrain / PyTorch training examples/s on the GPU, per model and batch.

  ratio_table.py BENCH_LOG... --torch EAGER_JSONL --torch_host HOST_JSONL

BENCH_LOG: bench_kernels output (its training table, one file per batch
size); EAGER_JSONL: bench/peers/peers.py --peer=torch --device=cuda output
(everything on the GPU); HOST_JSONL: the same with --host_params (a ps
worker's step, as bench_kernels times pstrain's).
"""
import argparse
import json
import re


def bench_rows(path):
    """{(model, batch): {back_end: examples/s}} from one bench_kernels log."""
    rows, back_ends, batch = {}, None, None
    for line in open(path):
        m = re.match(r"training, batch (\d+),", line)
        if m:
            batch = int(m.group(1))
            continue
        if line.startswith("model ") and batch is not None:
            back_ends = re.findall(r"(\S+) examples/s", line)
            continue
        fields = line.split()
        if back_ends and len(fields) == 1 + 2 * len(back_ends):
            rows[(fields[0], batch)] = {
                b: float(fields[1 + 2 * i]) for i, b in enumerate(back_ends)}
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_logs", nargs="+")
    parser.add_argument("--torch", required=True)
    parser.add_argument("--torch_host", required=True)
    args = parser.parse_args()
    pstrain = {}
    for path in args.bench_logs:
        pstrain.update(bench_rows(path))
    eager, host = peer_rows(args.torch), peer_rows(args.torch_host)
    print(f"{'model':<10} {'batch':>5} {'pstrain gpu:0':>14} {'PyTorch eager':>14} {'ratio':>6} "
          f"{'PyTorch host-params':>20} {'ratio':>6} {'pstrain best cpu':>17} {'gpu/cpu':>8}")
    for (model, batch), cols in sorted(pstrain.items()):
        gpu = cols.get("gpu:0", 0)
        cpu = max(v for b, v in cols.items() if b.startswith("cpu"))
        row = f"{model:<10} {batch:>5} {gpu:>14.0f}"
        for peer, width in ((eager, 14), (host, 20)):
            other = peer.get((model, batch), 0)
            ratio = f"{gpu / other:6.2f}" if gpu and other else "     -"
            row += f" {other:>{width}.0f} {ratio}"
        print(f"{row} {cpu:>17.0f} {gpu / cpu:>8.2f}")


def peer_rows(path):
    """{(model, batch): examples/s} of one peers.py output."""
    rows = {}
    for line in open(path):
        obj = json.loads(line)
        if obj.get("kind") == "result":
            rows[(obj["model"], obj["batch"])] = obj["examples_per_s"]
    return rows


if __name__ == "__main__":
    main()
