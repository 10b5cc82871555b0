"""write_records: the bytes of the documented records format, and the same
arrays read back by the executables' records reader."""

import struct
import subprocess

import numpy as np
import pytest

from pstrain.cluster import LocalCluster
from pstrain.data import write_records
from pstrain.run import RunFailed


def test_float_rows_are_label_then_little_endian_float32(tmp_path):
    X = np.array([[1.5, -2.0, 1e-30], [0.1, 3.0, -0.0]])
    flags = write_records(X, [2, 0], tmp_path / "f.bin")
    assert flags == {"dataset": "records", "input_shape": "3", "record_dtype": "float32",
                     "num_classes": 3}
    data = (tmp_path / "f.bin").read_bytes()
    assert len(data) == 2 * (1 + 3 * 4)
    assert data[0] == 2 and data[13] == 0
    assert struct.unpack("<3f", data[1:13]) == tuple(np.float32(X[0]))
    assert struct.unpack("<3f", data[14:26]) == tuple(np.float32(X[1]))


def test_uint8_images_are_written_channel_major(tmp_path):
    X = (np.arange(6, dtype=np.uint8) * 10).reshape(1, 2, 1, 3)  # N, H=2, W=1, C=3
    flags = write_records(X, [1], tmp_path / "i.bin", num_classes=10)
    assert flags["input_shape"] == "2,1,3" and flags["record_dtype"] == "uint8"
    assert flags["num_classes"] == 10
    # channel 0 (pixels 0, 30), channel 1 (10, 40), channel 2 (20, 50)
    assert list((tmp_path / "i.bin").read_bytes()) == [1, 0, 30, 10, 40, 20, 50]


@pytest.mark.parametrize("X,y,message", [
    (np.zeros((2, 3)), [0], "one label per example"),
    (np.zeros((2, 3)), [0, 256], r"labels must lie in \[0, 256\)"),
    (np.zeros((2, 3)), [0, -1], r"labels must lie"),
    (np.zeros((2, 3)), [0.5, 1], "whole numbers"),
    (np.zeros(3), [0, 1, 2], "N x D"),
    (np.array([[1.0, np.nan], [2.0, 3.0]]), [0, 1], "example 0 holds a value that is not"),
    (np.array([[1.0, 2.0], [1e39, 3.0]]), [0, 1], "example 1"),
])
def test_bad_input_is_refused(tmp_path, X, y, message):
    with pytest.raises(ValueError, match=message):
        write_records(X, y, tmp_path / "bad.bin")


def read_tensor_file(path):
    """{name: array} of a model.bin (docs/FORMATS.md, "Tensor files")."""
    data = path.read_bytes()
    assert data[:8] == b"PSTENSOR"
    count, at, out = struct.unpack_from("<I", data, 12)[0], 16, {}
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, at)
        name = data[at + 4:at + 4 + length].decode()
        at += 4 + length
        dtype, rank = struct.unpack_from("<BI", data, at)
        at += 5
        dims = struct.unpack_from(f"<{rank}q", data, at)
        at += 8 * rank
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        out[name] = np.frombuffer(data[at:at + size], "<f4" if dtype == 0 else "<i8").reshape(dims)
        at += size
    return out


@pytest.fixture
def records_bin_dir(bin_dir):
    help_text = subprocess.run([str(bin_dir / "chief"), "--help"], capture_output=True,
                               text=True, check=False).stdout
    if "--record_dtype" not in help_text:
        pytest.skip(f"{bin_dir}/chief predates --record_dtype: rebuild")
    return bin_dir


def train_on(train, test, flags, run_dir, **more):
    return LocalCluster(num_ps=1, num_workers=1).train(
        model="mlp", train_file=train, test_file=test, train_steps=60, learning_rate=0.05,
        run_dir=run_dir,
        **flags, **more)


@pytest.mark.parametrize("kind", ["float32 features", "uint8 images"])
def test_the_records_reader_reads_what_was_written(records_bin_dir, tmp_path, kind):
    rng = np.random.default_rng(5)
    if kind == "uint8 images":
        X = rng.integers(0, 256, size=(300, 4, 3, 2), dtype=np.uint8)
        X[..., 1] //= 4  # channels differ, so a channel mix-up shows
        expected = X.reshape(len(X), -1).astype(np.float64) / 255
    else:
        X = rng.normal(size=(300, 5)) * np.array([1e-3, 1, 10, 1e3, 7]) + np.arange(5)
        expected = X.astype(np.float32).astype(np.float64)
    # Labels the features decide, so that 60 steps learn something (the
    # chief refuses a run whose test loss ends above the untrained model's).
    features = expected.reshape(len(X), -1)
    y = np.argmax((features - features.mean(0)) / features.std(0) @ rng.normal(size=(
        features.shape[1], 3)), axis=1)
    flags = write_records(X, y, tmp_path / "train.bin")
    write_records(X[:50], y[:50], tmp_path / "test.bin", num_classes=flags["num_classes"])
    run = train_on(tmp_path / "train.bin", tmp_path / "test.bin", flags, tmp_path / "run",
                   normalize=True)
    try:
        assert run.wait(progress=False) == 0
    finally:
        run.stop()
    # --normalize keeps the training set's per-feature mean (HWC order) in
    # model.bin: the values as the reader read them.
    model = read_tensor_file(run.model_path)
    np.testing.assert_allclose(model["@model/standardize_mean"], expected.mean(axis=0),
                               rtol=1e-5, atol=1e-6)
    assert list(model["@model/input_shape"]) == [int(d) for d in flags["input_shape"].split(",")]
    assert "300 training" in run.logs("chief")


def test_a_truncated_file_fails_the_run_naming_it(records_bin_dir, tmp_path):
    flags = write_records(np.ones((10, 4)), np.arange(10) % 2, tmp_path / "train.bin")
    (tmp_path / "train.bin").write_bytes((tmp_path / "train.bin").read_bytes()[:-3])
    with pytest.raises(RunFailed, match=r"train\.bin: 167 bytes is not a whole number of "
                                        r"17-byte records"):
        train_on(tmp_path / "train.bin", tmp_path / "train.bin", flags,
                 tmp_path / "run").wait(progress=False)


def test_a_non_finite_value_fails_the_run_naming_the_record(records_bin_dir, tmp_path):
    flags = write_records(np.ones((3, 2)), [0, 1, 0], tmp_path / "train.bin")
    data = bytearray((tmp_path / "train.bin").read_bytes())
    data[9 + 1 + 4:9 + 1 + 8] = struct.pack("<f", float("inf"))  # record 1, value 1
    (tmp_path / "train.bin").write_bytes(bytes(data))
    with pytest.raises(RunFailed, match=r"train\.bin: record 1: value 1 is not a finite"):
        train_on(tmp_path / "train.bin", tmp_path / "train.bin", flags,
                 tmp_path / "run").wait(progress=False)
