"""Models and feature columns defined in Python, written as the files the
executables read: a model spec (--model_spec, docs/DATA_AND_MODELS.md "A
model of your own", docs/SPARSE.md "Your own") and a feature file
(--features, docs/SPARSE.md "Feature columns").

Each method writes one line of the format, in call order, and returns the
builder, so a model reads as its spec does:

    model = (ModelSpec().conv(5, 20, activation="relu").maxpool()
             .dense(500, activation="relu").dropout(0.3).dense("classes")
             .learning_rate(0.1))
    LocalCluster().train(model=model, ...)

The builders check only what Python can see (names, numbers); the tasks
parse the written file at start and refuse a bad line naming it, so the
format has one parser: the project's.
"""

from pathlib import Path
from typing import List, Optional, Sequence, Union

Number = Union[int, float]


def _words(*items) -> str:
    return " ".join(str(i) for i in items if i is not None and i != "")


class _Lines:
    def __init__(self):
        self.lines: List[str] = []

    def _add(self, *items) -> "_Lines":
        self.lines.append(_words(*items))
        return self

    def line(self, text: str) -> "_Lines":
        """Any line of the format as it is (a part this builder has no method for)."""
        return self._add(text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def write(self, path: Union[str, Path]) -> Path:
        """Writes the file; returns its absolute path."""
        path = Path(path).resolve()
        path.write_text(self.text(), encoding="utf-8")
        return path

    __str__ = text


def _activation(activation: Optional[str]) -> Optional[str]:
    if activation not in (None, "relu", "sigmoid"):
        raise ValueError(f"activation must be relu, sigmoid or None, not {activation!r}")
    return activation


class ModelSpec(_Lines):
    """A --model_spec file: layers, then how to train (optional).

    Dense models: conv, maxpool, dense, batchnorm, dropout, dense("classes").
    Click models start with embedding(), then wide, fm, cross, dot, bottom,
    dense, batchnorm, dropout, dense("classes")."""

    # -- layers ------------------------------------------------------------

    def conv(self, size: Union[int, str], filters: int, stride: Optional[int] = None,
             padding: Optional[str] = None, activation: Optional[str] = None) -> "ModelSpec":
        """conv RxS FILTERS [stride N] [same|valid] [relu|sigmoid]; SIZE 5 or "5x3"."""
        size = f"{size}x{size}" if isinstance(size, int) else size
        return self._add("conv", size, filters, f"stride {stride}" if stride else None,
                         padding, _activation(activation))

    def maxpool(self, size: int = 2) -> "ModelSpec":
        return self._add("maxpool", size)

    def dense(self, units: Union[int, str], activation: Optional[str] = None) -> "ModelSpec":
        """dense UNITS|classes [relu|sigmoid]; the last layer is dense("classes")."""
        return self._add("dense", units, _activation(activation))

    def batchnorm(self, momentum: Optional[Number] = None,
                  activation: Optional[str] = None) -> "ModelSpec":
        return self._add("batchnorm", f"momentum {momentum}" if momentum is not None else None,
                         _activation(activation))

    def dropout(self, rate: Number) -> "ModelSpec":
        return self._add("dropout", rate)

    # -- click models (docs/SPARSE.md) ----------------------------------------

    def embedding(self, dim: int, combiner: Optional[str] = None) -> "ModelSpec":
        return self._add("embedding", dim, f"combiner={combiner}" if combiner else None)

    def wide(self) -> "ModelSpec":
        return self._add("wide")

    def fm(self) -> "ModelSpec":
        return self._add("fm")

    def cross(self, layers: int, rank: Optional[int] = None,
              parallel: bool = False) -> "ModelSpec":
        return self._add("cross", layers, f"rank={rank}" if rank else None,
                         "parallel" if parallel else None)

    def dot(self) -> "ModelSpec":
        return self._add("dot")

    def bottom(self, units: int, activation: Optional[str] = None) -> "ModelSpec":
        return self._add("bottom", units, _activation(activation))

    # -- training ----------------------------------------------------------

    def learning_rate(self, rate: Number) -> "ModelSpec":
        return self._add("learning_rate", rate)

    def optimizer(self, name: str) -> "ModelSpec":
        return self._add("optimizer", name)

    def lr_schedule(self, name: str, decay_steps: Optional[int] = None,
                    decay_rate: Optional[Number] = None, warmup_steps: Optional[int] = None,
                    min: Optional[Number] = None) -> "ModelSpec":  # noqa: A002 (the spec's word)
        options = [f"{k} {v}" for k, v in (("decay_steps", decay_steps),
                                           ("decay_rate", decay_rate),
                                           ("warmup_steps", warmup_steps), ("min", min))
                   if v is not None]
        return self._add("lr_schedule", name, *options)

    def weight_decay(self, decay: Number) -> "ModelSpec":
        return self._add("weight_decay", decay)

    def augment(self, *kinds: str) -> "ModelSpec":
        """augment crop,flip (the workers' --augment list)."""
        return self._add("augment", ",".join(kinds))


class Features(_Lines):
    """A --features file: one column a line, NAME KIND SOURCE OPTIONS."""

    def __init__(self, dim: Optional[int] = None):
        super().__init__()
        self._names = set()
        if dim is not None:
            self._add("dim", dim)

    def _column(self, name: str, kind: str, source, options: Sequence[str]) -> "Features":
        if not name or not all(c.isalnum() or c in "_.-" for c in name):
            raise ValueError(f"feature name {name!r}: letters, digits, '_', '.', '-' only")
        if name in self._names:
            raise ValueError(f"feature name {name!r} is used twice")
        self._names.add(name)
        return self._add(name, kind, source, *options)

    @staticmethod
    def _embedded(buckets, table, dim, min_count) -> List[str]:
        return [f"{k}={v}" for k, v in (("buckets", buckets), ("table", table), ("dim", dim),
                                        ("min_count", min_count)) if v is not None]

    def categorical(self, name: str, source, buckets: Optional[int] = None,
                    table: Optional[str] = None, dim: Optional[int] = None,
                    min_count: Optional[int] = None) -> "Features":
        """The field's first entry (buckets None or 0: a dynamic table)."""
        return self._column(name, "categorical", source,
                            self._embedded(buckets, table, dim, min_count))

    def multi_hot(self, name: str, source, buckets: Optional[int] = None,
                  table: Optional[str] = None, combiner: Optional[str] = None,
                  max_length: Optional[int] = None, weighted: bool = False,
                  dim: Optional[int] = None, min_count: Optional[int] = None) -> "Features":
        options = self._embedded(buckets, table, dim, min_count)
        options += [f"{k}={v}" for k, v in (("combiner", combiner), ("max_length", max_length))
                    if v is not None]
        return self._column(name, "multi_hot", source, options + (["weighted"] if weighted else []))

    def numeric(self, name: str, source, bucketize: Optional[Sequence[Number]] = None,
                table: Optional[str] = None, dim: Optional[int] = None) -> "Features":
        """log1p (a dense input), or with BUCKETIZE edges a categorical bucket id."""
        if bucketize is None:
            return self._column(name, "numeric", source, ["log1p"])
        options = ["bucketize=" + ",".join(str(e) for e in bucketize)]
        options += self._embedded(None, table, dim, None)
        return self._column(name, "numeric", source, options)
