#!/usr/bin/env python3
"""Writes a synthetic click log in Criteo's layout, drawn from a known
logistic model, to try --dataset=criteo on and to know how well any model
could do on it. Python's standard library only; seeded and deterministic.

Each line: label (0/1), 13 integer features I1..I13, 26 categorical features
C1..C26 as 8-hex-digit strings, tab-separated; any feature may be empty.

The model behind the labels (all of it drawn from --seed):
  - integers: heavy-tailed counts (log-normal), each feature empty in a
    share of the lines (0 to 75%, as in Criteo's log); I2 is sometimes -1,
    -2 or -3. Effect: beta_j * log(1 + max(x, 0)), an empty field as 0 (the
    reader's transform, so a model on the reader's features can learn it);
  - categorical field f: a value of rank r (from 0) with probability p_r
    proportional to (r + 1)^-s_f (Zipf), over a vocabulary of 10 to 50
    values (4 fields, s_f in 1.1..1.4), 1,000 to 10,000 (20 fields, s_f in
    1.3..1.7) or 1,000,000 (2 fields, s_f in 1.1..1.2: long tails, weak
    signal); some fields are empty in a share of the lines (the empty value
    has a weight of its own). Weight of value r: N(0, sigma_f^2) scaled by
    sqrt(min(1, p_r / 1e-2)), and 0 below p_r = 2e-3: the signal sits on
    values frequent enough to be learnt from 200,000 lines (a value of
    p = 2e-3 shows up about 400 times), none on the long tails;
  - crosses: 3 pairs of the small fields have a weight per pair of values,
    N(0, 0.12^2), tapered the same way by the pair's probability (modest:
    they are worth about 0.002 of AUC);
  - logit = bias + the integers' effects + the values' weights + the
    crosses, the bias set (Newton on the training lines) for a CTR of
    --ctr (0.25); label ~ Bernoulli(sigmoid(logit)).

Writes OUT_DIR/train.txt and OUT_DIR/test.txt (with --gzip: train.txt.gz and
test.txt.gz, byte-for-byte reproducible) and OUT_DIR/problem.json, and prints
the Bayes-optimal figures on the test set: the AUC of the true
probabilities (exact, ties at their average rank), their log-loss and the
test CTR. A model can reach the Bayes AUC only in the limit of infinite data.

usage: examples/make_ctr_problem.py OUT_DIR [--train_examples 200000]
       [--test_examples 50000] [--seed 1] [--ctr 0.25] [--gzip]
"""
import argparse
import bisect
import gzip
import io
import itertools
import json
import math
import os
import random
import sys
import time

NUM_INTEGER = 13
NUM_CATEGORICAL = 26
# Weights: full strength for values of probability >= FULL_WEIGHT_P, tapered
# as sqrt(p / FULL_WEIGHT_P) below, none below MIN_WEIGHT_P.
FULL_WEIGHT_P = 1e-2
MIN_WEIGHT_P = 2e-3
# Shares of empty integer features, about Criteo's (I12 is mostly empty).
INTEGER_MISSING = [0.45, 0.0, 0.2, 0.2, 0.03, 0.2, 0.04, 0.0, 0.04, 0.45, 0.04, 0.75, 0.2]
CROSS_SIGMA = 0.12
# Zipf exponents by kind of field.
ZIPF_S = {"small": (1.1, 1.4), "medium": (1.3, 1.7), "huge": (1.1, 1.2)}


def sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def fmix32(h):
    """MurmurHash3's 32-bit finalizer: a bijection on 32-bit integers."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def make_fields(rng):
    """The 26 categorical fields: vocabulary, Zipf exponent, empty share and
    signal strength, in an order that mixes the kinds."""
    kinds = ["small"] * 4 + ["huge"] * 2 + ["medium"] * 20
    rng.shuffle(kinds)
    fields = []
    for kind in kinds:
        if kind == "small":
            vocab, sigma = rng.randint(10, 50), rng.uniform(0.3, 0.5)
        elif kind == "huge":
            vocab, sigma = 1_000_000, 0.1
        else:
            vocab = int(round(10 ** rng.uniform(3, 4)))
            sigma = rng.uniform(0.1, 0.35)
        missing = rng.choice([0.0, 0.0, 0.0, 0.05, 0.2, 0.45])
        fields.append({"kind": kind, "vocab": vocab, "zipf_s": rng.uniform(*ZIPF_S[kind]),
                       "missing": missing, "sigma": sigma})
    return fields


def zipf_probabilities(vocab, s):
    weights = [(r + 1) ** -s for r in range(vocab)]
    total = math.fsum(weights)
    return [w / total for w in weights]


def weight_scale(p):
    if p < MIN_WEIGHT_P:
        return 0.0
    return math.sqrt(min(1.0, p / FULL_WEIGHT_P))


def make_model(rng, fields):
    """Per field: the value weights (a dict over the values that have one;
    index -1 is the empty value) and the cumulative distribution to draw
    values from; the crosses and the integer features' parameters."""
    for f in fields:
        probs = zipf_probabilities(f["vocab"], f["zipf_s"])
        f["cdf"] = list(itertools.accumulate(probs))
        present = 1.0 - f["missing"]
        weights = {}
        for r, p in enumerate(probs):
            scale = weight_scale(p * present)
            if scale == 0.0:
                break  # probabilities fall with the rank
            weights[r] = rng.gauss(0.0, f["sigma"]) * scale
        if f["missing"] > 0:
            weights[-1] = rng.gauss(0.0, f["sigma"])
        f["weights"] = weights
        f["probs_head"] = probs[:64]  # for the crosses' taper
    small = [i for i, f in enumerate(fields) if f["kind"] == "small"]
    pairs = [(small[0], small[1]), (small[2], small[3]), (small[0], small[2])]
    crosses = []
    for a, b in pairs:
        fa, fb = fields[a], fields[b]
        table = {}
        for ra, pa in enumerate(fa["probs_head"]):
            for rb, pb in enumerate(fb["probs_head"]):
                scale = weight_scale(pa * pb * (1 - fa["missing"]) * (1 - fb["missing"]))
                if scale > 0:
                    table[(ra, rb)] = rng.gauss(0.0, CROSS_SIGMA) * scale
        crosses.append({"fields": [a, b], "weights": table})
    integers = []
    for j in range(NUM_INTEGER):
        integers.append({"mu": rng.uniform(0.0, 4.0), "sd": rng.uniform(0.8, 1.8),
                         "missing": INTEGER_MISSING[j], "beta": rng.gauss(0.0, 0.12)})
    return crosses, integers


def draw_integers(rng, spec, n, negative):
    """One integer column: strings ('' when empty) and log(1 + max(x, 0))."""
    text, value = [], []
    mu, sd, missing = spec["mu"], spec["sd"], spec["missing"]
    for _ in range(n):
        if rng.random() < missing:
            text.append("")
            value.append(0.0)
            continue
        if negative and rng.random() < 0.05:
            x = -rng.randint(1, 3)
        else:
            x = int(rng.lognormvariate(mu, sd))
        text.append(str(x))
        value.append(math.log1p(x) if x > 0 else 0.0)
    return text, value


def draw_values(rng, field, n):
    """One categorical column: value ranks, -1 when empty."""
    cdf, total = field["cdf"], field["cdf"][-1]
    hi = len(cdf) - 1
    random_ = rng.random
    values = [bisect.bisect(cdf, random_() * total, 0, hi) for _ in range(n)]
    if field["missing"] > 0:
        missing = field["missing"]
        values = [-1 if random_() < missing else v for v in values]
    return values


def hex_strings(values, field_index, salt):
    """8-hex-digit strings for value ranks: a bijection per field, so two
    values never share a string, and no two fields share one either."""
    cache = {-1: ""}
    out = []
    for v in values:
        s = cache.get(v)
        if s is None:
            s = "%08x" % fmix32(((field_index << 26) | v) ^ salt)
            cache[v] = s
        out.append(s)
    return out


def exact_auc(probabilities, labels):
    """Mann-Whitney: pairs won by the positive, ties counted 1/2."""
    order = sorted(range(len(labels)), key=probabilities.__getitem__)
    positives = sum(labels)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return float("nan")
    wins2 = 0
    negatives_below = 0
    i = 0
    while i < len(order):
        j = i
        run_pos = run_neg = 0
        value = probabilities[order[i]]
        while j < len(order) and probabilities[order[j]] == value:
            if labels[order[j]]:
                run_pos += 1
            else:
                run_neg += 1
            j += 1
        wins2 += run_pos * (2 * negatives_below + run_neg)
        negatives_below += run_neg
        i = j
    return wins2 / (2 * positives * negatives)


def log_loss(probabilities, labels):
    total = 0.0
    for p, y in zip(probabilities, labels):
        p = min(max(p, 1e-7), 1 - 1e-7)
        total -= math.log(p) if y else math.log1p(-p)
    return total / len(labels)


def calibrate_bias(logits, target):
    """The bias b with mean(sigmoid(z + b)) = target: Newton's method (the
    mean is increasing and smooth in b), a few passes over the logits."""
    b = math.log(target / (1 - target)) - sum(logits) / len(logits)
    for _ in range(50):
        ps = [sigmoid(z + b) for z in logits]
        mean = sum(ps) / len(ps)
        slope = sum(p * (1 - p) for p in ps) / len(ps)
        step = (target - mean) / slope
        b += max(-2.0, min(2.0, step))
        if abs(step) < 1e-10:
            break
    return b


