"""A training run started by LocalCluster.train: scripts/run_local.sh in a
session of its own, followed through its run folder.

Everything a run does (ports, tasks, restarts, the run folder, stopping
every task) is run_local.sh's; this class only starts it, watches the
folder and signals it. The launcher's own output (the chief's progress,
warnings, its report and its "NAME failed (exit N): LINE") is kept in
RUN_DIR/launcher.log.
"""

import atexit
import ctypes
import os
import re
import signal
import subprocess
import time
import weakref
from pathlib import Path
from typing import Dict, List, Optional

from pstrain import metrics as _metrics
from pstrain import progress as _progress

LAUNCHER_LOG = "launcher.log"
# run_local.sh: "run_local.sh: NAME failed (exit N): LAST LINE OF NAME.log".
_FAILED = re.compile(r"^run_local\.sh: (\S+) failed \(exit (-?\d+)\): (.*)$")
# glog's prefix: "E20261129 11:12:50.930279 24589 chief_main.cc:14] ".
_GLOG_PREFIX = re.compile(r"^[IWEF]\d{8} [0-9:.]+ +\d+ [^\]]+\] ")
# Exit status of run_local.sh when it was interrupted (SIGINT or SIGTERM).
INTERRUPTED = 130


class RunFailed(RuntimeError):
    """A run that ended with a non-zero status; `task` and `line` say who
    failed first and its last log line (the chief's error, most often)."""

    def __init__(self, run_dir: Path, returncode: int, task: Optional[str], line: str):
        self.run_dir, self.returncode, self.task, self.line = run_dir, returncode, task, line
        who = f"{task} failed (exit {returncode})" if task else f"run failed (exit {returncode})"
        super().__init__(f"pstrain: {who}: {line} [run folder {run_dir}]")


