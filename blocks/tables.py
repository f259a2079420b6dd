r"""Lookup tables and recorded-data sources.

:class:`Table1D` and :class:`Table2D` map inputs through tabulated data
(breakpoints strictly increasing); :class:`FromArrays` and :class:`FromFile`
play recorded time series.  Lookups use :mod:`bisect` on Python lists, which
avoids the per-call overhead of :class:`scipy.interpolate.RegularGridInterpolator`
for scalar inputs (the tests check the values against SciPy).

Tables of a state-dependent input with ``"nearest"``/``"previous"``
interpolation are discontinuous; the jumps are not located as events.
Recorded data with ``interpolation="previous"`` declares time events at its
jumps, so integrators stop exactly there, and selects the sample with
``ctx.mode_time`` (the start of the integration interval while integrating).
"""

from __future__ import annotations

import csv
from bisect import bisect_right
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import VALUES, refuse
from cosim.ports import text_kind
from cosim.time import TICKS_PER_SECOND

from ._units import refuse_renamed

_INTERP_1D = ("linear", "nearest", "previous")
_EXTRAP_TABLE = ("clip", "linear", "error")


def _choice(kind: str, name: str, what: str, value: Any, choices: tuple) -> str:
    if value not in choices:
        raise ParameterError(f"{kind} '{name}': {what} must be one of "
                             f"{', '.join(map(repr, choices))}, got {value!r}")
    return value


def _breakpoints(kind: str, name: str, what: str, x: Any, min_points: int = 2,
                 repeats: bool = False) -> np.ndarray:
    """A 1-D float array of finite, strictly increasing breakpoints (``repeats``: a value
    may also be repeated, nondecreasing)."""
    owner = f"{kind} '{name}'"
    expected = f"a 1-D array of at least {min_points} finite numbers"
    if not VALUES.accepts(x):
        raise refuse(owner, what, x, expected)
    a = np.asarray(x, dtype=float)
    if a.ndim != 1 or a.size < min_points:
        raise refuse(owner, what, x, f"{expected} (got shape {a.shape})")
    bad = np.flatnonzero(np.diff(a) < 0 if repeats else np.diff(a) <= 0)
    if bad.size:
        i = int(bad[0])
        rule = ("strictly increasing except where a time is repeated (a step)" if repeats
                else "strictly increasing")
        raise ParameterError(f"{kind} '{name}': {what} must be {rule}, but "
                             f"{what}[{i}] = {float(a[i])!r} and {what}[{i + 1}] = "
                             f"{float(a[i + 1])!r}")
    return a


def _values(kind: str, name: str, what: str, v: Any, n: int, against: str) -> np.ndarray:
    expected = f"finite numbers of shape ({n},) or ({n}, k) to match {against} ({n} points)"
    if not VALUES.accepts(v):
        raise refuse(f"{kind} '{name}'", what, v, expected)
    a = np.asarray(v, dtype=float)
    if a.ndim not in (1, 2) or a.shape[0] != n:
        raise refuse(f"{kind} '{name}'", what, v, f"{expected} (got shape {a.shape})")
    return a


def _exact_values(kind: str, name: str, v: Any, n: int, dt: np.dtype) -> np.ndarray:
    """Integer or Boolean samples, checked against ``dt``'s range, never through float;
    String (``str``) or Binary (``bytes``) samples for :data:`~cosim.ports.STRING` /
    :data:`~cosim.ports.BINARY`."""
    rows = list(v)
    if len(rows) != n:
        raise ParameterError(f"{kind} '{name}': values must have {n} rows to match t")
    out = []
    if dt.kind == "O":  # text or bytes, as the dtype says (cosim.ports.STRING / BINARY)
        want = bytes if text_kind(dt) == "Binary" else str
        for x in rows:
            x = bytes(x) if isinstance(x, bytearray) else x
            if not isinstance(x, want):
                raise ParameterError(f"{kind} '{name}': value {x!r} is not {want.__name__} "
                                     f"(dtype {text_kind(dt)})")
            out.append(x)
        arr = np.empty(len(out), dtype=dt)
        arr[:] = out
        return arr
    for x in rows:
        if dt.kind == "b":
            out.append(bool(x))
            continue
        if isinstance(x, float) and not x.is_integer():
            raise ParameterError(f"{kind} '{name}': value {x!r} is not an integer ({dt})")
        x = int(x)
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise ParameterError(f"{kind} '{name}': value {x} is outside the range of {dt}")
        out.append(x)
    return np.array(out, dtype=dt)


