r"""Flatness-based tracking: feedforward from a plan plus exact linearization.

A :class:`LinearizingLaw` (implemented by a model next to its
:class:`~.system.FlatSystem`) states, for every flat output :math:`z_i`, the relative
degree :math:`r_i` after dynamic extension (prolongation of inputs into controller
states :math:`\zeta`), how to measure :math:`z_i, \dots, z_i^{(r_i-1)}` from the plant
state and :math:`\zeta`, and the linearizing input: the :math:`(u, \dot\zeta)` that
makes :math:`z_i^{(r_i)} = v_i` for any new input :math:`v`.  :class:`FlatTracker`
closes the loop with

.. math::

    v_i = z_{i,d}^{(r_i)} + \sum_{j=0}^{r_i-1} k_{i,j}\,\big(z_{i,d}^{(j)} - z_i^{(j)}\big)

so each tracking error :math:`e_i = z_{i,d} - z_i` obeys
:math:`e_i^{(r_i)} + k_{i,r_i-1} e_i^{(r_i-1)} + \dots + k_{i,0} e_i = 0` exactly (for
:math:`r_i = 2`: :math:`\ddot e + k_v \dot e + k_p e = 0`).  Gains are given as ``kp``/``kv``
(relative degree 2), as ``gains`` (one row :math:`k_{i,0}, \dots, k_{i,r_i-1}` per output)
or as ``poles`` (one row of :math:`r_i` closed-loop poles per output, real or in
conjugate pairs).

The ports of :class:`FlatTracker` are in its Ports table.

Where the law has a singular set (:meth:`LinearizingLaw.singularity` crosses zero; a
closed loop can reach it even when the plan stays clear of it, while the errors decay)
the exact error dynamics fail: ``on_singular="raise"`` (default) stops the run there with
a :class:`~cosim.errors.StepError` naming the block and the time (located as a state
event); ``"ignore"`` runs on (the solver then steps over a pole of the input, and the
result is not exact); the ``singularity`` output shows the law's singularity function
either way.

A plan's derivatives of order :math:`\ge k` (its boundary order) jump at :math:`t_0` and
:math:`t_f`; the integrator stops there (time events), but the first stage of the step
that starts at the jump still sees the inside value, so the error dynamics stay exact
across the ends only when the plan has :math:`k > r_i` (derivatives up to the relative
degree zero or continuous at the ends).

With ``period_s`` the law runs sampled (an ECU): :math:`u` is computed at each hit from
the state then and held, and :math:`\zeta` advances by :math:`T\dot\zeta` (exact for a
held :math:`v`); the error dynamics are then exact only to :math:`O(T)`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError, StepError
from cosim.params import POSITIVE, Array

from .plan import Plan


class LinearizingLaw:
    """The exact-linearization interface a model implements (see the module docstring)."""

    #: names of the plant state read by the law, in order
    states: tuple[str, ...] = ()
    #: names of the plant inputs produced, in order
    inputs: tuple[str, ...] = ()
    #: relative degree of each flat output after the dynamic extension
    relative_degree: tuple[int, ...] = ()
    #: number of controller (dynamic-extension) states
    n_extension: int = 0

    def extension_initial(self, x: np.ndarray, zflag: list[np.ndarray]) -> np.ndarray:
        """Initial controller states from the initial plant state and the plan's flag."""
        return np.zeros(self.n_extension)

    def measured_flag(self, x: np.ndarray, zeta: np.ndarray) -> np.ndarray:
        """Derivatives 0..r_i-1 of each flat output, an array ``(m, max(r))``."""
        raise NotImplementedError

    def linearizing_input(self, x: np.ndarray, zeta: np.ndarray,
                          v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(u, zeta_dot)`` that make :math:`z_i^{(r_i)} = v_i`."""
        raise NotImplementedError

    def singularity(self, x: np.ndarray, zeta: np.ndarray) -> float | None:
        """A scalar that vanishes where the law is singular (None: it never is)."""
        return None


def error_gains(relative_degree: tuple[int, ...], kp: Any = None, kv: Any = None,
                gains: Any = None, poles: Any = None, who: str = "FlatTracker") -> list:
    """Per output the coefficients :math:`k_{i,0..r_i-1}` of the error dynamics."""
    given = [g is not None for g in (kp, gains, poles)]
    if sum(given) != 1 or (kv is not None and kp is None) or (kp is not None and kv is None):
        raise ParameterError(f"{who}: give the gains one way: kp and kv (relative degree 2), "
                             "gains (rows k_0..k_{r-1}) or poles (rows of r poles)")
    m = len(relative_degree)
    if kp is not None:
        if any(r != 2 for r in relative_degree):
            raise ParameterError(f"{who}: kp/kv need relative degree 2 for every output, "
                                 f"these are {relative_degree}; give gains or poles")
        kp = np.broadcast_to(np.asarray(kp, float), (m,))
        kv = np.broadcast_to(np.asarray(kv, float), (m,))
        rows = [np.array([kp[i], kv[i]]) for i in range(m)]
    elif gains is not None:
        rows = [np.asarray(g, float).reshape(-1) for g in gains]
    else:
        rows = []
        for i, p in enumerate(poles):
            p = np.asarray(p, complex).reshape(-1)
            c = np.poly(p)
            if np.max(np.abs(c.imag)) > 1e-9 * max(1.0, np.max(np.abs(c))):
                raise ParameterError(f"{who}: poles of output {i} must be real or come in "
                                     f"conjugate pairs, got {p}")
            rows.append(c.real[1:][::-1].copy())
    if len(rows) != m or any(len(r) != rd for r, rd in zip(rows, relative_degree)):
        raise ParameterError(f"{who}: need one row of r_i gains per flat output, relative "
                             f"degrees {relative_degree}, got {[len(r) for r in rows]}")
    for i, r in enumerate(rows):
        if not np.all(np.isfinite(r)):
            raise ParameterError(f"{who}: gains of output {i} must be finite, got {r}")
        roots = np.roots(np.concatenate([[1.0], r[::-1]]))
        if np.any(roots.real >= 0):
            raise ParameterError(f"{who}: the error dynamics of output {i} are not stable "
                                 f"(gains {r}, poles {roots}); all poles need Re < 0")
    return rows


class FlatTracker(Block):
    r"""Tracks a flat-output plan with exact linearization (law and gains: module
    docstring).

    .. math::

        v_i = z_{i,d}^{(r_i)} + \sum_{j=0}^{r_i-1} k_{i,j}\,\big(z_{i,d}^{(j)} - z_i^{(j)}\big)

    Ports
    -----
    in   x            (n,) [no unit]   measured plant state (the law's ``states``, in the
                                       plant's units)
    out  u            (m,) [no unit]   plant input; reads x (held between hits with
                                       ``period_s``)
    out  z_ref        (m,) [no unit]   planned flat outputs :math:`z_d(t)`; time only
    out  z            (m,) [no unit]   measured flat outputs; reads x
    out  error        (m,) [no unit]   :math:`z_d - z`; reads x
    out  singularity  scalar [no unit]  the law's singularity function (nan if it has
                                       none); reads x

    Parameters
    ----------
    law : LinearizingLaw
        The plant's linearizing law (relative degrees, flat outputs, input map).
    plan : Plan
        The flat-output plan :math:`z_d(t)` and its derivatives.
    kp, kv : float or array_like, optional
        Error gains for relative degree 2 (:math:`\ddot e + k_v \dot e + k_p e = 0`).
    gains : array_like, optional
        One row :math:`k_{i,0}, \dots, k_{i,r_i-1}` per flat output.
    poles : array_like, optional
        One row of :math:`r_i` closed-loop poles [1/s] per flat output.
    extension_initial : array_like, optional
        Initial dynamic-extension states :math:`\zeta` (default: from ``x0`` and the plan).
    x0 : array_like, optional
        The plant's initial state, to derive ``extension_initial``.
    period_s : float, optional
        Run the law sampled with this period [s] (an ECU); default continuous.
    on_singular : {"raise", "ignore"}
        At the law's singular set: stop the run (default) or run on.
    """

    # gains (rows of different lengths) and poles (complex) are checked by error_gains
    argument_checks = {"kp": Array(), "kv": Array(), "extension_initial": Array(), "x0": Array(),
                       "period_s": POSITIVE}

    def __init__(self, name: str, law: LinearizingLaw, plan: Plan, kp: Any = None,
                 kv: Any = None, gains: Any = None, poles: Any = None,
                 extension_initial: Any = None, x0: Any = None,
                 period_s: float | None = None, on_singular: str = "raise") -> None:
        super().__init__(name)
        if on_singular not in ("raise", "ignore"):
            raise ParameterError(f"FlatTracker '{name}': on_singular must be 'raise' or "
                                 f"'ignore', got {on_singular!r}")
        self.on_singular = on_singular
        self.law, self.plan = law, plan
        self.r = tuple(int(r) for r in law.relative_degree)
        self.m, self.n = len(self.r), len(law.states)
        if plan.noutputs != self.m:
            raise ParameterError(f"FlatTracker '{name}': the plan has {plan.noutputs} flat "
                                 f"outputs, the law {self.m}")
        self.k = error_gains(self.r, kp, kv, gains, poles, f"FlatTracker '{name}'")
        ne = law.n_extension
        if extension_initial is None and ne:
            if x0 is None:
                raise ParameterError(
                    f"FlatTracker '{name}': the law has {ne} dynamic-extension states; give "
                    "extension_initial or the plant's initial state x0 to derive them")
            extension_initial = law.extension_initial(
                np.asarray(x0, float), plan.flag(plan.t0, max(self.r)))
        zeta0 = np.zeros(ne) if extension_initial is None else np.asarray(extension_initial,
                                                                          float).reshape(-1)
        if zeta0.size != ne:
            raise ParameterError(f"FlatTracker '{name}': extension_initial needs {ne} values, "
                                 f"got {zeta0.size}")
        self.period = period_s
        self._cache = None
        self.x = self.declare_input("x", shape=(self.n,))
        if period_s is None:
            self.zeta = self.declare_continuous_state("zeta", zeta0) if ne else None
            ends = [t for t in (plan.t0, plan.tf) if t > 0.0]
            if ends:
                self.declare_time_event(ends)
        else:
            self.zeta = self.declare_discrete_state("zeta", zeta0)
            self.declare_periodic_update(period_s, self._update)
        self.u = self.declare_output("u", lambda c: self._law(c)[0], shape=(self.m,))
        self.z_ref = self.declare_output("z_ref", self._z_ref, shape=(self.m,), depends_on=())
        self.z = self.declare_output("z", lambda c: self._law(c)[2][:, 0], shape=(self.m,))
        self.error = self.declare_output("error", lambda c: self._law(c)[3], shape=(self.m,))
        has = type(law).singularity is not LinearizingLaw.singularity
        self.singularity = self.declare_output(
            "singularity", self._singularity if has else (lambda c: float("nan")))
        if has and on_singular == "raise":
            self.declare_zero_crossing(self._singularity, self._crossed, name="singular")

    def _singularity(self, ctx: Any) -> float:
        return float(self.law.singularity(np.asarray(ctx.input(self.x), float),
                                          self._zeta(ctx)))

    def _crossed(self, ctx: Any) -> None:
        raise StepError(
            f"FlatTracker '{self.name}' at t = {ctx.time:.6g} s: the closed loop crosses "
            f"the singular set of {type(self.law).__name__} (singularity function "
            f"{self._singularity(ctx):.3g}); the linearizing input is unbounded there. "
            "Use better-damped gains, start closer to the plan, or re-plan; "
            "on_singular='ignore' runs on through it")

    def _zeta(self, ctx: Any) -> np.ndarray:
        if self.zeta is None:
            return np.zeros(0)
        if self.period is None:
            return np.atleast_1d(ctx.state(self.zeta))
        return np.atleast_1d(np.asarray(ctx.discrete(self.zeta), float))

    def _z_ref(self, ctx: Any) -> np.ndarray:
        return self.plan.flag_array(ctx.time, 0)[:, 0]

    def _law(self, ctx: Any):
        """``(u, zeta_dot, measured flag, error)`` at the context's time and input.

        The outputs and the derivative share one evaluation per (time, x, zeta).
        """
        x = np.asarray(ctx.input(self.x), float)
        zeta = self._zeta(ctx)
        key = (ctx.time, x.tobytes(), zeta.tobytes())
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        value = self._evaluate(ctx.time, x, zeta)
        self._cache = (key, value)
        return value

    def _evaluate(self, t: float, x: np.ndarray, zeta: np.ndarray):
        rmax = max(self.r)
        zd = self.plan.flag_array(t, rmax)
        zm = np.asarray(self.law.measured_flag(x, zeta), float)
        v = np.empty(self.m)
        for i, r in enumerate(self.r):
            e = zd[i, :r] - zm[i, :r]
            v[i] = zd[i, r] + float(self.k[i] @ e)
        u, dz = self.law.linearizing_input(x, zeta, v)
        return np.asarray(u, float), np.asarray(dz, float), zm, zd[:, 0] - zm[:, 0]

    def derivatives(self, ctx: Any) -> Any:
        return self._law(ctx)[1]

    def _update(self, ctx: Any) -> None:
        if self.zeta is not None:
            ctx.set_discrete(self.zeta, self._zeta(ctx) + self.period * self._law(ctx)[1])
