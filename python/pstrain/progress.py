"""A live progress bar for a run (tqdm.auto: a text bar in a terminal, a
widget in a notebook), fed from the chief: its log's `Step:` and
`Progress:` lines (every --log_every_steps steps, every
--progress_every_secs) for the step, metrics.jsonl for the last evaluation.
"""

import re
from pathlib import Path
from typing import Callable, Optional

_STEP = re.compile(r"^Step: (\d+), .*Cost: ([0-9.eE+-]+|nan|inf)")
_PROGRESS = re.compile(r"^Progress: step (\d+)/(\d+)")


class LogFollower:
    """Reads the lines a growing text file gains, a complete line at a time."""

    def __init__(self, path: Path):
        self._path = Path(path)
        self._offset = 0
        self._partial = b""

    def new_lines(self):
        try:
            with open(self._path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        return [line.decode("utf-8", "replace") for line in lines]


class ChiefProgress:
    """Follows the chief's log: step, total steps and the last training loss."""

    def __init__(self, chief_log: Path, total: Optional[int]):
        self._log = LogFollower(chief_log)
        self.step = 0
        self.total = total
        self.loss: Optional[float] = None

    def poll(self) -> None:
        for line in self._log.new_lines():
            match = _STEP.match(line)
            if match:
                self.step = max(self.step, int(match.group(1)))
                self.loss = float(match.group(2))
                continue
            match = _PROGRESS.match(line)
            if match:
                self.step = max(self.step, int(match.group(1)))
                self.total = int(match.group(2))


class Bar:
    """A tqdm bar over steps; `update(step, total, **postfix)` moves it."""

    def __init__(self, description: str, enabled: bool = True):
        self._bar = None
        if enabled:
            from tqdm.auto import tqdm  # only when shown: tqdm is optional

            self._bar = tqdm(desc=description, unit="step", dynamic_ncols=True)

    def update(self, step: int, total: Optional[int], **postfix) -> None:
        if self._bar is None:
            return
        if total and self._bar.total != total:
            self._bar.total = total
        self._bar.n = min(step, total) if total else step
        shown = {k: (f"{v:.4g}" if isinstance(v, float) else v)
                 for k, v in postfix.items() if v is not None}
        self._bar.set_postfix(shown, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def follow(bar: Bar, chief: ChiefProgress, last_metrics: Callable[[], Optional[dict]]) -> None:
    """One refresh of BAR from the chief's log and its newest metrics row."""
    chief.poll()
    row = last_metrics() or {}
    step = max(chief.step, int(row.get("step", 0)))
    loss = chief.loss if chief.loss is not None else row.get("train_loss")
    score = "test_auc" if "test_auc" in row else "test_accuracy"  # click models: AUC
    bar.update(step, chief.total, loss=loss, **{score.replace("test_", ""): row.get(score)})
