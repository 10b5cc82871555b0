"""What the prediction tests share: a tiny cluster trained with the packaged
run_local.sh, and the predict executable's probabilities read back."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

from pstrain import _paths

REPO = Path(__file__).resolve().parents[2]
PACKAGE_BIN = _paths.PACKAGE_DIR / "bin"  # the wheel's, whatever PST_BIN_DIR says
TRAIN_TIMEOUT_S = 300


def _stop_group(process):
    """Stops PROCESS and what it started (it leads its own session)."""
    if process.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def train(run_dir: Path, *task_flags: str) -> Path:
    """Trains on a 1-ps, 1-worker local cluster; returns RUN_DIR/model.bin."""
    command = [str(_paths.scripts_dir() / "run_local.sh"), "--num_ps=1", "--num_workers=1",
               "--mode=async", f"--run_dir={run_dir}", "--quiet", *task_flags]
    env = dict(os.environ, PST_BIN_DIR=str(PACKAGE_BIN))
    log = run_dir.parent / (run_dir.name + ".launcher.log")
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   cwd=run_dir.parent, start_new_session=True)
        try:
            rc = process.wait(timeout=TRAIN_TIMEOUT_S)
        finally:
            _stop_group(process)
    model = run_dir / "model.bin"
    assert rc == 0 and model.exists(), f"training failed (exit {rc}):\n{log.read_text()[-3000:]}"
    return model


def predict_executable(model: Path, out_dir: Path, *data_flags: str):
    """The predict executable's probabilities (float32, N x classes) and its
    report's text."""
    output = out_dir / (model.parent.name + ".predictions.csv")
    result = subprocess.run(
        [str(PACKAGE_BIN / "predict"), f"--model_file={model}", f"--output={output}",
         *data_flags], capture_output=True, text=True, cwd=out_dir, timeout=TRAIN_TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    # label,predicted,p0,p1,...: 9 significant digits, float32 exactly.
    table = np.loadtxt(output, delimiter=",", skiprows=1, dtype=np.float32, ndmin=2)
    return table[:, 2:], result.stdout


def assert_bit_identical(got: np.ndarray, expected: np.ndarray):
    assert got.dtype == np.float32 and got.shape == expected.shape, (got.shape, expected.shape)
    differ = np.flatnonzero(got.view(np.uint32) != expected.view(np.uint32))
    assert differ.size == 0, (f"{differ.size} of {got.size} probabilities differ, first at "
                              f"{differ[0]}: {got.flat[differ[0]]!r} != {expected.flat[differ[0]]!r}")


def run_script(*args: str):
    subprocess.run([sys.executable, *args], check=True, capture_output=True, timeout=120)