def _linear_clip_1d(xl: list, yl: list):
    """``lookup(u)`` of a scalar linear table clipped to its ends: the arithmetic of
    :meth:`Table1D.lookup` (``y_i + (u - x_i)/(x_{i+1} - x_i) * (y_{i+1} - y_i)``) over
    lists and segment widths computed once (a NaN input gives NaN, as there)."""
    dx = [b - a for a, b in zip(xl, xl[1:])]
    dy = [b - a for a, b in zip(yl, yl[1:])]
    last = len(xl) - 2
    x0, xn, y0 = xl[0], xl[-1], yl[0]
    y_end = yl[last] + dy[last]  # what the general path computes at the last breakpoint

    def lookup(u: float, xl=xl, yl=yl, dx=dx, dy=dy, br=bisect_right) -> float:
        if u <= x0:
            return y0
        if u >= xn:
            return y_end
        i = br(xl, u) - 1
        if i > last:  # NaN
            i = last
        return yl[i] + (u - xl[i]) / dx[i] * dy[i]
    return lookup


def _bilinear_clip(xl: list, yl: list, zl: list):
    """``lookup(u0, u1)`` of a bilinear table with both inputs clipped: the arithmetic of
    :meth:`Table2D.lookup` over lists and cell widths computed once."""
    dx = [b - a for a, b in zip(xl, xl[1:])]
    dy = [b - a for a, b in zip(yl, yl[1:])]
    nx, ny = len(xl) - 2, len(yl) - 2
    x0, xn, y0, yn = xl[0], xl[-1], yl[0], yl[-1]

    def lookup(u0: float, u1: float, xl=xl, yl=yl, zl=zl, br=bisect_right) -> float:
        if u0 <= x0:
            i, a = 0, 0.0
        elif u0 >= xn:
            i, a = nx, 1.0
        else:
            i = br(xl, u0) - 1
            if i > nx:  # NaN
                i = nx
            a = (u0 - xl[i]) / dx[i]
        if u1 <= y0:
            j, b = 0, 0.0
        elif u1 >= yn:
            j, b = ny, 1.0
        else:
            j = br(yl, u1) - 1
            if j > ny:  # NaN
                j = ny
            b = (u1 - yl[j]) / dy[j]
        z0, z1 = zl[i], zl[i + 1]
        return ((1 - a) * ((1 - b) * z0[j] + b * z0[j + 1])
                + a * ((1 - b) * z1[j] + b * z1[j + 1]))
    return lookup


