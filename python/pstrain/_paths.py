"""Where the package finds pstrain's executables and launch scripts.

A wheel carries them inside the package (pstrain/bin, pstrain/scripts).
PST_BIN_DIR (as scripts/run_local.sh reads it) points at another build's
bin folder instead, e.g. a source tree's build/bin.
"""

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def bin_dir() -> Path:
    """The folder holding ps, worker, chief and predict."""
    override = os.environ.get("PST_BIN_DIR")
    return Path(override) if override else PACKAGE_DIR / "bin"


def executable(name: str) -> Path:
    """The path of executable NAME; FileNotFoundError naming where it looked."""
    path = bin_dir() / name
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"pstrain: no executable {name} in {path.parent} "
            "(reinstall the package, or set PST_BIN_DIR to a build's bin folder)")
    return path


def scripts_dir() -> Path:
    """The folder holding run_local.sh and what it sources.

    The wheel's copy; from a source checkout (the package imported from
    python/ in the repository), the repository's scripts/.
    """
    packaged = PACKAGE_DIR / "scripts"
    if (packaged / "run_local.sh").exists():
        return packaged
    return PACKAGE_DIR.parent.parent / "scripts"
