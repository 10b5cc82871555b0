#!/usr/bin/env python3
"""Writes a synthetic click log, drawn from a known logistic model, to try
--dataset=criteo on and to know how well any model could do on it. Python's
standard library only (numpy, when importable, only speeds up the logistic
regression it fits); seeded and deterministic.

Three problems, all with the same features for one seed (the integer and
categorical columns are drawn identically; only the labels differ):
  default   the linear truth below PLUS planted interactions that a model
            must learn from the data: pairs and triples of categorical
            fields and non-linear integer effects (seed 1, 500,000
            training and 100,000 test lines: Bayes AUC 0.881, logistic
            regression 0.748, a plain DeepFM (examples/ctr_reference.py)
            0.815 at its best epoch; 200,000 lines: 0.883, 0.744, 0.781);
  --linear  the linear truth alone: the earlier problem byte for byte (the
            train and test files of earlier releases for the same seed and
            sizes; problem.json gains the "lr" keys unless --lr_epochs=0,
            which gives its old bytes too; Bayes AUC 0.806, logistic
            regression about 0.80). It cannot tell a model that learns
            interactions from one that does not;
  --rare    the linear truth plus interactions planted only on pairs of
            values too rare to be learnt (expected fewer than one training
            occurrence per pair): the Bayes AUC rises, but no model should
            beat logistic regression by much; it checks that a model's
            defaults do not overfit (seed 1, 500,000 lines: Bayes 0.838,
            logistic regression 0.780, a plain DeepFM 0.774 after one epoch,
            falling after).

Criteo's layout (without --multi_hot): each line: label (0/1), 13 integer
features I1..I13, 26 categorical features C1..C26 as 8-hex-digit strings,
tab-separated; any feature may be empty. pstrain's criteo reader
(data/criteo_reader.h) turns integer x into log(1 + max(x, 0)) (empty: 0)
and each categorical field into one field-aware key (an empty value: a key
of its own).

libffm layout (with --multi_hot=N, N >= 1; Criteo's layout cannot hold
multi-hot fields): each line: label (0/1), then space-separated entries
field:id:value, fields 0-based and in ascending order:
  fields 0..12   the integer features I1..I13, always present, one entry
                 "j:0:v" with v = log(1 + max(x, 0)) written with 6
                 significant digits ("%.6g"; 0 for an empty field), the
                 value pstrain's criteo reader would compute: a dense input;
  fields 13..38  the categorical features C1..C26, one entry "f:id:1" each;
                 id: a 32-bit number (decimal) unique per (field, value),
                 never 0; id 0 is the field's empty value (so, as in
                 Criteo's layout, an empty value is a key of its own);
  fields 39..    the N multi-hot fields (39 + m for field M<m+1>), 1 to 50
                 distinct ids each, several entries "f:id:w", ids as above
                 (never 0); w = 1 in fields M1, M3, ...; in M2, M4, ... a
                 weight in [0.10, 1.00] with 2 decimals (think dwell time).
  e.g. "0 0:0:1.38629 1:0:0 ... 13:2596102235:1 ... 39:812735:1 39:1033:1
  40:99101:0.37 40:5523:1.00"
The truth reads a multi-hot field as the weighted mean (sum w_i t_i / sum
w_i) of per-id effects t_i: a weight per frequent id (N(0, 1), tapered by
the id's frequency like the values' weights) plus, in the default problem
only, an independent weight per (id, value of one small categorical field)
pair (--linear and --rare: the per-id weights alone).

The linear truth (all of it drawn from --seed):
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

Planted on top (default problem; from streams of their own, so the linear
truth and the features stay as above). No term has the structure of a
model (no low-rank factors, no dot products): every model only
approximates them.
  - pairs: 12 pairs of fields (3 small x small, 5 small x medium, 4 medium
    x medium), 2 triples of fields (small, small, small or medium): an
    independent N(0, sigma^2) weight per tuple of values (sigma 0.6) whose
    probability p (the product of the values' probabilities) is at least
    5e-4, full above 2e-3 and tapered as sqrt(p / 2e-3) between (a tuple of
    p = 5e-4 shows up 100 times in 200,000 lines, 250 in 500,000): 80 to 300
    weighted tuples per table;
  - each table is centred: the probability-weighted mean of its weights
    given any one value is subtracted (a pair table is double-centred), so
    it adds nothing to the fields' main effects: logistic regression on
    (field, value) keys cannot pick any of it up;
  - integers: 3 bumps A exp(-((u - c) / w)^2 / 2) and 2 steps A [u > t] in
    u = log(1 + max(x, 0)) of present values, and 2 slopes per value of a
    small field gamma_v (u - E u) (an integer x categorical interaction,
    gamma centred over the field's values);
  - multi-hot fields (--multi_hot): the interaction above with one small
    categorical field, centred the same way.
--rare: 6 pairs of fields, at least one of them huge: a weight uniform on
[-sqrt(3), sqrt(3)] * 0.8 from a hash of (pair, values) for every pair of
present values with p < 1e-6 (fewer than 0.5 expected occurrences in
500,000 lines), none on the others.

Writes OUT_DIR/train.txt and OUT_DIR/test.txt (with --gzip: train.txt.gz and
test.txt.gz, byte-for-byte reproducible) and OUT_DIR/problem.json, and prints
the Bayes-optimal figures on the test set: the AUC of the true
probabilities (exact, ties at their average rank), their log-loss and the
test CTR, and what logistic regression on the reader's features reaches
(one weight per (field, value) key and per integer feature, standardized;
multi-hot ids as keys with value w_i / sum w; Adagrad, --lr_epochs passes;
numpy minibatches of 256 when numpy imports, else per-example in the
standard library; --lr_epochs=0 skips it). A model can reach the Bayes AUC
only in the limit of infinite data.

usage: examples/make_ctr_problem.py OUT_DIR [--train_examples 200000]
       [--test_examples 50000] [--seed 1] [--ctr 0.25] [--gzip]
       [--linear | --rare] [--multi_hot N] [--lr_epochs 2]
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


# ------------------------------------------------------------ planted terms
# Tuples of values (pairs, triples) this frequent get their full weight,
# tapered as sqrt(p / TUPLE_FULL_P) below, none below TUPLE_MIN_P.
TUPLE_FULL_P = 2e-3
TUPLE_MIN_P = 5e-4
PAIR_SIGMA = 0.6
TRIPLE_SIGMA = 0.6
PAIR_KINDS = (("small", "small", 3), ("small", "medium", 5), ("medium", "medium", 4))
NUM_TRIPLES = 2
BUMPS, STEPS, SLOPES = 3, 2, 2
SLOPE_SIGMA = 0.35
# --rare: pairs of values rarer than this get a weight.
RARE_P = 1e-6
RARE_SIGMA = 0.8
RARE_PAIRS = 6
# Multi-hot fields.
MULTI_HOT_MAX = 50
MULTI_HOT_SIGMA = 1.0
MULTI_HOT_PAIR_SIGMA = 0.8
FFM_FIRST_MULTI_HOT = NUM_INTEGER + NUM_CATEGORICAL


def value_probabilities(field, limit):
    """(rank, probability among all lines) of the field's values, most
    frequent first, as long as the probability is at least `limit`."""
    cdf, total = field["cdf"], field["cdf"][-1]
    present = 1.0 - field["missing"]
    out, previous = [], 0.0
    for r, c in enumerate(cdf):
        p = (c - previous) / total * present
        previous = c
        if p < limit:
            break
        out.append((r, p))
    return out


def tuple_scale(p):
    if p < TUPLE_MIN_P:
        return 0.0
    return math.sqrt(min(1.0, p / TUPLE_FULL_P))


def centred_table(rng, marginals, sigma, shares=None):
    """An independent N(0, sigma^2) weight per tuple of values (one value
    per marginal: a list of (value, p)) of probability >= TUPLE_MIN_P,
    tapered, then centred: returns (table, offsets), offsets[i][v] = minus
    the mean weight given value v at place i, so that table.get(t, 0) +
    sum_i offsets[i].get(t[i], 0) has mean 0 given any one value (up to a
    constant, which the bias takes). `shares` (a dict per place) replaces
    the marginals' p in the means where given."""
    table = {}

    def walk(i, prefix, p):
        if p < TUPLE_MIN_P:
            return
        if i == len(marginals):
            table[prefix] = rng.gauss(0.0, sigma) * tuple_scale(p)
            return
        for v, pv in marginals[i]:
            if p * pv < TUPLE_MIN_P:
                break  # sorted by falling probability
            walk(i + 1, prefix + (v,), p * pv)

    walk(0, (), 1.0)
    probs = [dict(m) for m in marginals]
    for i, share in enumerate(shares or []):
        if share is not None:
            probs[i] = share
    offsets = []
    for i in range(len(marginals)):
        mean = {}
        for t, g in table.items():
            q = g
            for j, v in enumerate(t):
                if j != i:
                    q *= probs[j][v]
            mean[t[i]] = mean.get(t[i], 0.0) + q
        offsets.append({v: -m for v, m in mean.items()})
    return table, offsets