class Table1D(Block):
    r"""One-dimensional lookup table :math:`y = f(u)` through points :math:`(x_i, y_i)`.

    Interpolation, for :math:`x_i \le u < x_{i+1}`:

    * ``"linear"``: :math:`y = y_i + \frac{u - x_i}{x_{i+1} - x_i}(y_{i+1} - y_i)`;
    * ``"nearest"``: :math:`y_j` of the nearest breakpoint (ties go up);
    * ``"previous"``: :math:`y_i` (the breakpoint at or below ``u``).

    Extrapolation outside :math:`[x_0, x_{n-1}]`: ``"clip"`` holds the end
    values, ``"linear"`` extends the end segments (linear interpolation only),
    ``"error"`` raises.

    Ports
    -----
    in   u   scalar [input_unit]
    out  y   scalar, or (k,) when ``y`` has shape (n, k) [unit]; feedthrough from u

    Parameters
    ----------
    x : array_like
        Breakpoints :math:`x_i`, strictly increasing, at least 2.
    y : array_like
        Values :math:`y_i`, shape (n,) or (n, k) for n breakpoints.
    interpolation : str
        ``"linear"`` (default), ``"nearest"`` or ``"previous"``.
    extrapolation : str
        ``"clip"`` (default), ``"linear"`` or ``"error"``.
    input_unit, unit : str, optional
        Units of ``u`` and ``y``.
    """

    def __init__(self, name: str, x: Any, y: Any, interpolation: str = "linear",
                 extrapolation: str = "clip", input_unit: str | None = None,
                 unit: str | None = None, **old: Any) -> None:
        refuse_renamed("Table1D", name, old)
        super().__init__(name)
        kind = "Table1D"
        self.interpolation = _choice(kind, name, "interpolation", interpolation, _INTERP_1D)
        self.extrapolation = _choice(kind, name, "extrapolation", extrapolation, _EXTRAP_TABLE)
        if extrapolation == "linear" and interpolation != "linear":
            raise ParameterError(f"{kind} '{name}': extrapolation='linear' needs "
                                 f"interpolation='linear' (got {interpolation!r}); use 'clip'")
        self.x = _breakpoints(kind, name, "x", x)
        self.y = _values(kind, name, "y", y, self.x.size, "x")
        self._xl = self.x.tolist()
        self._yl = self.y.tolist() if self.y.ndim == 1 else list(self.y)
        self.u = self.declare_input("u", unit=input_unit)
        shape = () if self.y.ndim == 1 else (self.y.shape[1],)
        if self.y.ndim == 1 and self.interpolation == "linear" and extrapolation == "clip":
            self.lookup = _linear_clip_1d(self._xl, self._yl)  # compiled once
        self.y_port = self.declare_output("y", self._calc, shape=shape, unit=unit)

    def lookup(self, u: float) -> Any:
        """The table value at ``u`` (used by the output; handy in tests).

        For a scalar linear table with ``"clip"`` extrapolation (the common case) the
        constructor replaces this method on the instance by a closure compiled once over
        the breakpoint lists and the segment widths (:func:`_linear_clip_1d`): the same
        arithmetic, no per-call attribute lookups or mode branches.
        """
        xl, yl = self._xl, self._yl
        n = len(xl)
        if not xl[0] <= u <= xl[-1]:
            if self.extrapolation == "error":
                raise ValueError(f"Table1D '{self.path}': input u = {u!r} outside the "
                                 f"breakpoints [{xl[0]!r}, {xl[-1]!r}] (extrapolation='error')")
            if self.extrapolation == "clip":
                u = min(max(u, xl[0]), xl[-1])
        i = min(max(bisect_right(xl, u) - 1, 0), n - 2)
        if self.interpolation == "previous":
            return yl[i + 1] if u >= xl[i + 1] else yl[i]
        if self.interpolation == "nearest":
            return yl[i + 1] if u - xl[i] >= xl[i + 1] - u else yl[i]
        w = (u - xl[i]) / (xl[i + 1] - xl[i])
        return yl[i] + w * (yl[i + 1] - yl[i])

    def _calc(self, ctx: Any) -> Any:
        y = self.lookup(ctx.input(self.u))
        return y if self.y.ndim == 1 else np.array(y)  # never alias the table's rows


