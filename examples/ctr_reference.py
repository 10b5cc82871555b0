#!/usr/bin/env python3
"""A plain reference click model in TensorFlow/Keras (LR, DeepFM or DCN-v2)
on a log written by examples/make_ctr_problem.py, to know what an ordinary
implementation reaches on it: pstrain's models should come near.

Needs TensorFlow and numpy (not pstrain's dependencies): e.g.
  python3 -m venv /work/venv-ref && /work/venv-ref/bin/pip install tensorflow-cpu numpy

Input: DIR/train.txt and DIR/test.txt (or .gz), in Criteo's layout or, when
DIR/problem.json says "format": "libffm" (make_ctr_problem.py --multi_hot),
in libffm (field:id:value). Preprocessing as pstrain's criteo reader:
  - integers -> log(1 + max(x, 0)), empty as 0: 13 dense inputs, fed as they
    are (not standardized); libffm fields 0..12 carry that value already;
  - Criteo's layout: unless --no_integer_fields, each integer also as a
    categorical field (26 + j), its value the bucket floor(4 log(1 + x))
    ("neg" below 0, "" when empty), as pstrain's --criteo_integer_fields;
  - categorical field f and its value (an empty one too) -> one field-aware
    key; keys are numbered on the training set (a collision-free table, as
    a hash table with enough rows; --rows=N hashes "f:value" with crc32
    into N buckets instead); a test key unseen in training gets its field's
    "unknown" row (a row never trained: its initial value);
  - multi-hot fields (libffm fields >= 39): every id a key; the field's
    vector is the weighted mean of its ids' rows (combiner "mean", weights
    from the file), as is its wide weight.
Models (one logit, sigmoid cross-entropy, mean over the batch):
  lr      wide: a weight per key, summed (multi-hot: weighted mean), plus a
          dense layer on the 13 dense inputs, plus a bias;
  deepfm  lr + FM: 0.5 * sum_k [(sum_f e_f,k)^2 - sum_f e_f,k^2] over the
          field vectors e_f (dim --dim, 16) + MLP over concat(e_f..., dense):
          --hidden (256,128) ReLU, then 1 (Guo et al. 2017; the FM and the
          MLP share the embeddings);
  dcn_v2  x0 = concat(e_f..., dense); --cross_layers (3) full-rank cross
          layers x_{l+1} = x0 * (W_l x_l + b_l) + x_l; then the MLP
          --hidden, then 1 (stacked; Wang et al. 2021).
Tables start uniform in [-0.05, 0.05] (pstrain's init_scale), dense kernels
glorot uniform. Adam (--learning_rate 1e-3, Keras's: dense moments, every
row of a table decays each step, not lazy), --batch_size 512, shuffled each
epoch (seeded), no regularization unless --l2 (on the rows in the batch).

After each epoch: the exact test AUC (ranks, ties at their average rank) and
log-loss (p clipped to [1e-7, 1 - 1e-7]) on the whole test set. Prints one
line per epoch on stderr and, at the end, one JSON line on stdout: the
curve, the best epoch (by test AUC: the figure is an upper bound on what
early stopping on a validation set would give), its AUC and log-loss, and
problem.json's Bayes and LR figures when there.

usage: examples/ctr_reference.py DIR [--model deepfm|dcn_v2|lr] [--epochs 3]
       [--batch_size 512] [--learning_rate 1e-3] [--dim 16]
       [--hidden 256,128] [--cross_layers 3] [--rows 0] [--l2 0]
       [--seed 1] [--threads 0] [--max_train N] [--no_integer_fields]
"""
import argparse
import gzip
import json
import math
import os
import sys
import time
import zlib

NUM_INTEGER = 13
NUM_CATEGORICAL = 26
FIRST_MULTI_HOT = NUM_INTEGER + NUM_CATEGORICAL
INIT_SCALE = 0.05


def open_log(path):
    for candidate in (path, path + ".gz"):
        if os.path.exists(candidate):
            with open(candidate, "rb") as f:
                magic = f.read(2)
            if magic == b"\x1f\x8b":
                return gzip.open(candidate, "rt")
            return open(candidate)
    sys.exit(f"{path}: no such file (nor {path}.gz)")