def uniform_hash(*parts):
    """A uniform number in (0, 1) from integers, by fmix32 rounds."""
    h = 0x9E3779B9
    for x in parts:
        h = fmix32((h ^ fmix32((x * 0x85EBCA77 + 0x165667B1) & 0xFFFFFFFF)) & 0xFFFFFFFF)
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
    return (fmix32(h) + 0.5) / 4294967296.0


def make_planted(rng, fields, integers, seed):
    """The default problem's extra terms: categorical tuples and the
    integers' non-linear effects."""
    kinds = {}
    for i, f in enumerate(fields):
        kinds.setdefault(f["kind"], []).append(i)
    frequent = [value_probabilities(f, TUPLE_MIN_P) for f in fields]
    tuples = []
    used = set()
    for ka, kb, count in PAIR_KINDS:
        made = 0
        while made < count:
            a, b = rng.choice(kinds[ka]), rng.choice(kinds[kb])
            key = tuple(sorted((a, b)))
            if a == b or key in used:
                continue
            used.add(key)
            table, offsets = centred_table(rng, [frequent[a], frequent[b]], PAIR_SIGMA)
            tuples.append({"fields": [a, b], "table": table, "offsets": offsets})
            made += 1
    for _ in range(NUM_TRIPLES):
        small = rng.sample(kinds["small"], 2)
        c = rng.choice([i for i in kinds["small"] + kinds["medium"] if i not in small])
        table, offsets = centred_table(rng, [frequent[i] for i in small + [c]], TRIPLE_SIGMA)
        tuples.append({"fields": small + [c], "table": table, "offsets": offsets})

    # Integer effects, on features present in at least half the lines; E u
    # and the quantiles from a sample of their own.
    mc = random.Random(f"ctr-planted-sample-{seed}")
    candidates = [j for j, s in enumerate(integers) if s["missing"] <= 0.5]
    chosen = rng.sample(candidates, BUMPS + STEPS + SLOPES)
    numeric = []
    for n, j in enumerate(chosen):
        spec = integers[j]
        sample = sorted(math.log1p(max(int(mc.lognormvariate(spec["mu"], spec["sd"])), 0))
                        for _ in range(4000))
        sign = rng.choice([-1.0, 1.0])
        if n < BUMPS:
            numeric.append({"kind": "bump", "feature": j,
                            "center": sample[int(rng.uniform(0.25, 0.75) * len(sample))],
                            "width": rng.uniform(0.25, 0.5) * spec["sd"],
                            "amplitude": sign * rng.uniform(0.8, 1.2)})
        elif n < BUMPS + STEPS:
            numeric.append({"kind": "step", "feature": j,
                            "threshold": sample[int(rng.uniform(0.3, 0.7) * len(sample))],
                            "amplitude": sign * rng.uniform(0.6, 0.9)})
        else:
            s = rng.choice(kinds["small"])
            values = value_probabilities(fields[s], MIN_WEIGHT_P)
            gamma = {v: rng.gauss(0.0, SLOPE_SIGMA) for v, _ in values}
            mean = math.fsum(gamma[v] * p for v, p in values) / math.fsum(p for _, p in values)
            gamma = {v: g - mean for v, g in gamma.items()}
            u_mean = (1 - spec["missing"]) * math.fsum(sample) / len(sample)
            numeric.append({"kind": "slope", "feature": j, "field": s, "gamma": gamma,
                            "u_mean": u_mean})
    return tuples, numeric