class Table2D(Block):
    r"""Two-dimensional lookup table, bilinear: :math:`y = f(u_0, u_1)` on the grid
    ``x`` (along :math:`u_0`) by ``y`` (along :math:`u_1`) with values ``z[i, j]``
    at :math:`(x_i, y_j)`.

    With :math:`a = \frac{u_0 - x_i}{x_{i+1} - x_i}`, :math:`b = \frac{u_1 - y_j}{y_{j+1} - y_j}`:

    .. math::

        f = (1-a)(1-b)\, z_{i,j} + a (1-b)\, z_{i+1,j} + (1-a)\, b\, z_{i,j+1} + a b\, z_{i+1,j+1}

    the same as :class:`scipy.interpolate.RegularGridInterpolator` with
    ``method="linear"``.  Extrapolation: ``"clip"`` clamps each input to its
    breakpoint range, ``"linear"`` extends the edge cells, ``"error"`` raises.

    Ports
    -----
    in   u0  scalar [input_units[0]]
    in   u1  scalar [input_units[1]]
    out  y   scalar [unit]; feedthrough from both

    Parameters
    ----------
    x, y : array_like
        Breakpoints along :math:`u_0` and :math:`u_1`, strictly increasing, at least 2.
    z : array_like
        Values, shape (len(x), len(y)).
    extrapolation : str
        ``"clip"`` (default), ``"linear"`` or ``"error"``.
    input_units : (str, str), optional
        Units of ``u0`` and ``u1``.
    unit : str, optional
        Unit of ``y``.
    """

    def __init__(self, name: str, x: Any, y: Any, z: Any, extrapolation: str = "clip",
                 input_units: tuple = (None, None), unit: str | None = None,
                 **old: Any) -> None:
        refuse_renamed("Table2D", name, old)
        unit_in0, unit_in1 = input_units
        super().__init__(name)
        kind = "Table2D"
        self.extrapolation = _choice(kind, name, "extrapolation", extrapolation, _EXTRAP_TABLE)
        self.x = _breakpoints(kind, name, "x", x)
        self.y = _breakpoints(kind, name, "y", y)
        expected = f"finite numbers of shape (len(x), len(y)) = {(self.x.size, self.y.size)}"
        if not VALUES.accepts(z):
            raise refuse(self, "z", z, expected)
        z_in, z = z, np.asarray(z, dtype=float)
        if z.shape != (self.x.size, self.y.size):
            raise refuse(self, "z", z_in, f"{expected} (got shape {z.shape})")
        self.z = z
        self._xl, self._yl, self._zl = self.x.tolist(), self.y.tolist(), z.tolist()
        self.u0 = self.declare_input("u0", unit=unit_in0)
        self.u1 = self.declare_input("u1", unit=unit_in1)
        if extrapolation == "clip":
            self.lookup = _bilinear_clip(self._xl, self._yl, self._zl)  # compiled once
        self.y_port = self.declare_output("y", self._calc, unit=unit)

    def _axis(self, grid: list, u: float, which: str) -> tuple[int, float]:
        if not grid[0] <= u <= grid[-1]:
            if self.extrapolation == "error":
                raise ValueError(f"Table2D '{self.path}': input {which} = {u!r} outside the "
                                 f"breakpoints [{grid[0]!r}, {grid[-1]!r}] "
                                 "(extrapolation='error')")
            if self.extrapolation == "clip":
                u = min(max(u, grid[0]), grid[-1])
        i = min(max(bisect_right(grid, u) - 1, 0), len(grid) - 2)
        return i, (u - grid[i]) / (grid[i + 1] - grid[i])

    def lookup(self, u0: float, u1: float) -> float:
        """The table value at ``(u0, u1)`` (with ``"clip"`` replaced on the instance by the
        closure :func:`_bilinear_clip`, compiled once: the same arithmetic)."""
        i, a = self._axis(self._xl, u0, "u0")
        j, b = self._axis(self._yl, u1, "u1")
        z0, z1 = self._zl[i], self._zl[i + 1]
        return ((1 - a) * ((1 - b) * z0[j] + b * z0[j + 1])
                + a * ((1 - b) * z1[j] + b * z1[j + 1]))

    def _calc(self, ctx: Any) -> float:
        return self.lookup(ctx.input(self.u0), ctx.input(self.u1))