class Keys:
    """Field-aware keys -> rows. Row 0 is padding; each field has an
    "unknown" row for test keys unseen in training."""

    def __init__(self, rows, num_fields):
        self.rows = rows
        self.ids = {}
        self.unknown = {}
        self.size = 1
        if rows:
            self.size = 1 + rows + num_fields
        self.grow = True

    def unknown_row(self, field):
        i = self.unknown.get(field)
        if i is None:
            if self.rows:
                i = 1 + self.rows + field
            else:
                i = self.unknown[field] = self.size
                self.size += 1
        return i

    def __call__(self, field, key):
        if self.rows:
            return 1 + zlib.crc32(f"{field}:{key}".encode()) % self.rows
        i = self.ids.get((field, key))
        if i is None:
            if not self.grow:
                return self.unknown_row(field)
            i = self.ids[(field, key)] = self.size
            self.size += 1
        return i


def integer_bucket(text):
    """pstrain's CriteoIntegerBucket (data/criteo_reader.h)."""
    if not text:
        return ""
    x = int(text)
    return "neg" if x < 0 else str(math.floor(4 * math.log1p(x)))


def read_criteo(path, keys, limit, integer_fields):
    import numpy as np

    labels, dense, cats = [], [], []
    log1p = math.log1p
    with open_log(path) as lines:
        for line in lines:
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) != 1 + NUM_INTEGER + NUM_CATEGORICAL:
                continue
            labels.append(1.0 if parts[0] == "1" else 0.0)
            row = []
            for text in parts[1:1 + NUM_INTEGER]:
                x = int(text) if text else 0
                row.append(log1p(x) if x > 0 else 0.0)
            dense.append(row)
            cat = [keys(f, v) for f, v in enumerate(parts[1 + NUM_INTEGER:])]
            if integer_fields:
                cat += [keys(NUM_CATEGORICAL + j, integer_bucket(text))
                        for j, text in enumerate(parts[1:1 + NUM_INTEGER])]
            cats.append(cat)
            if limit and len(labels) >= limit:
                break
    return {"labels": np.array(labels, np.float32), "dense": np.array(dense, np.float32),
            "cats": np.array(cats, np.int64), "multi": []}


def read_ffm(path, keys, limit, num_multi):
    import numpy as np

    labels, dense, cats = [], [], []
    multi = [([], []) for _ in range(num_multi)]
    with open_log(path) as lines:
        for line in lines:
            parts = line.split()
            if not parts:
                continue
            labels.append(1.0 if parts[0] == "1" else 0.0)
            row = [0.0] * NUM_INTEGER
            cat = [0] * NUM_CATEGORICAL
            ids = [[] for _ in range(num_multi)]
            ws = [[] for _ in range(num_multi)]
            for token in parts[1:]:
                f, key, value = token.split(":")
                f = int(f)
                if f < NUM_INTEGER:
                    row[f] = float(value)
                elif f < FIRST_MULTI_HOT:
                    cat[f - NUM_INTEGER] = keys(f, key)
                else:
                    m = f - FIRST_MULTI_HOT
                    ids[m].append(keys(f, key))
                    ws[m].append(float(value))
            for f in range(NUM_CATEGORICAL):  # no entry: the empty value's key
                if cat[f] == 0:
                    cat[f] = keys(NUM_INTEGER + f, "0")
            dense.append(row)
            cats.append(cat)
            for m in range(num_multi):
                multi[m][0].append(ids[m])
                multi[m][1].append(ws[m])
            if limit and len(labels) >= limit:
                break
    padded = []
    for id_lists, w_lists in multi:
        width = max(1, max(len(x) for x in id_lists))
        ids = np.zeros((len(id_lists), width), np.int64)
        ws = np.zeros((len(id_lists), width), np.float32)
        for i, (a, b) in enumerate(zip(id_lists, w_lists)):
            ids[i, :len(a)] = a
            ws[i, :len(b)] = b
        padded.append((ids, ws))
    return {"labels": np.array(labels, np.float32), "dense": np.array(dense, np.float32),
            "cats": np.array(cats, np.int64), "multi": padded}


def exact_auc(labels, scores):
    """Mann-Whitney AUC, ties at their average rank."""
    import numpy as np

    order = np.argsort(scores, kind="mergesort")
    _, inverse, counts = np.unique(scores[order], return_inverse=True, return_counts=True)
    average_rank = np.cumsum(counts) - (counts - 1) / 2.0  # 1-based
    ranks = np.empty(len(scores))
    ranks[order] = average_rank[inverse]
    positive = labels == 1
    n1, n0 = int(positive.sum()), int((~positive).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def log_loss(labels, p):
    import numpy as np

    p = np.clip(p.astype(np.float64), 1e-7, 1 - 1e-7)
    return float(-np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p)))