def make_rare(rng, fields):
    """--rare: pairs of fields (at least one huge) whose rare value pairs
    get a hashed weight."""
    huge = [i for i, f in enumerate(fields) if f["kind"] == "huge"]
    pairs = []
    while len(pairs) < RARE_PAIRS:
        a = rng.choice(huge)
        b = rng.randrange(len(fields))
        if a != b and sorted((a, b)) not in pairs:
            pairs.append(sorted((a, b)))
    return [{"fields": p, "salt": rng.getrandbits(32)} for p in pairs]


def rank_probabilities(field):
    """p of each rank among all lines (the present share included)."""
    cdf, total = field["cdf"], field["cdf"][-1]
    present = 1.0 - field["missing"]
    return [(c - b) / total * present for c, b in zip(cdf, [0.0] + cdf[:-1])]


def rare_terms(rare, fields, values, n):
    out = [0.0] * n
    scale = RARE_SIGMA * math.sqrt(3.0)
    for pair in rare:
        a, b = pair["fields"]
        pa, pb = rank_probabilities(fields[a]), rank_probabilities(fields[b])
        salt = pair["salt"]
        out = [z if va < 0 or vb < 0 or pa[va] * pb[vb] >= RARE_P
               else z + scale * (2.0 * uniform_hash(salt, va, vb) - 1.0)
               for z, va, vb in zip(out, values[a], values[b])]
    return out


