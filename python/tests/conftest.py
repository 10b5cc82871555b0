"""Fixtures shared by the Python tests.

bin_dir: the executables' folder: PST_BIN_DIR, else the repository's
build/bin, else the installed package's bin/ (set as PST_BIN_DIR for the
whole session, so pstrain._paths and run_local.sh find the same ones).
mnist_dir: MNIST_DIR, skipping the test when it does not hold MNIST.
tmp_run_dir: a fresh run folder under pytest's tmp_path.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MNIST_FILES = ("train-images-idx3-ubyte", "t10k-images-idx3-ubyte")


def _find_bin_dir():
    if os.environ.get("PST_BIN_DIR"):
        return Path(os.environ["PST_BIN_DIR"])
    for candidate in (REPO / "build" / "bin", Path(__import__("pstrain").__file__).parent / "bin"):
        if (candidate / "chief").exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def bin_dir():
    found = _find_bin_dir()
    if found is None or not (found / "chief").exists():
        pytest.skip("no pstrain executables: set PST_BIN_DIR or build (scripts/build.sh)")
    os.environ["PST_BIN_DIR"] = str(found.resolve())
    return found.resolve()


@pytest.fixture(scope="session")
def mnist_dir():
    folder = os.environ.get("MNIST_DIR")
    if not folder or not any((Path(folder) / (name + ext)).exists()
                             for name in MNIST_FILES for ext in ("", ".gz")):
        pytest.skip("MNIST_DIR does not hold MNIST (scripts/get_mnist.sh DIR)")
    return Path(folder)


@pytest.fixture
def tmp_run_dir(tmp_path):
    return tmp_path / "run"


@pytest.fixture(scope="session")
def csv_problem(tmp_path_factory):
    """A small separable problem as CSV (3 classes, 8 features): the flags
    that train on it."""
    import numpy as np

    folder = tmp_path_factory.mktemp("csv")
    rng = np.random.default_rng(7)
    centres = rng.normal(0, 3, size=(3, 8))
    for name, rows in (("train", 600), ("test", 150)):
        labels = rng.integers(0, 3, size=rows)
        features = centres[labels] + rng.normal(0, 1, size=(rows, 8))
        lines = [",".join([f"f{i}" for i in range(8)] + ["label"])]
        lines += [",".join(f"{v:.5f}" for v in x) + f",{y}" for x, y in zip(features, labels)]
        (folder / f"{name}.csv").write_text("\n".join(lines) + "\n")
    return {"dataset": "csv", "train_file": str(folder / "train.csv"),
            "test_file": str(folder / "test.csv"), "label_column": -1, "normalize": True}