class FromArrays(Block):
    r"""Source playing recorded samples :math:`(t_i, v_i)` as a function of time.

    * ``"linear"``: :math:`y(t) = v_i + \frac{t - t_i}{t_{i+1} - t_i}(v_{i+1} - v_i)` for
      :math:`t_i \le t \le t_{i+1}`;
    * ``"previous"`` (zero-order hold): :math:`y(t) = v_i` for :math:`t_i \le t < t_{i+1}`;
      the branch is chosen at ``ctx.mode_time`` and time events at the instants
      where the value jumps make the integrators stop there, so the integral of
      the output is the exact sum of rectangles.

    Outside :math:`[t_0, t_{n-1}]`: ``"hold"`` keeps the first/last value,
    ``"error"`` raises.  The instants are rounded to the 1 ns time grid.

    A time given twice (or more) is a step, as in FMPy's ``Input``: the value jumps
    there from the first row of that time (the left limit) to the last one (the value
    at and after the instant; linear interpolation goes on from it).  The instant is
    a time event, and while integrating the interval that ends there the left limit
    is used (chosen by ``ctx.mode_time``).

    ``dtype`` (default float) may be an integer type or ``bool`` with
    ``interpolation="previous"``: the values are then played exactly (an Int64/UInt64
    sample is a Python int, never a float64); :data:`cosim.ports.STRING` or
    :data:`~cosim.ports.BINARY` play ``str`` or ``bytes`` samples (an FMU's String or
    Binary input).

    Ports
    -----
    out  y   scalar for ``values`` of shape (n,), (k,) for (n, k) [unit]; time only

    Parameters
    ----------
    t : array_like
        Instants :math:`t_i` [s], nondecreasing (a repeated instant is a step).
    values : array_like
        Samples :math:`v_i`, shape (n,) or (n, k).
    interpolation : str
        ``"linear"`` (default) or ``"previous"``.
    extrapolation : str
        ``"hold"`` (default) or ``"error"``.
    unit : str, optional
        Unit of ``y``.
    dtype : type
        ``float`` (default), an integer type, ``bool``, ``cosim.ports.STRING`` or
        ``BINARY`` (all but float with ``"previous"``).
    """

    def __init__(self, name: str, t: Any, values: Any, interpolation: str = "linear",
                 extrapolation: str = "hold", unit: str | None = None,
                 dtype: Any = float) -> None:
        super().__init__(name)
        kind = type(self).__name__
        dt = np.dtype(dtype)
        if dt.kind not in "fiubO":
            raise ParameterError(f"{kind} '{name}': dtype must be a float, integer or bool "
                                 "type, or cosim.ports.STRING / BINARY, got "
                                 f"{dtype!r}")
        if dt.kind != "f" and interpolation != "previous":
            raise ParameterError(f"{kind} '{name}': an {dt} signal cannot be interpolated "
                                 "linearly; use interpolation='previous'")
        self.interpolation = _choice(kind, name, "interpolation", interpolation,
                                     ("linear", "previous"))
        self.extrapolation = _choice(kind, name, "extrapolation", extrapolation,
                                     ("hold", "error"))
        t = _breakpoints(kind, name, "t", t, 2 if interpolation == "linear" else 1,
                         repeats=True)
        ticks = np.round(t * TICKS_PER_SECOND).astype(np.int64)
        if np.any((np.diff(ticks) <= 0) & (np.diff(t) > 0)):
            raise ParameterError(f"{kind} '{name}': t has instants closer than the 1 ns time "
                                 "resolution")
        if interpolation == "linear" and ticks[-1] == ticks[0]:
            raise ParameterError(f"{kind} '{name}': t needs at least 2 different instants "
                                 "for interpolation='linear'")
        self.t = t
        if dt.kind == "f":
            self.values = _values(kind, name, "values", values, t.size, "t")
        else:
            self.values = _exact_values(kind, name, values, t.size, dt)
        self._tl, self._ticks = t.tolist(), ticks.tolist()
        self._vl = self.values.tolist() if self.values.ndim == 1 else list(self.values)
        # steps: tick of a repeated instant -> (first row, last row) there
        self._steps: dict[int, tuple[int, int]] = {}
        for i in np.flatnonzero(np.diff(ticks) == 0).tolist():
            first = self._steps.get(self._ticks[i], (i, i))[0]
            self._steps[self._ticks[i]] = (first, i + 1)
        v = self.values.reshape(t.size, -1)
        jumps = np.flatnonzero(np.any(v[1:] != v[:-1], axis=1)) + 1
        if interpolation == "linear":  # only the steps are discontinuities
            jumps = jumps[np.diff(ticks)[jumps - 1] == 0]
        if jumps.size:
            self.declare_time_event(sorted({Fraction(int(ticks[i]), TICKS_PER_SECOND)
                                            for i in jumps}))
        shape = () if self.values.ndim == 1 else (self.values.shape[1],)
        calc = self._previous if interpolation == "previous" else self._linear
        self.y = self.declare_output("y", calc, shape=shape, unit=unit, depends_on=(),
                                     dtype=dt)

    def _out_of_range(self, tick: int) -> bool:
        return self.extrapolation == "error" and not self._ticks[0] <= tick <= self._ticks[-1]

    def _range_error(self, t: float) -> ValueError:
        return ValueError(f"{type(self).__name__} '{self.path}': t = {t:.9g} s outside the data "
                          f"[{self._tl[0]:.9g}, {self._tl[-1]:.9g}] s (extrapolation='error')")

    def _previous(self, ctx: Any) -> Any:
        tick = round(ctx.mode_time * TICKS_PER_SECOND)
        if self._out_of_range(tick):
            raise self._range_error(ctx.mode_time)
        i = max(bisect_right(self._ticks, tick) - 1, 0)
        v = self._vl[i]
        return v if self.values.ndim == 1 else v.copy()  # never alias the data rows

    def _linear(self, ctx: Any) -> Any:
        t = ctx.time
        tick = round(t * TICKS_PER_SECOND)
        if self._out_of_range(tick):
            raise self._range_error(t)
        tl, vl = self._tl, self._vl
        step = self._steps.get(tick) if self._steps else None
        if step is not None:  # at a step: the left limit while integrating up to it
            left = round(ctx.mode_time * TICKS_PER_SECOND) < tick
            v = vl[step[0] if left else step[1]]
        elif t <= tl[0]:
            v = vl[0]
        elif t >= tl[-1]:
            v = vl[-1]
        else:
            i = bisect_right(tl, t) - 1
            w = (t - tl[i]) / (tl[i + 1] - tl[i])
            return vl[i] + w * (vl[i + 1] - vl[i])
        return v if self.values.ndim == 1 else v.copy()


