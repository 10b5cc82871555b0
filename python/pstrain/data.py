"""numpy arrays as pstrain's records files (--dataset=records).

A record is the label (one byte) followed by the example's values
channel-major (all of channel 0 row by row, then channel 1, ...), as
CIFAR-10's binary files and data/records_reader.h define it: uint8 values
(pixels, scaled to [0,1] on reading) or, with --record_dtype=float32,
little-endian float32 values taken exactly as written.
"""

from pathlib import Path
from typing import Dict, Union

import numpy as np

MAX_CLASSES = 256  # one label byte


def write_records(X, y, path: Union[str, Path], num_classes: int = 0) -> Dict[str, object]:
    """Writes examples X (N x D features, or N x H x W x C images) with
    integer labels y (N, in [0, 256)) to PATH. uint8 X is written as bytes
    (read back as X / 255), any other X as float32 (read back exactly; NaN
    and infinities are refused here, as the reader refuses them).

    Returns the flags that train on it, for LocalCluster.train(**flags) with
    train_file= / test_file= beside them: dataset, input_shape (D or H,W,C),
    record_dtype and num_classes (NUM_CLASSES, else the largest label + 1;
    pass the training set's to both files).
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim not in (2, 4):
        raise ValueError(f"write_records: X must be N x D or N x H x W x C, not shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"write_records: y must hold one label per example: shape "
                         f"({X.shape[0]},), not {y.shape}")
    if X.shape[0] == 0:
        raise ValueError("write_records: no examples (the reader refuses an empty file)")
    if not np.issubdtype(y.dtype, np.integer):
        if not np.all(np.equal(np.mod(y, 1), 0)):
            raise ValueError("write_records: labels must be whole numbers")
    if y.min() < 0 or y.max() >= MAX_CLASSES:
        raise ValueError(f"write_records: labels must lie in [0, {MAX_CLASSES}) "
                         f"(one byte), not [{y.min()}, {y.max()}]")
    if X.dtype == np.uint8:
        values, dtype = X, "uint8"
    else:
        with np.errstate(over="ignore"):  # beyond float32's range: refused just below
            values, dtype = X.astype("<f4"), "float32"
        if not np.all(np.isfinite(values)):
            bad = int(np.argwhere(~np.isfinite(values.reshape(len(values), -1)))[0][0])
            raise ValueError(f"write_records: example {bad} holds a value that is not a "
                             "finite float32 (NaN, an infinity, or beyond float32's range)")
    if X.ndim == 4:  # NHWC in memory, channel-major (NCHW) in the file
        values = values.transpose(0, 3, 1, 2)
        shape = ",".join(str(d) for d in X.shape[1:])
    else:
        shape = str(X.shape[1])
    n = X.shape[0]
    record = np.empty((n, 1 + values[0].nbytes), dtype=np.uint8)
    record[:, 0] = y.astype(np.uint8)
    record[:, 1:] = np.ascontiguousarray(values).reshape(n, -1).view(np.uint8)
    Path(path).write_bytes(record.tobytes())
    return {"dataset": "records", "input_shape": shape, "record_dtype": dtype,
            "num_classes": int(num_classes or int(y.max()) + 1)}
