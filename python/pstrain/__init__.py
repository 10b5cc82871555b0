"""pstrain from Python (docs/PYTHON.md).

- Launch: `pstrain.LocalCluster(num_ps=2, num_workers=2).train(model=...,
  dataset=..., **flags)` runs scripts/run_local.sh and returns a `Run`
  (progress bar, `.metrics()` as a DataFrame, `.wait()`, `.stop()`, logs);
  `pstrain.attach(run_dir=..., metrics_url=...)` follows a run started
  elsewhere (Slurm, Kubernetes).
- Predict: `pstrain.load("run/model.bin").predict(x)` gives the predict
  executable's probabilities, to the bit, without starting a process.
- Data and models: `pstrain.data.write_records`, `pstrain.spec.ModelSpec`
  and `pstrain.spec.Features`; `pstrain.clusters` writes the sbatch command
  and TF_CONFIG that scripts/slurm and deploy/k8s use.
"""

from pstrain import clusters, data, spec
from pstrain.cluster import AttachedRun, LocalCluster, attach
from pstrain.flags import UnknownFlagError
from pstrain.model import Model, load
from pstrain.run import Run, RunFailed


def _version() -> str:
    try:
        from pstrain import _native  # the version the C++ was built as
        return _native.__version__
    except ImportError:  # a source checkout without the extension
        from importlib import metadata
        try:
            return metadata.version("pstrain")
        except metadata.PackageNotFoundError:
            return "unknown"


__version__ = _version()

__all__ = [
    "AttachedRun", "LocalCluster", "Model", "Run", "RunFailed", "UnknownFlagError", "attach",
    "clusters", "data", "load", "spec", "__version__",
]
