#!/usr/bin/env python3
"""Throughput of prediction in process (pstrain.load(...).predict) against
the predict executable, on the same model.bin and the same test examples.

Measures, best of --repeats, in examples/s:
  executable       `predict --model_file=M DATA FLAGS` (no --output): process
                   start, model load, data read, prediction, report;
  in process       pstrain.load(M) and predict on examples already in memory;
  predict() only   the call alone, the model loaded (a server's steady state).
Ratios are against the executable. Not a test: no thresholds.

usage (the venv that scripts/test_python.sh makes):
  build/py-venv/bin/python bench/python_predict.py --model_file=RUN/model.bin \\
      --dataset=mnist --data_dir=$MNIST_DIR [--repeats=3]
  ... --dataset=csv --test_file=test.csv --label_column=-1
  ... --dataset=criteo --test_file=test.txt      (click models: also libsvm, libffm)
"""

import argparse
import gzip
import subprocess
import time
from pathlib import Path

import numpy as np

import pstrain
from pstrain import _paths
from pstrain.model import CLICK_FORMATS


def mnist_test_images(data_dir: Path) -> np.ndarray:
    path = next(p for p in (data_dir / "t10k-images-idx3-ubyte.gz",
                            data_dir / "t10k-images-idx3-ubyte") if p.exists())
    data = gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()
    n, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    pixels = np.frombuffer(data, np.uint8, offset=16).reshape(n, rows, cols, 1)
    return pixels.astype(np.float32) / np.float32(255)


def examples(a):
    """What predict() takes for the data flags: an array, or a click log's lines."""
    if a.dataset == "mnist":
        return mnist_test_images(Path(a.data_dir))
    if a.dataset == "csv":
        table = np.loadtxt(a.test_file, delimiter=",", skiprows=1, dtype=np.float32)
        return np.ascontiguousarray(np.delete(table, a.label_column, axis=1))
    return Path(a.test_file).read_text().splitlines()


def best(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model_file", required=True)
    parser.add_argument("--dataset", required=True, choices=["mnist", "csv", "criteo", "libsvm",
                                                             "libffm"])
    parser.add_argument("--data_dir", default="")
    parser.add_argument("--test_file", default="")
    parser.add_argument("--label_column", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    a = parser.parse_args()

    flags = [f"--dataset={a.dataset}"]
    flags += [f"--data_dir={a.data_dir}"] if a.data_dir else []
    flags += [f"--test_file={a.test_file}"] if a.test_file else []
    flags += [f"--label_column={a.label_column}"] if a.dataset == "csv" else []
    command = [str(_paths.executable("predict")), f"--model_file={a.model_file}", *flags]
    x = examples(a)
    n = len(x)
    fmt = a.dataset if a.dataset in CLICK_FORMATS else None  # dense models ignore it
    model = pstrain.load(a.model_file)
    rows = [
        ("executable", best(a.repeats, lambda: subprocess.run(command, check=True,
                                                              capture_output=True))),
        ("in process", best(a.repeats, lambda: pstrain.load(a.model_file).predict(x, fmt))),
        ("predict() only", best(a.repeats, lambda: model.predict(x, fmt))),
    ]
    print(f"{model.description}, {n} examples, best of {a.repeats}")
    print(f"{'':16}{'seconds':>10}{'examples/s':>14}{'ratio':>8}")
    base = n / rows[0][1]
    for name, seconds in rows:
        print(f"{name:16}{seconds:10.3f}{n / seconds:14,.0f}{n / seconds / base:7.2f}x")


if __name__ == "__main__":
    main()