def tuple_terms(tuples, values, n):
    out = [0.0] * n
    for t in tuples:
        table, offsets = t["table"], t["offsets"]
        columns = [values[i] for i in t["fields"]]
        if len(columns) == 2:
            o0, o1 = offsets
            out = [z + table.get((a, b), 0.0) + o0.get(a, 0.0) + o1.get(b, 0.0)
                   for z, a, b in zip(out, *columns)]
        else:
            o0, o1, o2 = offsets
            out = [z + table.get((a, b, c), 0.0) + o0.get(a, 0.0) + o1.get(b, 0.0)
                   + o2.get(c, 0.0) for z, a, b, c in zip(out, *columns)]
    return out


def numeric_terms(numeric, int_values, values, n):
    out = [0.0] * n
    for e in numeric:
        u = int_values[e["feature"]]
        if e["kind"] == "bump":
            c, w, amp = e["center"], e["width"], e["amplitude"]
            out = [z + amp * math.exp(-0.5 * ((x - c) / w) ** 2) if x > 0 else z
                   for z, x in zip(out, u)]
        elif e["kind"] == "step":
            t, amp = e["threshold"], e["amplitude"]
            out = [z + amp if x > t else z for z, x in zip(out, u)]
        else:
            gamma, mean = e["gamma"], e["u_mean"]
            out = [z + gamma.get(v, 0.0) * (x - mean)
                   for z, x, v in zip(out, u, values[e["field"]])]
    return out


def make_multi_hot(rng, count, fields, interact):
    """The multi-hot fields' specs: vocabulary, Zipf exponent, per-id
    weights and (with `interact`) the centred (value, id) table with one
    small categorical field."""
    small = [i for i, f in enumerate(fields) if f["kind"] == "small"]
    specs = []
    mean_len = (MULTI_HOT_MAX - 1) / math.log(MULTI_HOT_MAX)  # about, of the drawn lengths
    for m in range(count):
        vocab = int(round(10 ** rng.uniform(3.3, 4.3)))
        s = rng.uniform(1.05, 1.3)
        probs = zipf_probabilities(vocab, s)
        theta = {}
        for r, p in enumerate(probs):
            scale = weight_scale(p * mean_len)
            if scale == 0.0:
                break
            theta[r] = rng.gauss(0.0, MULTI_HOT_SIGMA) * scale
        spec = {"vocab": vocab, "zipf_s": s, "cdf": list(itertools.accumulate(probs)),
                "weighted": m % 2 == 1, "theta": theta, "field": None}
        if interact:
            c = rng.choice(small)
            # Thresholds by an id's expected occurrences per line; means
            # by its share of the entries.
            ids = [(r, p * mean_len) for r, p in enumerate(probs[:2000])]
            table, offsets = centred_table(
                rng, [value_probabilities(fields[c], TUPLE_MIN_P), ids], MULTI_HOT_PAIR_SIGMA,
                shares=[None, dict(enumerate(probs[:2000]))])
            spec.update(field=c, table=table, offsets=offsets)
        specs.append(spec)
    return specs


def draw_multi_hot(rng, spec, n):
    """Per line: the distinct id ranks (1 to 50 of them) and their weights."""
    cdf = spec["cdf"]
    ranks = range(len(cdf))
    random_, choices, exp, fromkeys = rng.random, rng.choices, math.exp, dict.fromkeys
    log_max = math.log(MULTI_HOT_MAX + 1)
    weighted = spec["weighted"]
    lines = []
    for _ in range(n):
        length = max(1, min(MULTI_HOT_MAX, int(exp(random_() * log_max))))
        ids = list(fromkeys(choices(ranks, cum_weights=cdf, k=length)))
        if weighted:
            weights = [(10 + int(random_() * 91)) / 100 for _ in ids]
        else:
            weights = [1.0] * len(ids)
        lines.append((ids, weights))
    return lines


def multi_hot_terms(spec, lines, values, n):
    theta = spec["theta"]
    out = []
    if spec["field"] is None:
        for ids, ws in lines:
            out.append(sum([w * theta.get(r, 0.0) for r, w in zip(ids, ws)]) / sum(ws))
        return out
    table, (o_value, o_id) = spec["table"], spec["offsets"]
    for (ids, ws), v in zip(lines, values[spec["field"]]):
        t = sum([w * (theta.get(r, 0.0) + table.get((v, r), 0.0) + o_id.get(r, 0.0))
                 for r, w in zip(ids, ws)])
        out.append(t / sum(ws) + o_value.get(v, 0.0))
    return out


