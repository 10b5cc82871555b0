"""Keyword arguments to flags: names from the executables, values as gflags reads them."""

import subprocess

import pytest

from pstrain import flags
from pstrain.flags import UnknownFlagError


def test_known_flags_come_from_the_executables(bin_dir):
    known = flags.known_flags(bin_dir)
    for name in ("train_steps", "ps_hosts", "model_spec", "checkpoint_dir", "metrics_port"):
        assert name in known
    assert known["train_steps"] == "int64" and known["normalize"] == "bool"
    assert flags.default("batch_size", bin_dir) == "100"


def test_values_are_formatted_as_gflags_reads_them(bin_dir):
    given = {"normalize": True, "augment": ["crop", "flip"], "train_steps": 5,
             "learning_rate": 0.5, "seed": None, "shm": False}
    assert flags.to_flags(given, bin_dir) == [
        "--normalize=true", "--augment=crop,flip", "--train_steps=5", "--learning_rate=0.5",
        "--shm=false"]


def test_unknown_name_is_refused_with_the_nearest_flag(bin_dir):
    with pytest.raises(UnknownFlagError, match=r"unknown flag --lerning_rate \(did you mean "
                                               r"--learning_rate\?\)"):
        flags.to_flags({"lerning_rate": 0.1}, bin_dir)
    with pytest.raises(UnknownFlagError, match=r"^unknown flag --zzzzzzzzzzzzzzzz$"):
        flags.to_flags({"zzzzzzzzzzzzzzzz": 1}, bin_dir)


@pytest.mark.parametrize("typo", ["trian_steps", "chekpoint_dir", "modle_spec", "batchsize"])
def test_the_suggestion_is_the_executables_own(bin_dir, typo):
    """Python names the flag the chief itself names for the same typo."""
    with pytest.raises(UnknownFlagError) as python_error:
        flags.check_names([typo], bin_dir)
    chief = subprocess.run([str(bin_dir / "chief"), f"--{typo}=1"], capture_output=True,
                           text=True, check=False)
    assert chief.returncode == 2
    suggestion = str(python_error.value).split("(", 1)[1]
    assert suggestion in chief.stderr, chief.stderr