def _die_with_parent() -> None:
    """In the launcher, before exec: SIGTERM when the Python process dies, even
    by SIGKILL, so run_local.sh's trap stops every task (Linux; elsewhere the
    launcher outlives a killed interpreter). The signal follows the *thread*
    that started the run: start runs from a thread that outlives them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# Runs still going, stopped when the interpreter exits (atexit).
_LIVE: "weakref.WeakSet[Run]" = weakref.WeakSet()


@atexit.register
def _stop_live_runs() -> None:
    for run in list(_LIVE):
        run.stop()


class Run:
    """One training run. Started by LocalCluster.train; see its docs."""

    def __init__(self, command: List[str], run_dir: Path, env: Dict[str, str],
                 total_steps: Optional[int]):
        self.run_dir = Path(run_dir)
        self.command = command
        self._total_steps = total_steps
        self._stopped = False
        self._progress: Optional[_progress.ChiefProgress] = None
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # A resumed run folder's old list would read as this run's tasks.
        (self.run_dir / "tasks.pid").unlink(missing_ok=True)
        with open(self.run_dir / LAUNCHER_LOG, "ab") as log:
            self._process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=env, start_new_session=True, preexec_fn=_die_with_parent)
        _LIVE.add(self)

    # -- state ------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The launcher's PID (also its process group and session)."""
        return self._process.pid

    @property
    def returncode(self) -> Optional[int]:
        """The run's exit status (the chief's; 130 when stopped), None while it runs."""
        return self._process.poll()

    @property
    def running(self) -> bool:
        return self.returncode is None

    @property
    def model_path(self) -> Path:
        """RUN_DIR/model.bin, the trained model (there once the run succeeded)."""
        return self.run_dir / "model.bin"

    def tasks(self) -> Dict[str, int]:
        """{task name: PID} of the tasks running now (RUN_DIR/tasks.pid)."""
        return read_tasks(self.run_dir)

    def logs(self, task: str = "chief") -> str:
        """The log of TASK ("chief", "ps-0", "worker-1", ..., or "launcher")."""
        name = LAUNCHER_LOG if task == "launcher" else f"{task}.log"
        path = self.run_dir / name
        if not path.exists():
            known = sorted(p.stem for p in self.run_dir.glob("*.log"))
            raise FileNotFoundError(f"pstrain: no log for task '{task}' in {self.run_dir}; "
                                    f"there are: {', '.join(known)}")
        return path.read_text(encoding="utf-8", errors="replace")

    def metrics(self):
        """metrics.jsonl as a pandas DataFrame, one row per evaluation so far."""
        return _metrics.dataframe(self.run_dir / "metrics.jsonl")

    def error(self) -> Optional[RunFailed]:
        """Why the run failed (None while it runs, when it succeeded or was stopped)."""
        rc = self.returncode
        if rc is None or rc == 0 or self._stopped:
            return None
        task, line = None, ""
        log = (self.run_dir / LAUNCHER_LOG).read_text(encoding="utf-8", errors="replace")
        for text in log.splitlines():
            match = _FAILED.match(text)
            if match and task is None:  # the first to fail, as run_local.sh reports it
                task, line = match.group(1), _GLOG_PREFIX.sub("", match.group(3))
        if task is None:  # the launcher itself refused (missing data, ...): all it said
            line = log.strip() or "(no output)"
        return RunFailed(self.run_dir, rc, task, line)

    # -- control ----------------------------------------------------------

    def wait_started(self, timeout: float = 60.0) -> None:
        """Returns once the launcher has started the chief (it is in
        tasks.pid; the ps tasks start before it, the workers right after);
        raises RunFailed when the run ended before, TimeoutError after
        TIMEOUT seconds."""
        deadline = time.monotonic() + timeout
        while "chief" not in self.tasks():
            if not self.running:
                self._raise_if_failed()
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"pstrain: no task started in {timeout} s [{self.run_dir}]")
            time.sleep(0.05)

    def wait(self, timeout: Optional[float] = None, progress: Optional[bool] = None) -> int:
        """Waits for the end of the run, with a progress bar (tqdm; PROGRESS
        None: shown when tqdm is installed). Returns the exit status (0, or
        130 after stop()); raises RunFailed with the failing task's error.
        Interrupted (Ctrl-C), stops the run first. TimeoutError after TIMEOUT
        seconds (the run goes on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = _progress.Bar(self.run_dir.name, enabled=_show_progress(progress))
        if self._progress is None:
            self._progress = _progress.ChiefProgress(self.run_dir / "chief.log",
                                                     self._total_steps)
        try:
            while self.running:
                _progress.follow(bar, self._progress, self._last_metrics)
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"pstrain: run still going after {timeout} s")
                time.sleep(0.2)
            _progress.follow(bar, self._progress, self._last_metrics)
        except KeyboardInterrupt:
            self.stop()
            raise
        finally:
            bar.close()
        self._raise_if_failed()
        return self.returncode

    def stop(self, timeout: float = 30.0) -> Optional[int]:
        """Stops the run as Ctrl-C stops run_local.sh: SIGTERM to the launcher,
        which SIGTERMs every task (the chief saves its final checkpoint with
        --checkpoint_dir) and waits for them. A launcher still there after
        TIMEOUT seconds is killed with its whole process group. Returns the
        exit status."""
        if self.running:
            self._stopped = True
            try:
                self._process.send_signal(signal.SIGTERM)
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                _kill_group(self.pid)
                self._process.wait()
        _LIVE.discard(self)
        return self.returncode

    def _last_metrics(self) -> Optional[dict]:
        records = _metrics.read_records(self.run_dir / "metrics.jsonl")
        return records[-1] if records else None

    def _raise_if_failed(self) -> None:
        failure = self.error()
        if failure is not None:
            raise failure
        if not self.running:
            _LIVE.discard(self)

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else f"exit {self.returncode}"
        return f"<pstrain Run {self.run_dir} {state}>"


def read_tasks(run_dir: Path) -> Dict[str, int]:
    """{name: PID} from RUN_DIR/tasks.pid ("NAME PID" a line); {} without it."""
    try:
        text = (Path(run_dir) / "tasks.pid").read_text()
    except FileNotFoundError:
        return {}
    return {name: int(pid) for name, pid in (line.split() for line in text.splitlines() if line)}


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _show_progress(progress: Optional[bool]) -> bool:
    if progress is not None:
        return progress
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True
