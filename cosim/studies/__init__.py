"""Studies: many runs of one model over a design of parameter points.

* :mod:`.design`: grids, Monte Carlo samples, Latin hypercube and Sobol designs, run ids;
* :mod:`.model`: the model spec and the per-worker cache (one compiled diagram, many
  contexts);
* :mod:`.runner`: one run (never raises: a failure is recorded);
* :mod:`.executors`: in-process, local processes (default), Dask distributed (``dist``
  extra);
* :mod:`.store`: the journal written as runs finish and the Parquet table;
* :mod:`.study`: :class:`Study` (resume, progress); ``cosim sweep`` (:mod:`.cli`).
"""

from .design import (
    Choice,
    LogUniform,
    Normal,
    Uniform,
    grid,
    latin_hypercube,
    random_samples,
    run_id,
    sobol,
)
from .executors import DaskExecutor, LocalExecutor, SerialExecutor, make_executor
from .model import ModelSpec
from .runner import RunSettings, default_metrics, run_one
from .store import ResultStore
from .study import Study, StudyProgress

__all__ = [
    "Choice", "DaskExecutor", "LocalExecutor", "LogUniform", "ModelSpec", "Normal",
    "ResultStore", "RunSettings", "SerialExecutor", "Study", "StudyProgress", "Uniform",
    "default_metrics", "grid", "latin_hypercube", "make_executor", "random_samples",
    "run_id", "run_one", "sobol",
]
