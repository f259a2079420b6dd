"""One run of a study: build (cached), set the parameters, simulate, reduce to metrics.

Or, for studies whose run is not one diagram (a co-simulation master, a script), call a
function of the model with the point as keyword arguments (``RunSettings.call``); it
returns the metrics dict.

:func:`run_one` is what every executor calls, in a worker process or in-process.  It
never raises for a failing run: the error (type, message, the innermost frame) is
returned in the record with status ``"failed"``, so one bad parameter point does not
stop a study.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from .model import ModelSpec, diagram_for


@dataclass(frozen=True)
class RunSettings:
    """Simulation settings shared by all runs of a study."""

    t_end: float
    solver: str = "rk4"
    dt: float | None = None
    rtol: float = 1e-6
    atol: float = 1e-9
    record: Any = "all"
    metrics: str | None = None
    call: str | None = None

    def as_dict(self) -> dict:
        rec = self.record if isinstance(self.record, str) else list(self.record)
        return {"t_end": self.t_end, "solver": self.solver, "dt": self.dt, "rtol": self.rtol,
                "atol": self.atol, "record": rec, "metrics": self.metrics, "call": self.call}


def split_point(point: dict) -> tuple[dict, dict]:
    """``(build arguments, context parameters)``: names with a dot are context parameters."""
    build = {k: v for k, v in point.items() if "." not in k}
    params = {k: v for k, v in point.items() if "." in k}
    return build, params


def default_metrics(res: Any, point: dict) -> dict:
    """The final value of every recorded scalar signal (``final:<port>``)."""
    out = {}
    for k, v in res.signals.items():
        v = np.asarray(v)
        if v.ndim == 1 and v.size:
            out[f"final:{k}"] = float(v[-1])
    return out


def run_one(spec: ModelSpec, settings: RunSettings, index: int, run_id: str,
            point: dict) -> dict:
    """Simulate one parameter point; returns the journal record (never raises).

    The record's ``units`` give the unit of each context parameter (as its block declares
    it) and of each default metric (``final:<signal>``: the signal's); the arguments of
    the diagram function and the metrics of a metrics function have none cosim knows.
    """
    t0 = time.perf_counter()
    record = {"run_id": run_id, "index": index, "params": dict(point),
              "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        if settings.call:
            fn = spec.attribute(settings.call)
            if fn is None:
                raise AttributeError(f"{spec.source}: no function {settings.call!r}")
            metrics = fn(**point)
            if not isinstance(metrics, dict):
                raise TypeError(f"{settings.call}() returned {type(metrics).__name__}, "
                                "not a dict")
            record.update(status="ok", metrics=metrics, error=None)
            record["wall_s"] = time.perf_counter() - t0
            return record
        from ..simulator import Simulator

        build, params = split_point(point)
        d = diagram_for(spec, build)
        ctx = d.create_context()
        for name, value in params.items():
            ctx.set_param(name, value)
        units = {name: ctx.plan.find_parameter(name).unit or "" for name in params}
        sim = Simulator(d, context=ctx, solver=settings.solver, dt=settings.dt,
                        rtol=settings.rtol, atol=settings.atol, record=settings.record)
        res = sim.run(settings.t_end)
        fn = spec.attribute(settings.metrics) if settings.metrics else default_metrics
        if fn is None:
            raise AttributeError(f"{spec.source}: no metrics function {settings.metrics!r}")
        metrics = fn(res, dict(point))
        if not isinstance(metrics, dict):
            raise TypeError(f"metrics function returned {type(metrics).__name__}, not a dict")
        if fn is default_metrics:  # final:<signal>: the signal's unit
            units.update({k: res.units.get(k.removeprefix("final:")) or "" for k in metrics})
        record.update(status="ok", metrics=metrics, error=None, units=units)
    except Exception as exc:  # a failed run is a result, not the end of the study
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
        record.update(status="failed", metrics={},
                      error=f"{type(exc).__name__}: {exc}{where}")
    record["wall_s"] = time.perf_counter() - t0
    return record
