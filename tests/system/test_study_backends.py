"""A 200-run sweep on local processes and on a Dask local cluster gives the same dataset."""

import os

import numpy as np
import pytest

from cosim.studies import DaskExecutor, LocalExecutor, SerialExecutor, Study

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
MODEL = os.path.join(ROOT, "examples", "pid_sweep.py")


def _study():
    import examples.pid_sweep as ex

    return Study(MODEL, ex.design(), metrics="metrics", **ex.SIMULATION)


def test_200_runs_local_and_dask_give_the_same_dataset(tmp_path):
    pytest.importorskip("distributed")
    study = _study()
    assert len(study.design) == 200
    with LocalExecutor(2) as ex:
        local = study.run(str(tmp_path / "local"), ex, progress=False)
    with DaskExecutor(workers=2) as ex:
        dask = study.run(str(tmp_path / "dask"), ex, progress=False)
    assert len(local) == len(dask) == 200 and set(local.status) == set(dask.status) == {"ok"}
    a = local.sort_values("run_id").reset_index(drop=True)
    b = dask.sort_values("run_id").reset_index(drop=True)
    for col in ("pid.kp", "pid.kd", "m", "overshoot_pct", "settling_s", "iae", "peak_u"):
        np.testing.assert_array_equal(a[col].to_numpy(), b[col].to_numpy())
    assert len(set(local.worker)) == 2 and len(set(dask.worker)) == 2
    # the same points run in this process give the same numbers (no worker state leaks)
    some = study.design[:3]
    serial = Study(MODEL, some, metrics="metrics", **__import__(
        "examples.pid_sweep", fromlist=["SIMULATION"]).SIMULATION).run(
        str(tmp_path / "serial"), SerialExecutor(), progress=False)
    for r in serial.itertuples():
        assert r.iae == a.set_index("run_id").loc[r.run_id, "iae"]