def ffm_id(field, value, salt):
    """A libffm id: 32 bits, unique per (field, value), never 0 (fmix32 is a
    bijection with fmix32(0) = 0, and the argument is never 0: field >= 13
    sits above the salt's bits)."""
    return fmix32(((field << 26) | value) ^ salt) if value >= 0 else 0


def write_ffm(path, labels, int_values, values, multi_lines, multi_weighted, begin, end, salt,
              compress):
    """The lines begin..end in libffm layout (see the docstring)."""
    int_text = [["%d:0:%.6g" % (j, u) for u in column[begin:end]]
                for j, column in enumerate(int_values)]
    cat_text = []
    for f, column in enumerate(values):
        field = NUM_INTEGER + f
        cache = {}
        text = []
        for v in column[begin:end]:
            s = cache.get(v)
            if s is None:
                s = cache[v] = "%d:%d:1" % (field, ffm_id(field, v, salt))
            text.append(s)
        cat_text.append(text)
    multi_text = []
    for m, (lines, weighted) in enumerate(zip(multi_lines, multi_weighted)):
        field = FFM_FIRST_MULTI_HOT + m
        text = []
        prefix = {}  # rank -> "field:id:"
        for ids, ws in lines[begin:end]:
            for r in ids:
                if r not in prefix:
                    prefix[r] = "%d:%d:" % (field, ffm_id(field, r, salt))
            if weighted:
                text.append(" ".join([prefix[r] + "%.2f" % w for r, w in zip(ids, ws)]))
            else:
                text.append(" ".join([prefix[r] + "1" for r in ids]))
        multi_text.append(text)
    columns = [[str(y) for y in labels[begin:end]]] + int_text + cat_text + multi_text
    data = "".join(line + "\n" for line in map(" ".join, zip(*columns))).encode()
    if compress:
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0,
                           compresslevel=6) as out:
            out.write(data)
        data = buffer.getvalue()
    with open(path, "wb") as out:
        out.write(data)


# ------------------------------------------------- logistic regression's mark
LR_LEARNING_RATE = 0.05
LR_INITIAL_ACCUMULATOR = 0.1
LR_L2 = 1e-5
LR_BATCH = 256


def lr_features(int_values, values, multi_lines, n_train, n):
    """CSR rows (indptr, keys, key values) over keys that the training lines
    define (unseen test keys dropped) and standardized dense columns."""
    from array import array

    key_ids = {}
    columns = []  # per field or multi-hot field: key ids of every line
    for f, column in enumerate(values):
        d = {}
        train = [d.setdefault(v, len(key_ids) + len(d)) for v in column[:n_train]]
        key_ids.update({(f, v): i for v, i in d.items()})
        columns.append(train + [d.get(v, -1) for v in column[n_train:]])
    indptr, keys, weights = array("q", [0]), array("q"), array("d")
    multi_maps = []
    for m, lines in enumerate(multi_lines):
        d = {}
        for ids, _ in lines[:n_train]:
            for r in ids:
                if r not in d:
                    d[r] = len(key_ids) + len(d)
        key_ids.update({(NUM_CATEGORICAL + m, r): i for r, i in d.items()})
        multi_maps.append(d)
    rows = zip(*columns)
    for i, row in enumerate(rows):
        for k in row:
            if k >= 0:
                keys.append(k)
                weights.append(1.0)
        for d, lines in zip(multi_maps, multi_lines):
            ids, ws = lines[i]
            total = math.fsum(ws)
            for r, w in zip(ids, ws):
                k = d.get(r, -1)
                if k >= 0:
                    keys.append(k)
                    weights.append(w / total)
        indptr.append(len(keys))
    dense = []
    for column in int_values:
        mean = math.fsum(column[:n_train]) / n_train
        sd = math.sqrt(max(math.fsum((x - mean) ** 2 for x in column[:n_train]) / n_train, 1e-12))
        dense.append([(x - mean) / sd for x in column])
    return indptr, keys, weights, dense, len(key_ids)


