"""The installed package: imported from the venv, not the source tree, with
its executables and launcher inside it, runnable from anywhere."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pstrain
from pstrain import _paths

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(pstrain.__file__).resolve().parent


def test_the_package_is_the_installed_one():
    assert REPO / "python" not in PACKAGE.parents, f"imported from the source tree: {PACKAGE}"
    assert pstrain.__version__ != "unknown"
    assert callable(pstrain.load)


def test_it_imports_from_another_folder(tmp_path):
    result = subprocess.run([sys.executable, "-c", "import pstrain, pstrain._native; "
                             "print(pstrain.__file__, pstrain.__version__)"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert str(PACKAGE) in result.stdout


@pytest.mark.parametrize("name", ["ps", "worker", "chief", "predict"])
def test_each_executable_runs_outside_the_build_tree(tmp_path, name):
    env = {k: v for k, v in os.environ.items() if k != "PST_BIN_DIR"}
    env.pop("LD_LIBRARY_PATH", None)  # its libraries found through the system or its RPATH
    path = _paths.PACKAGE_DIR / "bin" / name
    result = subprocess.run([str(path), "--version"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert pstrain.__version__ in result.stdout + result.stderr


def test_the_launcher_is_packaged_with_its_exec_bits():
    scripts = _paths.scripts_dir()
    assert scripts == PACKAGE / "scripts"
    for name in ("run_local.sh", "free_ports.py"):
        assert os.access(scripts / name, os.X_OK), name
    for name in ("mnist.sh", "launcher.sh", "usage.sh"):
        assert (scripts / "lib" / name).is_file(), name
    result = subprocess.run([str(scripts / "run_local.sh"), "--help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "--num_ps" in result.stdout
