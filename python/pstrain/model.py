"""A trained model (a run's model.bin) in this process: pstrain.load.

The probabilities are the predict executable's to the bit (the same C++
loop: predict/loaded_model.h), for examples held in numpy arrays or, for
click models, text lines or a file read by the project's own readers.
"""

import os
import tempfile
from typing import Iterable, Optional, Sequence

import numpy as np

CLICK_FORMATS = ("criteo", "libsvm", "libffm")


def load(path, device: str = "cpu") -> "Model":
    """The model of model.bin at PATH, built on DEVICE ("cpu", "gpu:0").

    FileNotFoundError for a missing file; ValueError for a file that is not
    a model.bin or is corrupt (the C++ message says which).
    """
    from pstrain import _native  # here: `import pstrain` works without it
    return Model(_native.load(os.fspath(path), device), os.fspath(path))


class Model:
    """A trained model; make one with pstrain.load.

    One prediction runs at a time per Model (others wait); the GIL is
    released while it runs, so other Python threads go on.
    """

    def __init__(self, native, path: str):
        self._native = native
        self.path = path

    @property
    def description(self) -> str:
        """As predict prints it: "mlp_relu on 28x28x1 image, 10 classes"."""
        return self._native.description

    @property
    def name(self) -> str:
        """The model's name in the zoo ("mlp_relu", "deepfm", "spec-<hash>")."""
        return self._native.model

    @property
    def num_classes(self) -> int:
        """Columns of predict's result (2 for a click model)."""
        return self._native.num_classes

    @property
    def input_shape(self) -> tuple:
        """One example's dense shape: (H, W, C) for images, (D,) otherwise."""
        return tuple(self._native.input_dims)

    @property
    def feature_dim(self) -> int:
        """Dense features per example (H*W*C for images; 13 for criteo)."""
        return int(np.prod(self.input_shape))

    @property
    def is_click_model(self) -> bool:
        """A click model predicts from click-log lines (predict(lines))."""
        return self._native.is_click_model

    def __repr__(self) -> str:
        return f"<pstrain.Model {self.description} from {self.path}>"

    def predict(self, x, format: Optional[str] = None) -> np.ndarray:
        """Class probabilities, float32, one row per example (N x num_classes).

        Dense models: X a numpy array, N x D or, for an image model, also
        N x H x W x C. A C-contiguous float32 array is read where it lies, in
        batches of 1000 as the model takes them (a run with --normalize
        standardizes each batch's copy); any other real-valued array is
        first converted, which copies it. ValueError names both shapes when
        X's do not fit; TypeError for strings or non-numeric arrays.

        Click models: X a sequence of text lines in the training data's
        format, label first as in the file (read but unused): criteo
        (inferred), libsvm (inferred for one field), libffm, or FORMAT. The
        project's readers parse them, so keys hash as in training. The rows
        are N x 2: the CSV's p0 and p1, p1 the click probability.
        """
        if self.is_click_model:
            return self._predict_lines(x, format)
        if isinstance(x, str) or (isinstance(x, Sequence) and x and isinstance(x[0], str)):
            raise TypeError(f"{self.description} is no click model: give a float32 array, "
                            "not text lines")
        return self._native.predict_dense(self._dense(x))

    def predict_file(self, path, format: Optional[str] = None) -> np.ndarray:
        """A click model on a whole file (plain or gzip), as predict reads
        --test_file: N x 2 probabilities."""
        return self._native.predict_file(os.fspath(path), self._format(format))

    def _dense(self, x) -> np.ndarray:
        array = np.asarray(x)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"examples must be real numbers, not {array.dtype}")
        flat = (self.feature_dim,)
        accepted = [flat] + ([self.input_shape] if len(self.input_shape) == 3 else [])
        if array.ndim < 1 or tuple(array.shape[1:]) not in accepted:
            takes = " or ".join("(N, " + ", ".join(map(str, s)) + ")" for s in accepted)
            raise ValueError(f"examples of shape {array.shape} do not fit {self.description}: "
                             f"it takes {takes}")
        if array.dtype != np.float32 or not array.flags.c_contiguous:
            array = np.ascontiguousarray(array, dtype=np.float32)  # a copy
        return array

    def _format(self, format: Optional[str]) -> str:
        if format is not None:
            if format not in CLICK_FORMATS:
                raise ValueError(f"format={format!r}: give one of {', '.join(CLICK_FORMATS)}")
            return format
        fields, dense = self._native.num_fields, self.feature_dim
        if not self._native.with_features:
            if dense == 13 and fields in (26, 39):  # 39: the integers' buckets as fields too
                return "criteo"
            if (dense, fields) == (0, 1):
                return "libsvm"
            if dense == 0:
                return "libffm"
        raise ValueError(f"{self.path} does not say which format its data had "
                         f"(trained with a feature file): give format= one of "
                         f"{', '.join(CLICK_FORMATS)}")

    def _predict_lines(self, lines: Iterable[str], format: Optional[str]) -> np.ndarray:
        if isinstance(lines, (str, bytes)) or isinstance(lines, np.ndarray):
            raise TypeError(f"{self.description} is a click model: give a list of text lines")
        lines = list(lines)
        for i, line in enumerate(lines):
            if not isinstance(line, str) or not line.strip() or "\n" in line.rstrip("\n"):
                raise ValueError(f"line {i} is not one non-empty text line: {line!r}")
        format = self._format(format)
        if not lines:
            return np.zeros((0, self.num_classes), np.float32)
        # The readers read files: the lines go through one, in a private file.
        with tempfile.TemporaryDirectory(prefix="pstrain-lines-") as folder:
            path = os.path.join(folder, "lines")
            with open(path, "w", encoding="utf-8") as out:
                out.writelines(line.rstrip("\n") + "\n" for line in lines)
            probabilities = self._native.predict_file(path, format)
        if len(probabilities) != len(lines):  # e.g. a libsvm line that is only a comment
            raise ValueError(f"{len(lines)} lines gave {len(probabilities)} examples: "
                             "give one example a line")
        return probabilities
