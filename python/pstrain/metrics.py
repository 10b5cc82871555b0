"""A run's metrics: metrics.jsonl as a pandas DataFrame, and the chief's
Prometheus `/metrics` text as a dict (for a cluster started elsewhere).

metrics.jsonl's keys are documented in docs/FORMATS.md ("Metrics"); the
DataFrame keeps those names as its columns, one row per evaluation.
"""

import json
import re
import urllib.request
from pathlib import Path
from typing import Dict, List, Tuple

FORMAT_VERSION = 1

# The documented columns shown first, in this order, when present; the
# others (per-ps load, staleness, validation, tables) follow in file order.
LEADING_COLUMNS = ("step", "time", "train_loss", "test_loss", "test_accuracy", "test_auc",
                   "test_log_loss", "validation_loss", "validation_accuracy",
                   "validation_auc", "learning_rate", "steps_per_sec", "examples_per_sec")


def read_records(path: Path) -> List[dict]:
    """The complete lines of metrics.jsonl (a line still being written is skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    records = []
    for number, line in enumerate(text.split("\n")[:-1], start=1):  # [-1]: partial or ""
        if not line.strip():
            continue
        record = json.loads(line)
        version = record.get("format_version")
        if version != FORMAT_VERSION:
            raise ValueError(f"{path}:{number}: metrics format_version {version}; "
                             f"this pstrain reads version {FORMAT_VERSION}")
        records.append(record)
    return records


def dataframe(path: Path):
    """metrics.jsonl as a DataFrame: one row per evaluation, the documented
    column names (step, time, train_loss, test_accuracy or test_auc,
    learning_rate, examples_per_sec, psK_bytes_in, ...). Empty (no rows)
    before the first evaluation."""
    import pandas as pd  # only here: the rest of the package works without pandas

    records = read_records(path)
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        return pd.DataFrame(columns=[c for c in LEADING_COLUMNS if c != "test_auc"])
    frame = frame.drop(columns=["format_version"])
    leading = [c for c in LEADING_COLUMNS if c in frame.columns]
    rest = [c for c in frame.columns if c not in leading]
    frame = frame[leading + rest]
    frame["step"] = frame["step"].astype("int64")
    return frame


_SAMPLE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{([^}]*)\})?\s+(\S+)')
_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_prometheus(text: str) -> Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float]:
    """{(name, ((label, value), ...)): value} of the samples of a Prometheus
    text exposition; comments (# HELP, # TYPE) are skipped."""
    samples = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or line.startswith("#"):
            continue
        labels = tuple(sorted(_LABEL.findall(match.group(3) or "")))
        samples[(match.group(1), labels)] = float(match.group(4))
    return samples


def scrape(url: str, timeout: float = 2.0) -> Dict[str, float]:
    """The unlabelled samples of the chief's /metrics (pstrain_global_step,
    pstrain_train_loss, ...) as {name: value}; labelled ones as
    'name{label="v"}'. URLError when the chief does not answer."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        text = response.read().decode("utf-8")
    out = {}
    for (name, labels), value in parse_prometheus(text).items():
        key = name + ("{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}" if labels else "")
        out[key] = value
    return out