def fit_lr_stdlib(feats, labels, n_train, epochs, seed):
    indptr, keys, weights, dense, num_keys = feats
    rows = list(zip(*dense))
    w = [0.0] * num_keys
    acc = [LR_INITIAL_ACCUMULATOR] * num_keys
    nd = len(dense)
    wd = [0.0] * nd
    accd = [LR_INITIAL_ACCUMULATOR] * nd
    bias, acc_bias = 0.0, LR_INITIAL_ACCUMULATOR
    lr, l2, sqrt, exp = LR_LEARNING_RATE, LR_L2, math.sqrt, math.exp
    order = list(range(n_train))
    rng = random.Random(f"ctr-lr-{seed}")
    for _ in range(epochs):
        rng.shuffle(order)
        for i in order:
            ks, vs, x = keys[indptr[i]:indptr[i + 1]], weights[indptr[i]:indptr[i + 1]], rows[i]
            z = bias
            for k, v in zip(ks, vs):
                z += w[k] * v
            for j in range(nd):
                z += wd[j] * x[j]
            g = (1.0 / (1.0 + exp(-z)) if z >= 0 else 1.0 - 1.0 / (1.0 + exp(z))) - labels[i]
            acc_bias += g * g
            bias -= lr * g / sqrt(acc_bias)
            for k, v in zip(ks, vs):
                gk = g * v + l2 * w[k]
                acc[k] += gk * gk
                w[k] -= lr * gk / sqrt(acc[k])
            for j in range(nd):
                gj = g * x[j]
                accd[j] += gj * gj
                wd[j] -= lr * gj / sqrt(accd[j])
    out = []
    for i in range(n_train, len(labels)):
        z = bias + sum(w[k] * v for k, v in zip(keys[indptr[i]:indptr[i + 1]],
                                                  weights[indptr[i]:indptr[i + 1]]))
        z += sum(a * b for a, b in zip(wd, rows[i]))
        out.append(sigmoid(z))
    return out


def fit_lr_numpy(np, feats, labels, n_train, epochs, seed):
    """Minibatches of LR_BATCH lines, the batch's summed gradient per key,
    Adagrad on the keys in the batch (and on the dense weights and bias)."""
    indptr, keys, weights, dense, num_keys = feats
    indptr = np.frombuffer(indptr, dtype=np.int64)
    keys = np.frombuffer(keys, dtype=np.int64)
    weights = np.frombuffer(weights, dtype=np.float64)
    x = np.array(dense, dtype=np.float64).T.copy()
    y = np.array(labels, dtype=np.float64)
    w = np.zeros(num_keys)
    acc = np.full(num_keys, LR_INITIAL_ACCUMULATOR)
    wd = np.zeros(x.shape[1])
    accd = np.full(x.shape[1], LR_INITIAL_ACCUMULATOR)
    bias, acc_bias = 0.0, LR_INITIAL_ACCUMULATOR
    lengths = np.diff(indptr)
    rng = np.random.default_rng(seed)

    def batch_rows(rows):
        starts, lens = indptr[rows], lengths[rows]
        seg = np.repeat(np.arange(len(rows)), lens)
        pos = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())
        return seg, keys[pos], weights[pos]

    def logits(rows, seg, k, v):
        return bias + x[rows] @ wd + np.bincount(seg, w[k] * v, minlength=len(rows))

    for _ in range(epochs):
        order = rng.permutation(n_train)
        for start in range(0, n_train, LR_BATCH):
            rows = order[start:start + LR_BATCH]
            seg, k, v = batch_rows(rows)
            z = logits(rows, seg, k, v)
            g = 1.0 / (1.0 + np.exp(-z)) - y[rows]
            uk, inverse = np.unique(k, return_inverse=True)
            gk = np.bincount(inverse, g[seg] * v, minlength=len(uk)) + LR_L2 * w[uk]
            acc[uk] += gk * gk
            w[uk] -= LR_LEARNING_RATE * gk / np.sqrt(acc[uk])
            gd = x[rows].T @ g
            accd += gd * gd
            wd -= LR_LEARNING_RATE * gd / np.sqrt(accd)
            gb = g.sum()
            acc_bias += gb * gb
            bias -= LR_LEARNING_RATE * gb / math.sqrt(acc_bias)
    p = []
    for start in range(n_train, len(labels), 65536):
        rows = np.arange(start, min(start + 65536, len(labels)))
        seg, k, v = batch_rows(rows)
        p.append(1.0 / (1.0 + np.exp(-logits(rows, seg, k, v))))
    return np.concatenate(p).tolist()


def fit_lr(int_values, values, multi_lines, labels, n_train, epochs, seed):
    """Test probabilities of logistic regression and the implementation used."""
    feats = lr_features(int_values, values, multi_lines, n_train, len(labels))
    try:
        import numpy as np
    except ImportError:
        return fit_lr_stdlib(feats, labels, n_train, epochs, seed), "stdlib, per example"
    return (fit_lr_numpy(np, feats, labels, n_train, epochs, seed),
            f"numpy, minibatches of {LR_BATCH}")