def build_model(tf, args, num_rows, num_cats, num_multi, multi_widths):
    keras = tf.keras
    layers = keras.layers
    uniform = keras.initializers.RandomUniform(-INIT_SCALE, INIT_SCALE, seed=args.seed)
    reg = keras.regularizers.l2(args.l2) if args.l2 > 0 else None
    dense_in = keras.Input((NUM_INTEGER,), name="dense")
    cats_in = keras.Input((num_cats,), dtype="int64", name="cats")
    multi_in = [(keras.Input((w,), dtype="int64", name=f"multi_ids_{m}"),
                 keras.Input((w,), name=f"multi_w_{m}"))
                for m, w in zip(range(num_multi), multi_widths)]
    inputs = [dense_in, cats_in] + [t for pair in multi_in for t in pair]

    def pooled(table, ids, ws):  # weighted mean of the ids' rows: [B, 1, dim]
        rows = table(ids)
        w = layers.Reshape((-1, 1))(ws)
        total = layers.Lambda(lambda t: tf.maximum(tf.reduce_sum(t, axis=1, keepdims=True),
                                                   1e-12))(w)
        return layers.Lambda(lambda t: tf.reduce_sum(t[0] * t[1], axis=1, keepdims=True)
                             / t[2])([rows, w, total])

    wide_table = layers.Embedding(num_rows, 1, embeddings_initializer=uniform,
                                  embeddings_regularizer=reg, name="wide")
    wide_parts = [layers.Reshape((num_cats,))(wide_table(cats_in))]
    wide_parts += [layers.Reshape((1,))(pooled(wide_table, i, w)) for i, w in multi_in]
    wide_all = wide_parts[0] if len(wide_parts) == 1 else layers.Concatenate()(wide_parts)
    wide = layers.Lambda(lambda t: tf.reduce_sum(t, axis=1, keepdims=True))(wide_all)
    linear = layers.Add()([wide, layers.Dense(1, name="dense_linear")(dense_in)])
    if args.model == "lr":
        return keras.Model(inputs, layers.Reshape(())(linear))

    table = layers.Embedding(num_rows, args.dim, embeddings_initializer=uniform,
                             embeddings_regularizer=reg, name="embedding")
    fields = [table(cats_in)] + [pooled(table, i, w) for i, w in multi_in]
    e = fields[0] if len(fields) == 1 else layers.Concatenate(axis=1)(fields)  # [B, F, dim]
    num_fields = num_cats + num_multi
    x0 = layers.Concatenate()([layers.Reshape((num_fields * args.dim,))(e), dense_in])
    hidden = [int(h) for h in args.hidden.split(",") if h]
    glorot = keras.initializers.GlorotUniform(seed=args.seed)

    def mlp(x):
        for i, units in enumerate(hidden):
            x = layers.Dense(units, activation="relu", kernel_initializer=glorot,
                             name=f"mlp_{i}")(x)
        return layers.Dense(1, kernel_initializer=glorot, name="mlp_out")(x)

    if args.model == "deepfm":
        fm = layers.Lambda(lambda t: 0.5 * tf.reduce_sum(
            tf.square(tf.reduce_sum(t, axis=1)) - tf.reduce_sum(tf.square(t), axis=1),
            axis=1, keepdims=True), name="fm")(e)
        logit = layers.Add()([linear, fm, mlp(x0)])
    else:  # dcn_v2
        width = num_fields * args.dim + NUM_INTEGER
        x = x0
        for layer in range(args.cross_layers):
            wx = layers.Dense(width, kernel_initializer=glorot, name=f"cross_{layer}")(x)
            x = layers.Add()([layers.Multiply()([x0, wx]), x])
        logit = mlp(x)
    return keras.Model(inputs, layers.Reshape(())(logit))


