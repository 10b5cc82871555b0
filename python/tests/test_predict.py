"""pstrain.load(...).predict in process against the predict executable, on
the same model.bin and examples: the probabilities must be the same bits.
Each model is trained for a few seconds on a 1-ps, 1-worker local cluster
started with the packaged run_local.sh."""

import gzip
import os
from pathlib import Path

import numpy as np
import pytest

import pstrain
from pst_train import REPO, assert_bit_identical, predict_executable, run_script, train

MNIST_DIR = Path(os.environ.get("MNIST_DIR", REPO.parent / "shared" / "data" / "mnist"))


def read_idx_images(path: Path) -> np.ndarray:
    """MNIST test images as the idx reader gives them: N x 28 x 28 x 1, x / 255."""
    data = gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()
    n, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    pixels = np.frombuffer(data, np.uint8, offset=16).reshape(n, rows, cols, 1)
    return pixels.astype(np.float32) / np.float32(255)


@pytest.fixture(scope="module")
def mnist():
    images = [MNIST_DIR / name for name in ("t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte")]
    found = [p for p in images if p.exists()]
    if not found:
        pytest.skip(f"no MNIST in {MNIST_DIR} (set MNIST_DIR; scripts/get_mnist.sh DIR fetches it)")
    return read_idx_images(found[0])


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("predict")


@pytest.mark.parametrize("model_name,steps", [("mlp_relu", 60), ("cnn", 10)])
def test_mnist_model_matches_the_executable(work, mnist, model_name, steps):
    model_file = train(work / model_name, f"--model={model_name}", f"--train_steps={steps}",
                       f"--data_dir={MNIST_DIR}")
    expected, report = predict_executable(model_file, work, "--dataset=mnist",
                                          f"--data_dir={MNIST_DIR}")
    model = pstrain.load(model_file)
    assert f"Model: {model.description}\n" in report
    assert model.input_shape == (28, 28, 1) and model.num_classes == 10
    assert not model.is_click_model
    assert_bit_identical(model.predict(mnist), expected)  # N x H x W x C
    assert_bit_identical(model.predict(mnist.reshape(len(mnist), -1)), expected)  # N x D


@pytest.fixture(scope="module")
def csv_model(work):
    data = work / "csv-data"
    run_script(str(REPO / "examples" / "make_csv_problem.py"), str(data), "--features=8",
               "--classes=3", "--train=2000", "--test=1500")
    flags = ("--dataset=csv", f"--train_file={data / 'train.csv'}",
             f"--test_file={data / 'test.csv'}", "--label_column=-1")
    model_file = train(work / "csv", *flags, "--normalize", "--model=mlp_relu",
                       "--train_steps=100")
    return model_file, data / "test.csv", flags


def test_csv_model_with_standardization_matches_the_executable(work, csv_model):
    model_file, test_csv, flags = csv_model
    expected, _ = predict_executable(model_file, work, *flags)
    table = np.loadtxt(test_csv, delimiter=",", skiprows=1, dtype=np.float32)
    features = np.ascontiguousarray(table[:, :-1])
    model = pstrain.load(model_file)
    assert model.input_shape == (8,) and model.num_classes == 3
    got = model.predict(features)
    assert_bit_identical(got, expected)
    # Standardization works on a copy: the caller's array is left as it was.
    assert np.array_equal(features, np.ascontiguousarray(table[:, :-1]))
    # Another dtype and a strided view are converted, to the same result.
    assert_bit_identical(model.predict(features.astype(np.float64)), expected)
    assert_bit_identical(model.predict(table[:, :-1]), expected)


def test_click_model_lines_and_file_match_the_executable(work):
    data = work / "ctr-data"
    run_script(str(REPO / "examples" / "make_ctr_problem.py"), str(data),
               "--train_examples=4000", "--test_examples=1500", "--lr_epochs=0")
    test_file = data / "test.txt"
    model_file = train(work / "ctr", "--dataset=criteo", f"--train_file={data / 'train.txt'}",
                       f"--test_file={test_file}", "--model=deepfm", "--embedding_rows=20000",
                       "--train_steps=60")
    expected, report = predict_executable(model_file, work, "--dataset=criteo",
                                          f"--test_file={test_file}")
    model = pstrain.load(model_file)
    assert model.is_click_model and model.num_classes == 2
    assert f"Model: {model.description}\n" in report
    lines = test_file.read_text().splitlines()
    assert_bit_identical(model.predict(lines), expected)
    assert_bit_identical(model.predict_file(test_file), expected)
    assert_bit_identical(model.predict(lines[:7], format="criteo"), expected[:7])
    with pytest.raises(TypeError, match="click model"):
        model.predict(np.zeros((2, 13), np.float32))


def test_a_shape_that_does_not_fit_names_both(csv_model):
    model = pstrain.load(csv_model[0])
    with pytest.raises(ValueError, match=r"\(4, 7\).*\(N, 8\)"):
        model.predict(np.zeros((4, 7), np.float32))
    with pytest.raises(TypeError, match="no click model"):
        model.predict(["0\t1\t2"])
    with pytest.raises(TypeError, match="real numbers"):
        model.predict(np.array([["a"] * 8]))


def test_the_binding_reads_only_contiguous_float32(csv_model):
    # No silent copy in C++: model.py converts, the binding refuses the rest.
    native = pstrain.load(csv_model[0])._native
    assert native.predict_dense(np.zeros((3, 8), np.float32)).shape == (3, 3)
    with pytest.raises(TypeError):
        native.predict_dense(np.zeros((3, 16), np.float32)[:, ::2])
    with pytest.raises(TypeError):
        native.predict_dense(np.zeros((3, 8), np.float64))
    # The C++ check, without model.py's: InvalidArgument is a ValueError.
    with pytest.raises(ValueError, match="do not fit"):
        native.predict_dense(np.zeros((3, 9), np.float32))


def test_missing_and_foreign_files_are_python_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.bin"):
        pstrain.load(tmp_path / "nothing.bin")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a model file at all" * 10)
    with pytest.raises(ValueError):
        pstrain.load(junk)