def logit_sd(values):
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Writes OUT_DIR/train.txt, OUT_DIR/test.txt (.gz with --gzip) and "
        "OUT_DIR/problem.json; prints the Bayes-optimal test AUC, log-loss and CTR, and "
        "what logistic regression reaches. See the module docstring for the problems and "
        "the layouts.")
    parser.add_argument("out_dir")
    parser.add_argument("--train_examples", type=int, default=200000)
    parser.add_argument("--test_examples", type=int, default=50000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ctr", type=float, default=0.25, help="target click rate")
    parser.add_argument("--gzip", action="store_true", help="write gzip-compressed files")
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--linear", action="store_true",
                      help="the linear truth alone (the earlier problem, byte for byte)")
    kind.add_argument("--rare", action="store_true",
                      help="interactions only on pairs of values too rare to learn")
    parser.add_argument("--multi_hot", type=int, default=0, metavar="N",
                        help="add N multi-hot fields (1 to 50 ids each) and write libffm")
    parser.add_argument("--lr_epochs", type=int, default=2,
                        help="passes of the logistic regression fitted for reference (0: none)")
    parser.add_argument("--lr_stdlib", action="store_true",
                        help="fit it in the standard library even when numpy imports")
    a = parser.parse_args()
    if a.train_examples < 1 or a.test_examples < 1:
        parser.error("--train_examples and --test_examples must be at least 1")
    if not 0 < a.ctr < 1:
        parser.error("--ctr must lie in (0, 1)")
    if not 0 <= a.multi_hot <= 64 - FFM_FIRST_MULTI_HOT:
        parser.error(f"--multi_hot must lie in 0..{64 - FFM_FIRST_MULTI_HOT}")
    if a.lr_epochs < 0:
        parser.error("--lr_epochs must be at least 0")
    problem_kind = "linear" if a.linear else "rare" if a.rare else "interactions"
    start = time.time()

    # Separate streams for the model and the data: the model depends on the
    # seed alone, not on the number of examples. The planted terms and the
    # multi-hot fields have streams of their own, so the linear truth and
    # its features come out the same in every problem.
    model_rng = random.Random(f"ctr-model-{a.seed}")
    data_rng = random.Random(f"ctr-data-{a.seed}")
    salt = model_rng.getrandbits(32) & ~(0x3F << 26)  # keeps the field bits distinct
    fields = make_fields(model_rng)
    crosses, integers = make_model(model_rng, fields)
    planted_rng = random.Random(f"ctr-planted-{a.seed}")
    tuples, numeric, rare = [], [], []
    if problem_kind == "interactions":
        tuples, numeric = make_planted(planted_rng, fields, integers, a.seed)
    elif problem_kind == "rare":
        rare = make_rare(random.Random(f"ctr-rare-{a.seed}"), fields)
    multi_specs = make_multi_hot(random.Random(f"ctr-multi-hot-{a.seed}"), a.multi_hot, fields,
                                 interact=problem_kind == "interactions")

    n = a.train_examples + a.test_examples
    logits = [0.0] * n
    int_text, int_values = [], []
    for j, spec in enumerate(integers):
        text, value = draw_integers(data_rng, spec, n, negative=(j == 1))
        int_text.append(text)
        int_values.append(value)
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
    components = {"linear": logit_sd(logits)}
    extra = []
    if tuples:
        extra.append(("tuples", tuple_terms(tuples, values, n)))
    if numeric:
        extra.append(("integers", numeric_terms(numeric, int_values, values, n)))
    if rare:
        extra.append(("rare", rare_terms(rare, fields, values, n)))
    multi_rng = random.Random(f"ctr-multi-hot-data-{a.seed}")
    multi_lines = []
    for m, spec in enumerate(multi_specs):
        lines = draw_multi_hot(multi_rng, spec, n)
        multi_lines.append(lines)
        extra.append((f"M{m + 1}", multi_hot_terms(spec, lines, values, n)))
    for name, terms in extra:
        components[name] = logit_sd(terms)
        logits = [z + t for z, t in zip(logits, terms)]
    if extra:
        components["all"] = logit_sd(logits)
    bias = calibrate_bias(logits[:a.train_examples], a.ctr)
    probabilities = [sigmoid(z + bias) for z in logits]
    labels = [1 if data_rng.random() < p else 0 for p in probabilities]

    os.makedirs(a.out_dir, exist_ok=True)
    suffix = ".gz" if a.gzip else ""
    splits = (("train.txt", 0, a.train_examples), ("test.txt", a.train_examples, n))
    if a.multi_hot:
        for name, begin, end in splits:
            write_ffm(os.path.join(a.out_dir, name + suffix), labels, int_values, values,
                      multi_lines, [s["weighted"] for s in multi_specs], begin, end, salt, a.gzip)
    else:
        cat_text = [hex_strings(column, i, salt) for i, column in enumerate(values)]
        label_text = [str(y) for y in labels]
        for name, begin, end in splits:
            columns = [label_text[begin:end]] + [c[begin:end] for c in int_text] + \
                      [c[begin:end] for c in cat_text]
            write_lines(os.path.join(a.out_dir, name + suffix), columns, a.gzip)
    write_s = time.time() - start

    test_p = probabilities[a.train_examples:]
    test_y = labels[a.train_examples:]
    test_ctr = sum(test_y) / len(test_y)
    train_ctr = sum(labels[:a.train_examples]) / a.train_examples
    entropy = -(test_ctr * math.log(test_ctr) + (1 - test_ctr) * math.log(1 - test_ctr)) \
        if 0 < test_ctr < 1 else 0.0
    lr = None
    if a.lr_epochs:
        lr_start = time.time()
        if a.lr_stdlib:
            feats = lr_features(int_values, values, multi_lines, a.train_examples, n)
            lr_p = fit_lr_stdlib(feats, labels, a.train_examples, a.lr_epochs, a.seed)
            how = "stdlib, per example"
        else:
            lr_p, how = fit_lr(int_values, values, multi_lines, labels, a.train_examples,
                               a.lr_epochs, a.seed)
        lr = {"test_auc": exact_auc(lr_p, test_y), "test_log_loss": log_loss(lr_p, test_y),
              "epochs": a.lr_epochs, "optimizer": f"adagrad {LR_LEARNING_RATE}",
              "implementation": how, "seconds": round(time.time() - lr_start, 1)}
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
    if not a.linear or a.multi_hot:
        # New keys only where the problem is new: --linear's problem.json
        # stays as it was.
        problem["problem"] = problem_kind
        problem["format"] = "libffm" if a.multi_hot else "criteo"
        problem["logit_sd"] = {k: round(v, 4) for k, v in components.items()}
        problem["planted"] = {
            "tuples": [{"fields": [f"C{i + 1}" for i in t["fields"]],
                        "weighted_tuples": len(t["table"])} for t in tuples],
            "integers": [{"kind": e["kind"], "feature": f"I{e['feature'] + 1}",
                          **({"field": f"C{e['field'] + 1}"} if e["kind"] == "slope" else {}),
                          **{k: round(e[k], 4) for k in ("center", "width", "threshold",
                                                          "amplitude") if k in e}}
                         for e in numeric],
            "rare_pairs": [[f"C{i + 1}" for i in r["fields"]] for r in rare],
        }
        problem["multi_hot"] = [
            {"name": f"M{m + 1}", "ffm_field": FFM_FIRST_MULTI_HOT + m, "vocab": s["vocab"],
             "zipf_s": round(s["zipf_s"], 4), "weighted": s["weighted"],
             "weighted_ids": len(s["theta"]),
             "interacts_with": f"C{s['field'] + 1}" if s["field"] is not None else None,
             "mean_ids": round(sum(len(ids) for ids, _ in lines) / n, 2)}
            for m, (s, lines) in enumerate(zip(multi_specs, multi_lines))]
    if lr is not None:
        problem["lr_test_auc"] = lr["test_auc"]
        problem["lr_test_log_loss"] = lr["test_log_loss"]
        problem["lr"] = lr
    with open(os.path.join(a.out_dir, "problem.json"), "w") as out:
        json.dump(problem, out, indent=1)
        out.write("\n")
    layout = "libffm" if a.multi_hot else "Criteo's layout"
    print(f"wrote {a.out_dir}/train.txt{suffix} ({a.train_examples} lines, CTR {train_ctr:.4f}) "
          f"and {a.out_dir}/test.txt{suffix} ({a.test_examples} lines), {layout}, problem "
          f"'{problem_kind}', in {write_s:.1f} s")
    print(f"test CTR {test_ctr:.4f}; Bayes-optimal test AUC {problem['bayes_test_auc']:.4f}, "
          f"log-loss {problem['bayes_test_log_loss']:.4f} (a constant predictor: {entropy:.4f})")
    if lr is not None:
        print(f"logistic regression ({lr['implementation']}, {a.lr_epochs} epochs, "
              f"{lr['seconds']} s): test AUC {lr['test_auc']:.4f}, "
              f"log-loss {lr['test_log_loss']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
