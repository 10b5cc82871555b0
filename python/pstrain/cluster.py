"""Start a cluster on this machine (LocalCluster), or follow one started
elsewhere (attach).

LocalCluster is scripts/run_local.sh driven from Python: train() runs it
with the cluster's options and the run's flags, so ports, restarts, the run
folder and the clean stop are the launcher's, the same as from the shell.
"""

import datetime
import os
import time
from pathlib import Path
from typing import Optional, Union

from pstrain import _paths
from pstrain import flags as _flags
from pstrain import metrics as _metrics
from pstrain.run import Run, read_tasks

# Flags of every task that LocalCluster takes as its own arguments.
_CLUSTER_FLAGS = ("mode", "replicas_to_aggregate", "staleness_bound")


class LocalCluster:
    """A cluster of NUM_PS ps tasks and NUM_WORKERS workers (and a chief) on
    127.0.0.1, started for each train().

    mode: async, sync or ssp; replicas_to_aggregate (sync) and
    staleness_bound (ssp) as the flags. restart_failed / max_restarts:
    run_local.sh's restart policy (a task that dies is restarted with
    backoff; with --checkpoint_dir the run resumes from its checkpoint).
    """

    def __init__(self, num_ps: int = 1, num_workers: int = 2, mode: str = "async",
                 replicas_to_aggregate: Optional[int] = None,
                 staleness_bound: Optional[int] = None, restart_failed: bool = False,
                 max_restarts: Optional[int] = None):
        for name, n in (("num_ps", num_ps), ("num_workers", num_workers)):
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"pstrain: {name} must be a positive integer, not {n!r}")
        self.num_ps, self.num_workers = num_ps, num_workers
        self.task_flags = {"mode": mode, "replicas_to_aggregate": replicas_to_aggregate,
                           "staleness_bound": staleness_bound}
        self.restart_failed, self.max_restarts = restart_failed, max_restarts

    def command(self, run_dir: Path, task_flags: dict) -> list:
        """run_local.sh's command line for a run (what train() executes)."""
        launcher = [str(_paths.scripts_dir() / "run_local.sh"), f"--num_ps={self.num_ps}",
                    f"--num_workers={self.num_workers}", f"--run_dir={run_dir}", "--quiet"]
        if self.restart_failed:
            launcher.append("--restart_failed")
        if self.max_restarts is not None:
            launcher.append(f"--max_restarts={self.max_restarts}")
        return launcher + ["--"] + _flags.to_flags({**self.task_flags, **task_flags})

    def train(self, model=None, dataset: Optional[str] = None, *,
              run_dir: Union[str, Path, None] = None, features=None, **flags) -> Run:
        """Starts a run and returns its Run once its tasks are starting.

        model: a built-in name (mlp, mlp_relu, cnn, ...), a spec file's path,
        or a pstrain.spec.ModelSpec (written into the run folder).
        dataset: mnist (MNIST_DIR or data_dir=), csv, records, ...
        features: a feature file's path or a pstrain.spec.Features.
        run_dir: the run folder (default ./runs/<date-time>).
        Every other keyword is a flag of the tasks (train_steps=3000,
        learning_rate=0.1, normalize=True, ...): an unknown one raises
        UnknownFlagError naming the nearest flag, before anything starts.
        """
        _paths.executable("chief")  # run_local.sh would try to build otherwise
        for name in _CLUSTER_FLAGS:
            if name in flags:
                raise TypeError(f"pstrain: {name} is LocalCluster's argument, not train()'s")
        _flags.check_names(flags)  # before anything is written or started
        run_dir = Path(run_dir) if run_dir is not None else _new_run_dir()
        run_dir = run_dir.resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
        flags.update(_model_flags(model, run_dir))
        if features is not None:
            flags["features"] = _written(features, run_dir / "model.features")
        if dataset is not None:
            flags["dataset"] = dataset
        task_flags = {k: (str(v) if isinstance(v, Path) else v) for k, v in flags.items()}
        command = self.command(run_dir, task_flags)  # checks the flags' names
        env = dict(os.environ, PST_BIN_DIR=str(_paths.bin_dir()))
        total = flags.get("train_steps")
        if total is None:
            total = _flags.default("train_steps")
        run = Run(command, run_dir, env, total_steps=int(total))
        try:
            run.wait_started()
        except BaseException:
            run.stop()
            raise
        return run