def _read_csv(kind: str, name: str, path: Path, delimiter: str) -> tuple[list[str], np.ndarray]:
    """Header names and the numeric data of a CSV file (``#`` starts a comment)."""
    try:
        with path.open(newline="") as f:
            lines = f.readlines()
    except OSError as exc:
        raise ParameterError(f"{kind} '{name}': cannot read '{path}': {exc.strerror}") from None
    header_row = next((i for i, line in enumerate(lines)
                       if line.strip() and not line.lstrip().startswith("#")), None)
    if header_row is None:
        raise ParameterError(f"{kind} '{name}': '{path}' is empty (expected a header line)")
    header = [h.strip() for h in next(csv.reader([lines[header_row]], delimiter=delimiter))]
    if not any(line.strip() and not line.lstrip().startswith("#")
               for line in lines[header_row + 1:]):
        raise ParameterError(f"{kind} '{name}': '{path}' has a header but no data rows")
    try:
        data = np.loadtxt(path, delimiter=delimiter, skiprows=header_row + 1, comments="#",
                          ndmin=2, dtype=float)
    except ValueError as exc:
        raise ParameterError(f"{kind} '{name}': '{path}' has non-numeric or ragged data "
                             f"({exc})") from None
    if data.shape[1] != len(header):
        raise ParameterError(f"{kind} '{name}': '{path}' has {len(header)} header columns but "
                             f"{data.shape[1]} data columns")
    return header, data


class FromFile(FromArrays):
    r"""Source playing a CSV file: a header line, then numeric rows.

    ``columns`` picks the played columns: a name gives a scalar output, a list
    of names a vector in that order, ``None`` every column except
    ``time_column`` (a scalar if there is only one).  Interpolation and
    extrapolation as in :class:`FromArrays`: with the rows :math:`(t_i, v_i)`,
    :math:`y(t) = v_i + \frac{t - t_i}{t_{i+1} - t_i}(v_{i+1} - v_i)` (``"linear"``)
    or :math:`y(t) = v_i` (``"previous"``) for :math:`t_i \le t < t_{i+1}`.

    Ports
    -----
    out  y   scalar or (k,) [unit]; time only

    Parameters
    ----------
    path : str or Path
        The CSV file (``#`` starts a comment).
    time_column : str
        Name of the time column [s] (default ``"time"``).
    columns : str, list of str or None
        The played columns (above).
    interpolation, extrapolation : str
        As :class:`FromArrays`.
    unit : str, optional
        Unit of ``y``.
    delimiter : str
        Column separator (default ``","``).
    """

    def __init__(self, name: str, path: str | Path, time_column: str = "time",
                 columns: str | list[str] | None = None, interpolation: str = "linear",
                 extrapolation: str = "hold", unit: str | None = None,
                 delimiter: str = ",") -> None:
        kind = "FromFile"
        self.file = Path(path)
        header, data = _read_csv(kind, name, self.file, delimiter)

        def col(c: str) -> int:
            if c not in header:
                raise ParameterError(f"{kind} '{name}': column {c!r} not found in "
                                     f"'{self.file}'; available columns: {', '.join(header)}")
            return header.index(c)

        it = col(time_column)
        if columns is None:
            names = [h for h in header if h != time_column]
            if not names:
                raise ParameterError(f"{kind} '{name}': '{self.file}' has no data column "
                                     f"besides {time_column!r}")
            scalar = len(names) == 1
        else:
            scalar = isinstance(columns, str)
            names = [columns] if scalar else list(columns)
        idx = [col(c) for c in names]
        self.columns = names
        values = data[:, idx[0]] if scalar else data[:, idx]
        try:
            super().__init__(name, data[:, it], values, interpolation, extrapolation, unit)
        except ParameterError as exc:
            raise ParameterError(f"{exc} (data read from '{self.file}')") from None

