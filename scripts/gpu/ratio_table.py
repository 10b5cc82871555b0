#!/usr/bin/env python3
"""Prints pstrain / PyTorch training examples/s on the GPU, per model and batch.

  ratio_table.py BENCH_LOG... --torch TORCH_JSONL

BENCH_LOG: bench_kernels output (its training table, one file per batch
size); TORCH_JSONL: bench/peers/peers.py --peer=torch --device=cuda output.
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
    args = parser.parse_args()
    pstrain = {}
    for path in args.bench_logs:
        pstrain.update(bench_rows(path))
    torch = {}
    for line in open(args.torch):
        obj = json.loads(line)
        if obj.get("kind") == "result":
            torch[(obj["model"], obj["batch"])] = obj["examples_per_s"]
    print(f"{'model':<10} {'batch':>5} {'pstrain gpu:0':>14} {'PyTorch cuda':>13} "
          f"{'ratio':>6} {'pstrain best cpu':>17} {'gpu/cpu':>8}")
    for (model, batch), cols in sorted(pstrain.items()):
        gpu = cols.get("gpu:0")
        cpu = max(v for b, v in cols.items() if b.startswith("cpu"))
        peer = torch.get((model, batch))
        ratio = f"{gpu / peer:6.2f}" if gpu and peer else "     -"
        print(f"{model:<10} {batch:>5} {gpu or 0:>14.0f} {peer or 0:>13.0f} {ratio} "
              f"{cpu:>17.0f} {(gpu or 0) / cpu:>8.2f}")


if __name__ == "__main__":
    main()
