"""LocalCluster and Run against the real executables, on 127.0.0.1."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pstrain.cluster import LocalCluster, attach
from pstrain.flags import UnknownFlagError
from pstrain.run import INTERRUPTED, RunFailed, read_tasks

PYTHON_DIR = Path(__file__).resolve().parents[1]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose (its parent has not reaped it yet).
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def wait_until(condition, what, seconds=60):
    """Polls CONDITION; a guard against hanging, not a timing assertion."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.1)


def kill_leftovers(pids):
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def cluster(bin_dir):
    return LocalCluster(num_ps=2, num_workers=2, mode="async")


def test_trains_and_reports_one_metrics_row_per_evaluation(cluster, csv_problem, tmp_run_dir):
    run = cluster.train(model="mlp_relu", train_steps=300, eval_every_steps=100,
                        run_dir=tmp_run_dir, **csv_problem)
    seen = set(run.tasks().values())
    try:
        assert run.wait(progress=False) == 0
    finally:
        run.stop()
    lines = (tmp_run_dir / "metrics.jsonl").read_text().splitlines()
    frame = run.metrics()
    assert len(frame) == len(lines) >= 2
    assert list(frame["step"]) == [json.loads(line)["step"] for line in lines]
    assert frame["step"].is_monotonic_increasing and frame["step"].iloc[-1] >= 300
    for column in ("step", "time", "train_loss", "test_loss", "test_accuracy", "steps_per_sec",
                   "examples_per_sec", "ps0_bytes_in", "ps1_bytes_out", "ps1_bytes_held"):
        assert column in frame.columns, column
    assert list(frame.columns[:2]) == ["step", "time"]
    assert frame["test_accuracy"].iloc[-1] > 0.8  # separable: training did something
    assert run.model_path.is_file()
    assert "Global-Step:" in run.logs("chief")
    assert "Global-Step:" in run.logs("launcher")
    with pytest.raises(FileNotFoundError, match="worker-1"):
        run.logs("worker-7")
    assert not any(alive(pid) for pid in seen | {run.pid})
    # The same folder, attached to as a run started elsewhere would be.
    assert attach(run_dir=tmp_run_dir).metrics().equals(frame)


def test_unknown_keyword_names_the_nearest_flag(cluster, csv_problem, tmp_run_dir):
    with pytest.raises(UnknownFlagError, match=r"--trian_steps \(did you mean --train_steps\?\)"):
        cluster.train(model="mlp", trian_steps=10, run_dir=tmp_run_dir, **csv_problem)
    assert not (tmp_run_dir / "launcher.log").exists()  # refused before anything started


def test_failing_run_raises_with_the_chiefs_error(cluster, csv_problem, tmp_run_dir, tmp_path):
    # Only the chief reads the test set: it fails first, whatever the timing.
    missing = tmp_path / "no_such.csv"
    # The chief may fail before train() returns: either call raises.
    with pytest.raises(RunFailed) as failure:
        cluster.train(model="mlp", train_steps=50, run_dir=tmp_run_dir,
                      **{**csv_problem, "test_file": str(missing)}).wait(progress=False)
    assert failure.value.task == "chief"
    assert failure.value.returncode not in (0, None)
    assert f"{missing}: no such file" in failure.value.line
    assert f"{missing}: no such file" in str(failure.value)
    assert str(tmp_run_dir) in str(failure.value)


def test_stop_gives_the_chief_its_final_checkpoint(cluster, csv_problem, tmp_run_dir, tmp_path):
    checkpoints = tmp_path / "ckpt"
    run = cluster.train(model="mlp", train_steps=10**8, checkpoint_dir=checkpoints,
                        log_every_steps=10, run_dir=tmp_run_dir, **csv_problem)
    pids = set(run.tasks().values()) | {run.pid}
    try:
        wait_until(lambda: "Step: " in (tmp_run_dir / "chief.log").read_text(), "training")
        assert run.stop() == INTERRUPTED
        assert run.error() is None  # stopped, not failed
        assert run.wait(progress=False) == INTERRUPTED
        # --checkpoint_every_steps is 0: the one checkpoint is the chief's final one.
        assert "stopped by a signal after checkpointing" in run.logs("chief")
        assert list(checkpoints.glob("ckpt-*/manifest")), "no final checkpoint"
        assert not any(alive(pid) for pid in pids)
    finally:
        kill_leftovers(pids)


# The child interpreter: starts a run, says where, and waits on it.
CHILD = """
import signal
import sys
from pstrain.cluster import LocalCluster
# Ctrl-C as in a terminal: a test suite started in the background (nohup,
# `cmd &`) hands its children SIGINT ignored, and Python keeps it so.
signal.signal(signal.SIGINT, signal.default_int_handler)
flags = dict(arg.split("=", 1) for arg in sys.argv[2:])
run = LocalCluster(num_ps=1, num_workers=1).train(model="mlp", run_dir=sys.argv[1],
                                                   train_steps=10**8, **flags)
print(run.pid, flush=True)
run.wait(progress=False)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["SIGINT", "SIGTERM", "SIGKILL"])
def test_interrupted_interpreter_stops_every_task(bin_dir, csv_problem, tmp_run_dir, sig):
    args = [f"{k}={v}" for k, v in csv_problem.items()]
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_run_dir), *args],
                             stdout=subprocess.PIPE, text=True, env=env)
    pids = set()
    try:
        launcher = int(child.stdout.readline())
        pids.add(launcher)
        wait_until(lambda: len(read_tasks(tmp_run_dir)) == 3, "chief, ps-0 and worker-0")
        pids |= set(read_tasks(tmp_run_dir).values())
        wait_until(lambda: "Step: " in (tmp_run_dir / "chief.log").read_text(), "training")
        child.send_signal(sig)
        child.wait(60)
        wait_until(lambda: not any(alive(pid) for pid in pids), "every task to end")
        assert child.returncode != 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        kill_leftovers(pids)


def free_ports(count):
    import socket
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def test_attach_follows_a_cluster_started_by_hand_through_its_metrics(bin_dir, csv_problem,
                                                                      tmp_path):
    ps, worker, chief, metrics = free_ports(4)
    cluster_flags = [f"--ps_hosts=127.0.0.1:{ps}", f"--worker_hosts=127.0.0.1:{worker}",
                     f"--chief_host=127.0.0.1:{chief}", "--task_index=0", "--model=mlp",
                     "--train_steps=100000000"]
    cluster_flags += [f"--{k}={str(v).lower() if isinstance(v, bool) else v}"
                      for k, v in csv_problem.items()]
    roles = {"ps": [], "worker": [], "chief": [f"--metrics_port={metrics}"]}
    tasks = [subprocess.Popen([str(bin_dir / role)] + cluster_flags + extra,
                              stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"{role}.log", "w"))
             for role, extra in roles.items()]
    try:
        run = attach(metrics_url=f"http://127.0.0.1:{metrics}/metrics")

        def step():
            try:
                return run.live().get("pstrain_global_step", 0)
            except OSError:
                return 0
        wait_until(lambda: step() > 0, "the chief's /metrics to show steps")
        assert run.live()["pstrain_train_steps"] == 100000000
        for task in tasks:
            task.send_signal(signal.SIGTERM)
        # /metrics goes away with the chief: wait() returns (no exit_code file).
        assert run.wait(poll_seconds=0.2, progress=False) is None
        with pytest.raises(OSError):
            run.live()
    finally:
        for task in tasks:
            if task.poll() is None:
                task.kill()
            task.wait()