def feeds(data):
    out = {"dense": data["dense"], "cats": data["cats"]}
    for m, (ids, ws) in enumerate(data["multi"]):
        out[f"multi_ids_{m}"] = ids
        out[f"multi_w_{m}"] = ws
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("--model", choices=("deepfm", "dcn_v2", "lr"), default="deepfm")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=512)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--hidden", default="256,128")
    parser.add_argument("--cross_layers", type=int, default=3)
    parser.add_argument("--rows", type=int, default=0,
                        help="hash buckets (0: one row per training key)")
    parser.add_argument("--l2", type=float, default=0.0,
                        help="L2 on the embedding rows of the batch (Keras regularizer)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=0, help="TensorFlow's threads (0: its own)")
    parser.add_argument("--max_train", type=int, default=0, help="read at most N training lines")
    parser.add_argument("--no_integer_fields", dest="integer_fields", action="store_false",
                        help="Criteo's layout: the 26 categorical fields alone")
    args = parser.parse_args()
    if min(args.epochs, args.batch_size, args.dim) < 1 or args.rows < 0:
        parser.error("--epochs, --batch_size and --dim must be at least 1, --rows at least 0")

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    tf.keras.utils.set_random_seed(args.seed)
    start = time.time()
    problem = {}
    problem_path = os.path.join(args.dir, "problem.json")
    if os.path.exists(problem_path):
        with open(problem_path) as f:
            problem = json.load(f)
    libffm = problem.get("format") == "libffm"
    num_multi = len(problem.get("multi_hot") or []) if libffm else 0
    keys = Keys(args.rows, NUM_CATEGORICAL + num_multi + NUM_INTEGER + 64)
    if libffm:
        train = read_ffm(os.path.join(args.dir, "train.txt"), keys, args.max_train, num_multi)
        keys.grow = False
        test = read_ffm(os.path.join(args.dir, "test.txt"), keys, 0, num_multi)
        # The test set's widths follow the training set's.
        for m, (ids, ws) in enumerate(test["multi"]):
            width = train["multi"][m][0].shape[1]
            if ids.shape[1] < width:
                pad = width - ids.shape[1]
                ids, ws = np.pad(ids, ((0, 0), (0, pad))), np.pad(ws, ((0, 0), (0, pad)))
            test["multi"][m] = (ids[:, :width], ws[:, :width])
    else:
        fields = args.integer_fields
        train = read_criteo(os.path.join(args.dir, "train.txt"), keys, args.max_train, fields)
        keys.grow = False
        test = read_criteo(os.path.join(args.dir, "test.txt"), keys, 0, fields)
    num_rows = keys.size
    read_s = time.time() - start
    print(f"ctr_reference: {len(train['labels'])} training, {len(test['labels'])} test lines, "
          f"{num_rows} table rows, read in {read_s:.1f} s", file=sys.stderr, flush=True)

    model = build_model(tf, args, num_rows, train["cats"].shape[1], num_multi,
                        [ids.shape[1] for ids, _ in train["multi"]])
    model.compile(optimizer=tf.keras.optimizers.Adam(args.learning_rate),
                  loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    train_x, test_x = feeds(train), feeds(test)
    curve = []
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        history = model.fit(train_x, train["labels"], batch_size=args.batch_size, epochs=1,
                            shuffle=True, verbose=0)
        train_s = time.time() - t0
        logits = model.predict(test_x, batch_size=8192, verbose=0).reshape(-1)
        p = 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))
        point = {"epoch": epoch, "auc": exact_auc(test["labels"], p),
                 "log_loss": log_loss(test["labels"], p),
                 "train_loss": float(history.history["loss"][-1]),
                 "seconds": round(time.time() - t0, 1), "train_seconds": round(train_s, 1)}
        curve.append(point)
        print(f"ctr_reference: {args.model} epoch {epoch}: test AUC {point['auc']:.4f}, "
              f"log-loss {point['log_loss']:.4f} (train loss {point['train_loss']:.4f}, "
              f"{point['seconds']} s)", file=sys.stderr, flush=True)
    best = max(curve, key=lambda c: c["auc"])
    result = {
        "model": args.model, "dir": os.path.abspath(args.dir),
        "train_examples": int(len(train["labels"])), "test_examples": int(len(test["labels"])),
        "test_ctr": float(test["labels"].mean()), "table_rows": num_rows,
        "format": "libffm" if libffm else "criteo",
        "best_epoch": best["epoch"], "best_auc": best["auc"], "best_log_loss": best["log_loss"],
        "curve": curve,
        "bayes_test_auc": problem.get("bayes_test_auc"),
        "lr_test_auc": problem.get("lr_test_auc"),
        "settings": {"epochs": args.epochs, "batch_size": args.batch_size,
                     "learning_rate": args.learning_rate, "optimizer": "adam (keras)",
                     "dim": args.dim, "hidden": args.hidden, "cross_layers": args.cross_layers,
                     "rows": args.rows, "l2": args.l2, "seed": args.seed},
        "tensorflow": tf.__version__,
        "seconds": round(time.time() - start, 1),
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
