"""The commands and environment the project's cluster recipes use, from
Python; they launch nothing themselves.

- sbatch_command: the `sbatch` command line of scripts/slurm/pstrain.sbatch
  (README's "Slurm"), which places the tasks itself.
- tf_config: the TF_CONFIG deploy/k8s/plain.yaml's entrypoint.sh exports
  in each pod (the training-operator of tfjob.yaml writes its own).

Kept from drifting by tests (python/tests/test_clusters.py): the options
here are those pstrain.sbatch's parser takes, README's command is what
sbatch_command writes for it, and tf_config's string is byte for byte what
entrypoint.sh, run by /bin/sh, exports.
"""

import json
from pathlib import Path
from typing import List, Optional, Sequence

from pstrain import _paths
from pstrain import flags as _flags

# pstrain.sbatch's own options (its `case`), in the order written.
SBATCH_OPTIONS = ("ps_per_node", "workers_per_node", "num_ps", "num_workers", "chief_node",
                  "run_dir", "port_base", "resolve", "stop_grace_secs")


def sbatch_script() -> Path:
    """scripts/slurm/pstrain.sbatch beside the run_local.sh this package uses."""
    return _paths.scripts_dir() / "slurm" / "pstrain.sbatch"


def sbatch_command(nodes: int = 1, *, sbatch_args: Sequence[str] = (),
                   script: Optional[str] = None, check_flags: bool = True,
                   **options) -> List[str]:
    """["sbatch", "-N", NODES, *SBATCH_ARGS, SCRIPT, --option=..., "--", --flag=...].

    OPTIONS: pstrain.sbatch's own (ps_per_node, workers_per_node, num_ps,
    num_workers, chief_node, run_dir, port_base, resolve, stop_grace_secs)
    and the tasks' flags (mode, replicas_to_aggregate, model, train_steps,
    data_dir, checkpoint_dir, ...), which go after "--". With CHECK_FLAGS
    (and the executables here) an unknown flag raises UnknownFlagError.
    SCRIPT: the path as the cluster sees it (default: this checkout's).
    """
    launcher = [f"--{k}={_flags.format_value(options.pop(k))}" for k in SBATCH_OPTIONS
                if options.get(k) is not None]
    task = {k: v for k, v in options.items() if v is not None}
    if check_flags:
        task_flags = _flags.to_flags(task)
    else:
        task_flags = [f"--{k}={_flags.format_value(v)}" for k, v in task.items()]
    return (["sbatch", "-N", str(nodes), *sbatch_args, str(script or sbatch_script())] +
            launcher + (["--"] + task_flags if task_flags else []))


def tf_config(task_type: str, index: int, num_ps: int, num_workers: int,
              namespace: str = "default", job: str = "pstrain", service: str = "pstrain",
              port: int = 2222) -> str:
    """TF_CONFIG of task TASK_TYPE (chief, ps or worker) INDEX, as plain.yaml's
    entrypoint.sh writes it: hosts JOB-ROLE-I.SERVICE.NAMESPACE.svc:PORT (its
    pstrain-cluster ConfigMap: PSTRAIN_JOB, PSTRAIN_SERVICE, PSTRAIN_PORT,
    NUM_PS, NUM_WORKERS)."""
    if task_type not in ("chief", "ps", "worker"):
        raise ValueError(f"task_type must be chief, ps or worker, not {task_type!r}")
    domain = f"{service}.{namespace}.svc"

    def hosts(role: str, count: int) -> List[str]:
        return [f"{job}-{role}-{i}.{domain}:{port}" for i in range(count)]

    return json.dumps({"cluster": {"chief": hosts("chief", 1), "ps": hosts("ps", num_ps),
                                   "worker": hosts("worker", num_workers)},
                       "task": {"type": task_type, "index": index}})
