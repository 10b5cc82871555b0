"""Runs an exported model.onnx with ONNX Runtime on a test split and compares
its class probabilities with the ones `predict --output` wrote.

The test split is read here, independently of pstrain's readers, as the
export documents its input: MNIST's IDX and CIFAR-style records as pixels / 255
in HWC order, CSV features as written (the graph standardizes them itself);
a click log in Criteo's layout as the export documents a click model's
inputs: "features", log(1 + max(x, 0)) of the 13 integers (empty: 0), and
"keys", each categorical value's key as data/criteo_reader.h defines it
(FNV-1a 64 of the field byte and the string, then splitmix64's finalizer),
and for a model of 39 fields (the default) each integer's bucket's key after
them (the value floor(4 log(1 + x)) as a decimal string, "neg" for x < 0,
"" when empty).

A click log in Criteo's layout read through a feature file (docs/SPARSE.md,
"Feature columns"; data/feature_columns.h) gives "features", the `numeric`
log1p columns in file order, and "keys", each `categorical` column's key in
file order: its raw key r (the criteo key above of its source C<j>) in table
T becomes offset_T + TableKey(T, r) mod buckets_T, TableKey being FNV-1a 64
over T's bytes, the byte 0xff and r's 8 little-endian bytes, then
splitmix64's finalizer; the hashed tables lie one after the other in the
order of their first column, offset_T their buckets before T. Only those
columns are known here (hashed tables; no bucketize, multi_hot or dynamic
tables: the checker refuses them), enough for a model whose fields have
different dims.

usage: onnx_predictions.py MODEL.onnx PREDICTIONS.csv FORMAT ARGS...
  FORMAT ARGS: idx DIR (raw or .gz) | records FILE H W C | csv FILE | criteo FILE
               | criteo-features FILE FEATURES
Prints "examples N max_abs_diff D same_class K" and exits 1 when a
probability differs by more than --tolerance (1e-5) or the checker fails.
"""
import argparse
import gzip
import os
import sys

import numpy as np
import onnx
import onnxruntime


def read_idx(directory):
    path = os.path.join(directory, "t10k-images-idx3-ubyte")
    opener = gzip.open if os.path.exists(path + ".gz") else open
    with opener(path + ".gz" if opener is gzip.open else path, "rb") as f:
        data = f.read()
    count, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    pixels = np.frombuffer(data, np.uint8, count * rows * cols, 16)
    return pixels.reshape(count, rows * cols).astype(np.float32) / np.float32(255)


def read_records(path, height, width, channels):
    record = 1 + height * width * channels
    data = np.fromfile(path, np.uint8).reshape(-1, record)
    chw = data[:, 1:].reshape(-1, channels, height, width)
    hwc = chw.transpose(0, 2, 3, 1).reshape(len(data), -1)
    return hwc.astype(np.float32) / np.float32(255)


def read_csv(path):
    # The header line names the columns; the label is the last one.
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    return table[:, :-1].astype(np.float32)


MASK = (1 << 64) - 1


def fnv1a_splitmix(data):
    """FNV-1a 64 of the bytes `data`, then splitmix64's finalizer (unsigned)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & MASK
    h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & MASK
    return h ^ (h >> 31)


def criteo_key(field, value):
    h = fnv1a_splitmix(bytes([field]) + value.encode())
    return h - (1 << 64) if h >= 1 << 63 else h


def table_key(table, raw):
    """data/feature_columns.h's TableKey (unsigned)."""
    return fnv1a_splitmix(table.encode() + b"\xff" + (raw & MASK).to_bytes(8, "little"))


def integer_bucket(text):
    if not text:
        return ""
    x = int(text)
    return "neg" if x < 0 else str(int(np.floor(4 * np.log1p(float(x)))))


def read_criteo(path, fields):
    features, keys = [], []
    with open(path) as f:
        for line in f:
            columns = line.rstrip("\n").split("\t")
            if len(columns) != 40:
                continue
            features.append([np.log1p(max(int(c), 0)) if c else 0.0 for c in columns[1:14]])
            row = [criteo_key(j, columns[14 + j]) for j in range(26)]
            row += [criteo_key(26 + j, integer_bucket(columns[1 + j])) for j in range(fields - 26)]
            keys.append(row)
    return {"features": np.array(features, np.float32), "keys": np.array(keys, np.int64)}


def read_feature_file(path):
    """The log1p numerics' integer columns (0-based I index) in file order, and
    the categorical columns as (0-based C index, table offset, table buckets,
    table name) in file order."""
    dense, fields, tables = [], [], {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = line.split("#")[0].split()
            if not words or words[0] == "dim":
                continue
            name, kind, source, *options = words
            where = f"{path}:{number}: column {name}"
            if kind == "numeric" and source[0] == "I" and options in ([], ["log1p"]):
                dense.append(int(source[1:]) - 1)
                continue
            option = dict(o.split("=", 1) for o in options)
            if kind != "categorical" or source[0] != "C" or "buckets" not in option or \
                    not set(option) <= {"buckets", "table", "dim"}:
                raise ValueError(f"{where}: not a column this checker knows")
            table = option.get("table", name)
            if table not in tables:
                tables[table] = (sum(rows for _, rows in tables.values()), int(option["buckets"]))
            offset, rows = tables[table]
            fields.append((int(source[1:]) - 1, offset, rows, table))
    return dense, fields


def read_criteo_features(path, feature_file):
    dense, fields = read_feature_file(feature_file)
    features, keys = [], []
    with open(path) as f:
        for line in f:
            columns = line.rstrip("\n").split("\t")
            if len(columns) != 40:
                continue
            integers = columns[1:14]
            features.append([np.log1p(max(int(integers[i]), 0)) if integers[i] else 0.0
                             for i in dense])
            keys.append([offset + table_key(table, criteo_key(j, columns[14 + j])) % rows
                         for j, offset, rows, table in fields])
    inputs = {"keys": np.array(keys, np.int64)}
    if dense:  # a graph without dense features has no "features" input
        inputs["features"] = np.array(features, np.float32)
    return inputs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("predictions")
    parser.add_argument("format", choices=["idx", "records", "csv", "criteo", "criteo-features"])
    parser.add_argument("args", nargs="+")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    a = parser.parse_args()

    model = onnx.load(a.model)
    onnx.checker.check_model(model, full_check=True)
    if a.format == "idx":
        inputs = {"features": read_idx(a.args[0])}
    elif a.format == "records":
        inputs = {"features": read_records(a.args[0], *(int(x) for x in a.args[1:4]))}
    elif a.format == "criteo":
        (keys,) = [i for i in model.graph.input if i.name == "keys"]
        inputs = read_criteo(a.args[0], keys.type.tensor_type.shape.dim[1].dim_value)
    elif a.format == "criteo-features":
        inputs = read_criteo_features(a.args[0], a.args[1])
    else:
        inputs = {"features": read_csv(a.args[0])}

    session = onnxruntime.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    (output,) = session.run(["probabilities"], inputs)
    expected = np.loadtxt(a.predictions, delimiter=",", skiprows=1, dtype=np.float64)
    expected = expected[:, 2:]
    if output.shape != expected.shape:
        print(f"shape {output.shape} from ONNX Runtime, {expected.shape} from predict")
        return 1
    diff = float(np.max(np.abs(output - expected)))
    same = int(np.sum(np.argmax(output, 1) == np.argmax(expected, 1)))
    print(f"examples {len(output)} max_abs_diff {diff:.3g} same_class {same}")
    return 0 if diff <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
