"""sbatch_command and tf_config against the recipes they stand for:
scripts/slurm/pstrain.sbatch (run here with stand-ins for Slurm's commands)
and deploy/k8s/plain.yaml's entrypoint.sh (run by /bin/sh)."""

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from pstrain import clusters

REPO = Path(__file__).resolve().parents[2]

# Stand-ins for the Slurm commands pstrain.sbatch and cluster_from_slurm.sh
# call: two nodes, fixed addresses; srun records each task's command line.
STUBS = {
    "scontrol": 'if [ "$1 $2" = "show hostnames" ]; then printf "node1\\nnode2\\n"; fi',
    "getent": 'case "$2" in node1) echo "10.0.0.1 STREAM";; node2) echo "10.0.0.2 STREAM";; esac',
    "srun": 'for a in "$@"; do case "$a" in --output=*) : > "${a#--output=}";; esac; done\n'
            'echo "$*" >> "$SRUN_LOG"',
    "squeue": "true",
    "scancel": "true",
}


def run_sbatch(command, folder, bin_dir):
    """Runs an `sbatch` command line's script as Slurm would start it on
    node1; returns what it wrote: cluster.flags, tasks and the srun lines."""
    assert command[:3] == ["sbatch", "-N", "2"]
    stubs = folder / "stubs"
    stubs.mkdir(parents=True)
    for name, body in STUBS.items():
        (stubs / name).write_text("#!/bin/sh\n" + body + "\n")
        (stubs / name).chmod(0o755)
    run_dir = folder / "run"
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", SLURM_JOB_ID="4242",
               SLURM_JOB_NODELIST="node[1-2]", PSTRAIN_ROOT=str(REPO), PST_BIN_DIR=str(bin_dir),
               SRUN_LOG=str(folder / "srun.log"), SLURM_SUBMIT_DIR=str(folder))
    script = REPO / command[3]
    done = subprocess.run(["bash", str(script), f"--run_dir={run_dir}", *command[4:]],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return {name: (run_dir / name).read_text() for name in ("cluster.flags", "tasks")} | {
        "srun": (folder / "srun.log").read_text().replace(str(folder), "FOLDER")}


def readme_command():
    text = (REPO / "README.md").read_text()
    block = re.search(r"^(sbatch -N .*?)\n```", text, re.S | re.M).group(1)
    return shlex.split(block.replace("\\\n", " ").replace("$HOME", "/home/u"))


def test_readme_command_is_what_sbatch_command_writes(bin_dir):
    python = clusters.sbatch_command(
        2, ps_per_node=1, workers_per_node=2, mode="sync", replicas_to_aggregate=3,
        model="mlp_relu", train_steps=3000, data_dir="/home/u/mnist",
        checkpoint_dir="/home/u/ckpt/run1", script="scripts/slurm/pstrain.sbatch")
    readme = readme_command()
    # The same words; README puts two task flags before "--", which
    # pstrain.sbatch passes to the tasks alike (checked below by running both).
    assert python[:4] == readme[:4]
    assert sorted(python[4:]) == sorted(readme[4:])


def test_pstrain_sbatch_places_the_same_cluster_for_both(bin_dir, tmp_path):
    python = clusters.sbatch_command(
        2, ps_per_node=1, workers_per_node=2, mode="sync", replicas_to_aggregate=3,
        model="mlp_relu", train_steps=3000, data_dir="/home/u/mnist",
        checkpoint_dir="/home/u/ckpt/run1", script="scripts/slurm/pstrain.sbatch")
    ours = run_sbatch(python, tmp_path / "python", bin_dir)
    theirs = run_sbatch(readme_command(), tmp_path / "readme", bin_dir)
    assert ours["tasks"] == theirs["tasks"]
    assert sorted(ours["srun"].splitlines()) == sorted(theirs["srun"].splitlines())  # any order
    assert sorted(ours["cluster.flags"].splitlines()) == sorted(
        theirs["cluster.flags"].splitlines())
    assert "--replicas_to_aggregate=3" in ours["cluster.flags"]


def test_options_are_those_pstrain_sbatch_parses():
    text = (REPO / "scripts" / "slurm" / "pstrain.sbatch").read_text()
    parser = text[text.index('while [[ $# -gt 0 ]]; do'):]
    parser = parser[:parser.index("esac")]
    options = set(re.findall(r"--([a-z_]+)=\*", parser))
    assert options == set(clusters.SBATCH_OPTIONS)


def test_unknown_task_flag_is_refused(bin_dir):
    from pstrain.flags import UnknownFlagError

    with pytest.raises(UnknownFlagError, match="did you mean --train_steps"):
        clusters.sbatch_command(2, train_stpes=10)


def entrypoint_and_cluster():
    yaml = pytest.importorskip("yaml")
    docs = list(yaml.safe_load_all((REPO / "deploy" / "k8s" / "plain.yaml").read_text()))
    maps = {d["metadata"]["name"]: d["data"] for d in docs if d and d["kind"] == "ConfigMap"}
    return maps["pstrain-entrypoint"]["entrypoint.sh"], maps["pstrain-cluster"]


@pytest.mark.parametrize("role,index", [("chief", 0), ("ps", 1), ("worker", 0), ("worker", 1)])
def test_tf_config_is_what_plain_yaml_exports(tmp_path, role, index):
    entrypoint, cluster = entrypoint_and_cluster()
    (tmp_path / "entrypoint.sh").write_text(entrypoint)
    (tmp_path / role).write_text('#!/bin/sh\nprintf "%s" "$TF_CONFIG"\n')
    (tmp_path / role).chmod(0o755)
    env = dict(cluster, HOSTNAME=f"{cluster['PSTRAIN_JOB']}-{role}-{index}",
               POD_NAMESPACE="team-a", PATH=f"{tmp_path}:/usr/bin:/bin")
    exported = subprocess.run(["/bin/sh", str(tmp_path / "entrypoint.sh"), role], env=env,
                              capture_output=True, text=True, check=True).stdout
    assert clusters.tf_config(role, index, int(cluster["NUM_PS"]), int(cluster["NUM_WORKERS"]),
                              namespace="team-a", job=cluster["PSTRAIN_JOB"],
                              service=cluster["PSTRAIN_SERVICE"],
                              port=int(cluster["PSTRAIN_PORT"])) == exported
