#!/usr/bin/env python3
"""Writes a CSV classification problem to try --dataset=csv on: a header line,
FEATURES numeric columns, then the label (0..CLASSES-1) in the last column.
Each class's examples scatter around a centre of its own, with features on
different scales and offsets (so --normalize matters). Python's standard
library only.

usage: examples/make_csv_problem.py OUT_DIR [--features=20] [--classes=3]
       [--train=5000] [--test=1000] [--seed=1]
Writes OUT_DIR/train.csv and OUT_DIR/test.csv.
"""
import argparse
import os
import random


def write(path, rows, centres, scales, rng):
    with open(path, "w") as out:
        features = len(scales)
        out.write(",".join(f"x{j}" for j in range(features)) + ",label\n")
        for i in range(rows):
            label = i % len(centres)
            values = (scales[j] * (centres[label][j] + rng.gauss(0, 1)) + 10 * j
                      for j in range(features))
            out.write(",".join(f"{v:.5g}" for v in values) + f",{label}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--train", type=int, default=5000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    a = parser.parse_args()

    rng = random.Random(a.seed)
    centres = [[rng.gauss(0, 1) for _ in range(a.features)] for _ in range(a.classes)]
    scales = [10 ** rng.uniform(-1, 2) for _ in range(a.features)]
    os.makedirs(a.out_dir, exist_ok=True)
    write(os.path.join(a.out_dir, "train.csv"), a.train, centres, scales, rng)
    write(os.path.join(a.out_dir, "test.csv"), a.test, centres, scales, rng)
    print(f"wrote {a.out_dir}/train.csv ({a.train} rows) and {a.out_dir}/test.csv "
          f"({a.test} rows): {a.features} features, {a.classes} classes, label last")


if __name__ == "__main__":
    main()
