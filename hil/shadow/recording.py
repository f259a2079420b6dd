r"""Machine data for the recorded mode of :mod:`hil.shadow`: :class:`Recording` (arrays, a
cosim CSV or HDF5 results file, :class:`~cosim.observers.Results` or a pandas DataFrame),
:class:`HeldSignal` (a model input held from its samples) and the breakpoints that make the
integrator stop at input changes and recording times."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import PortError
from cosim.manipulators import Manipulator
from cosim.observers import Results

from .errors import ShadowDataError, _did_you_mean
from .rules import _EPS

__all__ = ["HeldSignal", "Recording"]

_COLUMN = re.compile(r"^(?P<name>.+?)(?: \[(?P<unit>[^\]]*)\])?$")


class Recording:
    """Machine data: sample times [s] (strictly increasing) and named scalar signals.

    Build it with :meth:`load` from a cosim CSV/HDF5 results file, a
    :class:`~cosim.observers.Results`, a pandas DataFrame (index or column ``time`` /
    ``time [s]``; columns named by the signals with their units in ``df.attrs["units"]``,
    as :meth:`Results.to_pandas <cosim.observers.Results.to_pandas>` makes them, or
    ``name [unit]``) or ``(t, {name: array}, {name: unit})``.
    """

    def __init__(self, t: Any, signals: dict, units: dict | None = None,
                 source: str = "arrays") -> None:
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.signals = {k: np.asarray(v, dtype=float) for k, v in signals.items()}
        self.units = {k: (units or {}).get(k) or "" for k in self.signals}
        self.source = source
        for k, v in self.signals.items():
            if v.shape != self.t.shape:
                raise ShadowDataError(f"recording {source}: signal {k!r} has shape {v.shape}, "
                                      f"the time vector {self.t.shape} (scalar signals only)")
        bad = np.flatnonzero(~np.isfinite(self.t))
        if bad.size:
            raise ShadowDataError(f"recording {source}: time sample {bad[0]} is {self.t[bad[0]]}")
        back = np.flatnonzero(np.diff(self.t) <= 0)
        if back.size:
            i = int(back[0])
            raise ShadowDataError(f"recording {source}: times not strictly increasing at sample "
                                  f"{i + 1} (t = {self.t[i]!r} s, then {self.t[i + 1]!r} s); "
                                  "sort the data or drop duplicate samples")

    @classmethod
    def load(cls, data: Any) -> Recording:
        """A Recording from a file path, Results, DataFrame, Recording or (t, signals[, units])."""
        if isinstance(data, Recording):
            return data
        if isinstance(data, (str, Path)):
            from cosim.writers import read_csv, read_hdf5
            p = Path(data)
            res = read_hdf5(p) if p.suffix in (".h5", ".hdf5") else read_csv(p)
            return cls(res.time, res.signals, res.units, source=f"'{p}'")
        if isinstance(data, Results):
            return cls(data.time, data.signals, data.units, source="results")
        if isinstance(data, tuple) and len(data) in (2, 3):
            return cls(*data)
        if hasattr(data, "columns") and hasattr(data, "index"):
            return cls._from_frame(data)
        raise ShadowDataError(f"cannot read a recording from {type(data).__name__}; give a "
                              "CSV/HDF5 path, Results, a pandas DataFrame or (t, signals)")

    @classmethod
    def _from_frame(cls, df: Any) -> Recording:
        cols = [str(c) for c in df.columns]
        tcol = next((c for c in df.columns if str(c) in ("time [s]", "time", "t")), None)
        if tcol is not None:
            t = df[tcol].to_numpy(dtype=float)
        else:
            t = np.asarray(df.index, dtype=float)
        signals, units = {}, {}
        declared = df.attrs.get("units") or {}
        for c, name in zip(df.columns, cols):
            if c is tcol:
                continue
            m = _COLUMN.match(name)
            signals[m["name"]] = df[c].to_numpy(dtype=float)
            units[m["name"]] = declared.get(name, m["unit"] or "")
        return cls(t, signals, units, source="DataFrame")

    def column(self, name: str, role: str) -> np.ndarray:
        try:
            return self.signals[name]
        except KeyError:
            raise PortError(f"recording {self.source}: no {role} signal {name!r}; "
                            + _did_you_mean(name, self.signals)) from None


# --------------------------------------------------------------- the held input block
class HeldSignal(Block):
    """A model input fed from machine samples, held constant between them (ZOH).

    .. math:: y(t) = u_k, \\qquad t_k \\le t_{mode} < t_{k+1}

    The samples ``(ticks, values)`` are the discrete state ``table`` (set per run);
    :math:`t_{mode}` is the start of the current integration interval, so a step that ends
    at a sample instant still sees the previous value.  Before the first sample: the first.

    Ports
    -----
    out  y   scalar [unit]; no inputs
    """

    def __init__(self, name: str, unit: str | None = None) -> None:
        super().__init__(name)
        self.table = self.declare_discrete_state("table", (np.zeros(1), np.zeros(1)))
        self.y = self.declare_output("y", self._calc, unit=unit, depends_on=())

    def _calc(self, ctx: Any) -> float:
        times, values = ctx.discrete(self.table)
        i = int(np.searchsorted(times, ctx.mode_time + _EPS, "right")) - 1
        return float(values[i if i > 0 else 0])


class _Breakpoints(Manipulator):
    """Make the integrator stop at the given ticks (input changes, off-grid samples)."""

    def __init__(self, ticks: Any) -> None:
        self._bp = frozenset(int(k) for k in ticks)

    def breakpoints(self) -> frozenset:
        return self._bp

    def at_time(self, sim: Any, ticks: int) -> None:
        pass