def _new_run_dir() -> Path:
    """./runs/<date-time>, as run_local.sh names its run folders (-N when taken)."""
    base = Path.cwd() / "runs" / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def _written(item, path: Path) -> str:
    """A builder's text written to PATH, or the path it already is."""
    if hasattr(item, "write"):
        return str(item.write(path))
    return str(Path(item).resolve())


def _model_flags(model, run_dir: Path) -> dict:
    if model is None:
        return {}
    if hasattr(model, "write"):  # a spec builder
        return {"model_spec": _written(model, run_dir / "model.spec")}
    text = str(model)
    if text.endswith(".spec") or os.sep in text:
        if not Path(text).is_file():
            raise FileNotFoundError(f"pstrain: model spec {text} does not exist")
        return {"model_spec": str(Path(text).resolve())}
    return {"model": text}


class AttachedRun:
    """A run started elsewhere (Slurm, Kubernetes, a shell): its run folder
    and/or the chief's Prometheus endpoint (--metrics_port)."""

    def __init__(self, run_dir: Union[str, Path, None] = None, metrics_url: Optional[str] = None):
        if run_dir is None and metrics_url is None:
            raise ValueError("pstrain.attach: give run_dir, metrics_url, or both")
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.metrics_url = metrics_url

    @property
    def model_path(self) -> Optional[Path]:
        return self.run_dir / "model.bin" if self.run_dir else None

    def metrics(self):
        """metrics.jsonl of the run folder as a DataFrame (one row per evaluation)."""
        return _metrics.dataframe(self._folder() / "metrics.jsonl")

    def live(self) -> dict:
        """The chief's /metrics now: {"pstrain_global_step": ..., ...}."""
        if not self.metrics_url:
            raise ValueError("pstrain: attached without metrics_url")
        return _metrics.scrape(self.metrics_url)

    def logs(self, task: str = "chief") -> str:
        return (self._folder() / f"{task}.log").read_text(encoding="utf-8", errors="replace")

    def tasks(self) -> dict:
        return read_tasks(self._folder())

    @property
    def returncode(self) -> Optional[int]:
        """The chief's exit status, where the launcher records it (Slurm's
        RUN_DIR/exit_code); None while running or when nothing records it."""
        try:
            return int((self._folder() / "exit_code").read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def wait(self, poll_seconds: float = 2.0, progress: Optional[bool] = None) -> Optional[int]:
        """Follows the run until it ends: RUN_DIR/exit_code appears, or the
        chief's /metrics stops answering after it answered once. A bar shows
        pstrain_global_step of pstrain_train_steps (or metrics.jsonl's step)."""
        from pstrain import progress as _progress
        from pstrain.run import _show_progress

        bar = _progress.Bar("attached", enabled=_show_progress(progress))
        answered = False
        try:
            while self.returncode is None:
                step, total = None, None
                if self.metrics_url:
                    try:
                        live = self.live()
                        answered = True
                        step = live.get("pstrain_global_step")
                        total = live.get("pstrain_train_steps")
                    except OSError:
                        if answered:
                            break
                if step is None and self.run_dir is not None:
                    rows = _metrics.read_records(self.run_dir / "metrics.jsonl")
                    step = rows[-1]["step"] if rows else 0
                bar.update(int(step or 0), int(total) if total else None)
                time.sleep(poll_seconds)
        finally:
            bar.close()
        return self.returncode

    def _folder(self) -> Path:
        if self.run_dir is None:
            raise ValueError("pstrain: attached without run_dir")
        return self.run_dir


def attach(run_dir: Union[str, Path, None] = None,
           metrics_url: Optional[str] = None) -> AttachedRun:
    """Follow a run started elsewhere: RUN_DIR (Slurm's runs/slurm-JOBID, a
    shared --run_dir) and/or the chief's /metrics URL
    ("http://HOST:PORT/metrics", --metrics_port on the chief)."""
    return AttachedRun(run_dir, metrics_url)
