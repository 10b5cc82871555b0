#!/usr/bin/env python3
"""A reference point for click models on a log in Criteo's layout (such as
examples/make_ctr_problem.py writes): logistic regression with one weight per
(field, value) key and one per dense feature, trained with Adagrad, in pure
Python (standard library only; about a minute for 200,000 lines and 3 passes).

Features as pstrain's criteo reader makes them: integer x -> log(1 + x), empty
and negative as 0, standardized on the training set; categorical field f and
its string (an empty one too) -> one key. A log in libffm layout
(make_ctr_problem.py --multi_hot; told apart by its first line) is read too:
fields 0..12 are the 13 dense values (log1p already), fields 13..38 one key
each, fields 39.. multi-hot: each id a key with value w / (the field's sum of
w), a weighted mean as make_ctr_problem.py's truth reads them. Prints the test AUC (exact, ties at
their average rank), log-loss and CTR, beside the Bayes-optimal figures of
DIR/problem.json when it is there.

usage: examples/ctr_baseline.py DIR [--epochs 3] [--learning_rate 0.02]
Reads DIR/train.txt and DIR/test.txt (or .gz).
"""
import argparse
import gzip
import json
import math
import os
import random
import sys
import time

NUM_INTEGER = 13
NUM_CATEGORICAL = 26


def open_log(path):
    for candidate in (path, path + ".gz"):
        if os.path.exists(candidate):
            with open(candidate, "rb") as f:
                magic = f.read(2)
            if magic == b"\x1f\x8b":
                return gzip.open(candidate, "rt")
            return open(candidate)
    sys.exit(f"{path}: no such file (nor {path}.gz)")


def read_ffm_line(line, key_ids, grow):
    """(label, dense row, [(key id, value)]) of one libffm line, or None."""
    parts = line.split()
    if not parts:
        return None
    row = [0.0] * NUM_INTEGER
    entries, totals = [], {}
    for token in parts[1:]:
        f, key, value = token.split(":")
        f, value = int(f), float(value)
        if f < NUM_INTEGER:
            row[f] = value
            continue
        i = key_ids.get((f, key))
        if i is None and grow:
            i = key_ids[(f, key)] = len(key_ids)
        if f >= NUM_INTEGER + NUM_CATEGORICAL:
            totals[f] = totals.get(f, 0.0) + value
        if i is not None:
            entries.append((i, f, value))
    pairs = [(i, v / totals[f] if f in totals else v) for i, f, v in entries]
    return (1 if parts[0] == "1" else 0), row, pairs


def read_log(path, key_ids, grow):
    """Labels, dense rows and key-id rows (lists of (id, value) for libffm);
    new keys get ids when `grow`, else unseen keys are dropped (their weight
    would be 0)."""
    labels, dense, keys = [], [], []
    with open_log(path) as lines:
        for line in lines:
            if "\t" not in line and ":" in line:  # libffm
                parsed = read_ffm_line(line, key_ids, grow)
                if parsed is not None:
                    labels.append(parsed[0])
                    dense.append(parsed[1])
                    keys.append(parsed[2])
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) != 1 + NUM_INTEGER + NUM_CATEGORICAL:
                continue
            labels.append(1 if fields[0] == "1" else 0)
            row = []
            for text in fields[1:1 + NUM_INTEGER]:
                x = int(text) if text else 0
                row.append(math.log1p(x) if x > 0 else 0.0)
            dense.append(row)
            ids = []
            for f, value in enumerate(fields[1 + NUM_INTEGER:]):
                key = (f, value)
                i = key_ids.get(key)
                if i is None and grow:
                    i = key_ids[key] = len(key_ids)
                if i is not None:
                    ids.append(i)
            keys.append(ids)
    return labels, dense, keys


def exact_auc(scores, labels):
    order = sorted(range(len(labels)), key=scores.__getitem__)
    positives = sum(labels)
    negatives = len(labels) - positives
    wins2 = negatives_below = 0
    i = 0
    while i < len(order):
        j, run_pos, run_neg = i, 0, 0
        while j < len(order) and scores[order[j]] == scores[order[i]]:
            run_pos += labels[order[j]]
            run_neg += 1 - labels[order[j]]
            j += 1
        wins2 += run_pos * (2 * negatives_below + run_neg)
        negatives_below += run_neg
        i = j
    return wins2 / (2 * positives * negatives)


def sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning_rate", type=float, default=0.02)
    parser.add_argument("--initial_accumulator", type=float, default=0.1)
    parser.add_argument("--l2", type=float, default=1e-5, help="per update, on the touched keys")
    parser.add_argument("--seed", type=int, default=1)
    a = parser.parse_args()
    start = time.time()

    key_ids = {}
    train_y, train_dense, train_keys = read_log(os.path.join(a.dir, "train.txt"), key_ids, True)
    test_y, test_dense, test_keys = read_log(os.path.join(a.dir, "test.txt"), key_ids, False)
    n = len(train_y)
    mean = [sum(r[j] for r in train_dense) / n for j in range(NUM_INTEGER)]
    sd = [math.sqrt(max(sum((r[j] - mean[j]) ** 2 for r in train_dense) / n, 1e-12))
          for j in range(NUM_INTEGER)]
    for rows in (train_dense, test_dense):
        for r in rows:
            for j in range(NUM_INTEGER):
                r[j] = (r[j] - mean[j]) / sd[j]
    read_s = time.time() - start

    w = [0.0] * len(key_ids)
    acc = [a.initial_accumulator] * len(key_ids)
    wd = [0.0] * NUM_INTEGER
    accd = [a.initial_accumulator] * NUM_INTEGER
    bias, acc_bias = 0.0, a.initial_accumulator
    lr, l2 = a.learning_rate, a.l2
    rng = random.Random(a.seed)
    order = list(range(n))
    sqrt = math.sqrt
    # Criteo rows hold key ids; libffm rows (key id, value) pairs.
    for rows in (train_keys, test_keys):
        for i, ids in enumerate(rows):
            if ids and not isinstance(ids[0], tuple):
                rows[i] = [(k, 1.0) for k in ids]
    for _ in range(a.epochs):
        rng.shuffle(order)
        for i in order:
            ids, x = train_keys[i], train_dense[i]
            z = bias
            for k, v in ids:
                z += w[k] * v
            for j in range(NUM_INTEGER):
                z += wd[j] * x[j]
            g = sigmoid(z) - train_y[i]
            acc_bias += g * g
            bias -= lr * g / sqrt(acc_bias)
            for k, v in ids:
                gk = g * v + l2 * w[k]
                acc[k] += gk * gk
                w[k] -= lr * gk / sqrt(acc[k])
            for j in range(NUM_INTEGER):
                gj = g * x[j]
                accd[j] += gj * gj
                wd[j] -= lr * gj / sqrt(accd[j])

    probabilities = []
    for ids, x in zip(test_keys, test_dense):
        z = bias + sum(w[k] * v for k, v in ids) + sum(wd[j] * x[j] for j in range(NUM_INTEGER))
        probabilities.append(sigmoid(z))
    auc = exact_auc(probabilities, test_y)
    loss = -sum(math.log(min(max(p if y else 1 - p, 1e-7), 1.0))
                for p, y in zip(probabilities, test_y)) / len(test_y)
    print(f"logistic regression, {len(key_ids)} keys, {a.epochs} epochs of {n} lines "
          f"({read_s:.1f} s reading, {time.time() - start:.1f} s in all)")
    print(f"test AUC {auc:.4f}, log-loss {loss:.4f}, CTR {sum(test_y) / len(test_y):.4f}")
    problem_path = os.path.join(a.dir, "problem.json")
    if os.path.exists(problem_path):
        with open(problem_path) as f:
            problem = json.load(f)
        print(f"Bayes-optimal: AUC {problem['bayes_test_auc']:.4f}, "
              f"log-loss {problem['bayes_test_log_loss']:.4f}; "
              f"AUC gap {problem['bayes_test_auc'] - auc:.4f}")
        if "lr_test_auc" in problem:
            print(f"the generator's logistic regression: AUC {problem['lr_test_auc']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