def write_lines(path, columns, compress):
    data = "".join(line + "\n" for line in map("\t".join, zip(*columns))).encode()
    if compress:
        buffer = io.BytesIO()
        # mtime 0 and no file name: the same bytes on every run.
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0,
                           compresslevel=6) as out:
            out.write(data)
        data = buffer.getvalue()
    with open(path, "wb") as out:
        out.write(data)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Writes OUT_DIR/train.txt, OUT_DIR/test.txt (.gz with --gzip) and "
        "OUT_DIR/problem.json; prints the Bayes-optimal test AUC, log-loss and CTR.")
    parser.add_argument("out_dir")
    parser.add_argument("--train_examples", type=int, default=200000)
    parser.add_argument("--test_examples", type=int, default=50000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ctr", type=float, default=0.25, help="target click rate")
    parser.add_argument("--gzip", action="store_true", help="write gzip-compressed files")
    a = parser.parse_args()
    if a.train_examples < 1 or a.test_examples < 1:
        parser.error("--train_examples and --test_examples must be at least 1")
    if not 0 < a.ctr < 1:
        parser.error("--ctr must lie in (0, 1)")
    start = time.time()

    # Separate streams for the model and the data: the model depends on the
    # seed alone, not on the number of examples.
    model_rng = random.Random(f"ctr-model-{a.seed}")
    data_rng = random.Random(f"ctr-data-{a.seed}")
    salt = model_rng.getrandbits(32) & ~(0x3F << 26)  # keeps the field bits distinct
    fields = make_fields(model_rng)
    crosses, integers = make_model(model_rng, fields)

    n = a.train_examples + a.test_examples
    logits = [0.0] * n
    int_text = []
    for j, spec in enumerate(integers):
        text, value = draw_integers(data_rng, spec, n, negative=(j == 1))
        int_text.append(text)
        beta = spec["beta"]
        logits = [z + beta * x for z, x in zip(logits, value)]
    values = []
    for f in fields:
        column = draw_values(data_rng, f, n)
        values.append(column)
        weights = f["weights"]
        logits = [z + weights.get(v, 0.0) for z, v in zip(logits, column)]
    for cross in crosses:
        fa, fb = cross["fields"]
        table = cross["weights"]
        logits = [z + table.get((va, vb), 0.0)
                  for z, va, vb in zip(logits, values[fa], values[fb])]
    bias = calibrate_bias(logits[:a.train_examples], a.ctr)
    probabilities = [sigmoid(z + bias) for z in logits]
    labels = [1 if data_rng.random() < p else 0 for p in probabilities]

    os.makedirs(a.out_dir, exist_ok=True)
    suffix = ".gz" if a.gzip else ""
    cat_text = [hex_strings(column, i, salt) for i, column in enumerate(values)]
    label_text = [str(y) for y in labels]
    for name, begin, end in (("train.txt", 0, a.train_examples), ("test.txt", a.train_examples, n)):
        columns = [label_text[begin:end]] + [c[begin:end] for c in int_text] + \
                  [c[begin:end] for c in cat_text]
        write_lines(os.path.join(a.out_dir, name + suffix), columns, a.gzip)

    test_p = probabilities[a.train_examples:]
    test_y = labels[a.train_examples:]
    test_ctr = sum(test_y) / len(test_y)
    train_ctr = sum(labels[:a.train_examples]) / a.train_examples
    entropy = -(test_ctr * math.log(test_ctr) + (1 - test_ctr) * math.log(1 - test_ctr)) \
        if 0 < test_ctr < 1 else 0.0
    problem = {
        "seed": a.seed,
        "train_examples": a.train_examples,
        "test_examples": a.test_examples,
        "files": ["train.txt" + suffix, "test.txt" + suffix],
        "bayes_test_auc": exact_auc(test_p, test_y),
        "bayes_test_log_loss": log_loss(test_p, test_y),
        "test_ctr": test_ctr,
        "train_ctr": train_ctr,
        "constant_test_log_loss": entropy,
        "bias": bias,
        "fields": [{"name": f"C{i + 1}", "kind": f["kind"], "vocab": f["vocab"],
                    "zipf_s": round(f["zipf_s"], 4), "missing": f["missing"],
                    "sigma": round(f["sigma"], 4), "weighted_values": len(f["weights"])}
                   for i, f in enumerate(fields)],
        "crosses": [{"fields": [f"C{c['fields'][0] + 1}", f"C{c['fields'][1] + 1}"],
                     "weighted_pairs": len(c["weights"])} for c in crosses],
        "integers": [{"name": f"I{j + 1}", "missing": s["missing"], "beta": round(s["beta"], 4)}
                     for j, s in enumerate(integers)],
    }
    with open(os.path.join(a.out_dir, "problem.json"), "w") as out:
        json.dump(problem, out, indent=1)
        out.write("\n")
    print(f"wrote {a.out_dir}/train.txt{suffix} ({a.train_examples} lines, CTR {train_ctr:.4f}) "
          f"and {a.out_dir}/test.txt{suffix} ({a.test_examples} lines) in "
          f"{time.time() - start:.1f} s")
    print(f"test CTR {test_ctr:.4f}; Bayes-optimal test AUC {problem['bayes_test_auc']:.4f}, "
          f"log-loss {problem['bayes_test_log_loss']:.4f} (a constant predictor: {entropy:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
