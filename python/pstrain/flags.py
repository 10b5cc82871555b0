"""Keyword arguments to pstrain command-line flags.

The known flags come from the executables themselves (`chief --helpxml`,
`worker --helpxml`, `ps --helpxml`), read once per bin folder, so Python
accepts exactly what the tasks accept. An unknown keyword is refused with
the nearest flag, chosen as the executables choose it (cli/unknown_flags.cc:
the fewest one-character edits, within a third of the name), else difflib's.
"""

import difflib
import functools
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

from pstrain import _paths

class UnknownFlagError(ValueError):
    """A keyword that names no flag of the tasks."""


@functools.lru_cache(maxsize=None)
def _flag_info(bin_dir: str) -> Dict[str, Tuple[str, str]]:
    """{flag name: (gflags type, default)} of every flag ps, worker and chief define."""
    info: Dict[str, Tuple[str, str]] = {}
    for program in ("chief", "worker", "ps"):
        path = Path(bin_dir) / program
        # gflags exits non-zero after --helpxml; the XML on stdout is what counts.
        out = subprocess.run([str(path), "--helpxml"], capture_output=True, text=True,
                             check=False).stdout
        if "<AllFlags>" not in out:
            raise RuntimeError(f"pstrain: {path} --helpxml printed no flags")
        for flag in ElementTree.fromstring(out).iter("flag"):
            info[flag.findtext("name")] = (flag.findtext("type"), flag.findtext("default"))
    return info


def _info(bin_dir: Optional[Path]) -> Dict[str, Tuple[str, str]]:
    if bin_dir is None:
        _paths.executable("chief")  # a clear error when the build is missing
        bin_dir = _paths.bin_dir()
    return _flag_info(str(Path(bin_dir).resolve()))


def known_flags(bin_dir: Optional[Path] = None) -> Dict[str, str]:
    """{name: type} of every flag the tasks accept (cached per bin folder)."""
    return {name: t for name, (t, _) in _info(bin_dir).items()}


def default(name: str, bin_dir: Optional[Path] = None) -> str:
    """The default of flag NAME, as the executables print it."""
    return _info(bin_dir)[name][1]


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            above = row[j]
            row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]))
            diagonal = above
    return row[len(b)]


def nearest(name: str, names: Iterable[str]) -> Optional[str]:
    """The known name nearest to NAME, or None when none is near."""
    names = sorted(names)
    best, best_distance = None, max(1, len(name) // 3) + 1
    for candidate in names:
        d = _edit_distance(name, candidate)
        if d < best_distance:
            best, best_distance = candidate, d
    if best is None:
        close = difflib.get_close_matches(name, names, n=1)
        best = close[0] if close else None
    return best


def check_names(names: Iterable[str], bin_dir: Optional[Path] = None,
                extra: Iterable[str] = ()) -> None:
    """UnknownFlagError for the first name that is neither a flag nor in EXTRA."""
    flags = known_flags(bin_dir)
    allowed = set(flags) | set(extra)
    for name in names:
        if name in allowed:
            continue
        message = f"unknown flag --{name}"
        suggestion = nearest(name, allowed)
        if suggestion:
            message += f" (did you mean --{suggestion}?)"
        raise UnknownFlagError(message)


def format_value(value) -> str:
    """A Python value as gflags reads it: bools true/false, lists comma-joined."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(v) for v in value)
    return str(value)


def to_flags(values: Mapping[str, object], bin_dir: Optional[Path] = None) -> List[str]:
    """["--name=value", ...] for keyword arguments; None values are left out.

    Raises UnknownFlagError naming the nearest flag for an unknown name.
    """
    given = {k: v for k, v in values.items() if v is not None}
    check_names(given, bin_dir)
    return [f"--{name}={format_value(value)}" for name, value in given.items()]
