"""Integrators for the continuous part of a diagram.

Fixed step
    :class:`Euler` (order 1), :class:`Heun` (2), :class:`Midpoint` (2),
    :class:`RK4` (4): explicit Runge-Kutta methods given by a Butcher tableau;
    :class:`AB3` (3): Adams-Bashforth three-step, started with RK4 steps (as
    in the ACC simulator of Kim et al. at 8 ms).
Variable step
    ``rk45``, ``dop853``, ``radau``, ``bdf``, ``lsoda``: SciPy's
    :class:`scipy.integrate.OdeSolver` classes, driven step by step with their
    dense output so sample hits and events are met exactly.

A fixed-step solver follows SciPy's contract: the public :meth:`advance`
counts evaluations and checks the result; subclasses implement
:meth:`_step_impl`.  Time is never accumulated here: the caller passes ``t``
computed from integer ticks.

Implementers' checklist
-----------------------
1. Subclass :class:`FixedStepSolver`, set ``order`` and ``name``.
2. Implement ``_step_impl(t, y, h) -> y_new`` using ``self.fun(t, y)`` so that
   ``nfev`` is counted; do not modify ``y`` in place.
3. Multistep methods override :meth:`reset` to forget their history (called
   after events and state resets).
4. Pass the class itself, ``Simulator(..., solver=MyMethod)``, or name it once with
   :func:`register_solver` (``@register_solver`` on the class) for ``solver="name"``.
   An explicit Runge-Kutta method that gives its ``tableau`` gets the fused propagation
   of linear parts (``Evaluator.make_propagator``) like the built-in ones; a multistep
   one (``multistep = True``) does not.
5. Optionally (explicit Runge-Kutta methods) implement ``_float_source(n)``: the body of
   the same step in Python floats for ``n`` states (see below), the same operations in
   the same order, element by element.

Small systems in floats
-----------------------
For a handful of states NumPy's per-call overhead is most of a stage's arithmetic
(``y + h a k`` on two elements costs ~0.6 us in NumPy, ~0.2 us as a list comprehension).
Given ``fun_floats`` (``(t, y) -> list of floats``, ``y`` a list of floats or, at the
first stage, the step's start array), the explicit Runge-Kutta methods below compute
their stages element by element in Python floats, by a function generated per method and
number of states with the elements unrolled (:func:`_float_step`).  Every element sees the same IEEE
operations in the same order as in the array code (NumPy's element-wise ``+`` and ``*``
are correctly rounded and never fused), so the results are the same bit for bit
(tested).  The simulator uses this for systems of at most :data:`FLOAT_STATES_MAX`
states.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable

import numpy as np

from .errors import SolverError

#: The largest state vector for which the simulator runs the fixed-step stages in Python
#: floats (module docstring).  Measured (RK4, one block driven by a sine, CPU per step):
#: 0.57-0.71 of the array path's time at 2-8 scalar states (0.87 at 24), 0.91-0.95 with one
#: vector state of 2-8 (whose array each stage then builds; equal at 16).
FLOAT_STATES_MAX = 8


class FixedStepSolver:
    """Base class: one step of size ``h`` from ``(t, y)``."""

    fixed = True
    order = 0
    name = "base"
    tableau: tuple | None = None  # (a, b, c) for explicit Runge-Kutta methods
    #: a multistep method: keeps history that :meth:`reset` forgets (the simulator
    #: restarts it where the right-hand side jumps)
    multistep = False

    def __init__(self, fun: Callable[[float, np.ndarray], np.ndarray], t0: float = 0.0,
                 y0: np.ndarray | None = None, h: float | None = None,
                 t_bound: float = np.inf, fun_floats: Callable | None = None) -> None:
        self.fun_raw = fun
        #: ``(t, y) -> list`` for the float path (module docstring), or None
        self.fun_floats = fun_floats if hasattr(self, "_step_floats") else None
        self.nfev = 0
        self.nsteps = 0
        # standalone use (like scipy's OdeSolver): step() advances (t, y) by h
        self.t0, self.t, self.h, self.t_bound = t0, t0, h, t_bound
        self.y = None if y0 is None else np.asarray(y0, dtype=float).copy()
        self.status = "running"

    def step(self) -> None:
        """Advance ``(self.t, self.y)`` by one step ``h`` (the last one stops at ``t_bound``).

        Time is ``t0 + n*h``, never accumulated.
        """
        if self.status != "running":
            raise SolverError(f"{self.name}: step() called after status {self.status!r}")
        if self.y is None or not self.h:
            raise SolverError(f"{self.name}: construct with y0 and h to use step()")
        n = self.nsteps
        t_next = min(self.t0 + (n + 1) * self.h, self.t_bound)
        self.y = self.advance(self.t, self.y, t_next - self.t)
        self.t = t_next
        if self.t >= self.t_bound:
            self.status = "finished"

    def fun(self, t: float, y: np.ndarray) -> np.ndarray:
        self.nfev += 1
        return self.fun_raw(t, y)

    def advance(self, t: float, y: np.ndarray, h: float) -> np.ndarray:
        """Advance one step; returns the new state (a new array)."""
        if not h > 0.0:
            raise SolverError(f"{self.name}: step size must be positive, got {h!r}")
        self.nsteps += 1
        if self.fun_floats is not None:
            return self._step_floats(t, y, h)
        return self._step_impl(t, y, h)

    def _step_impl(self, t: float, y: np.ndarray, h: float) -> np.ndarray:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget any history (multistep methods)."""


class ExplicitRungeKutta(FixedStepSolver):
    """Explicit Runge-Kutta method defined by ``tableau = (a, b, c)``."""

    def _step_impl(self, t: float, y: np.ndarray, h: float) -> np.ndarray:
        a, b, c = self.tableau
        ks = []
        for i in range(len(b)):
            yi = y
            for j in range(i):
                if a[i][j]:
                    yi = yi + (h * a[i][j]) * ks[j]
            ks.append(np.asarray(self.fun(t + c[i] * h, yi)))
        out = y
        for i, bi in enumerate(b):
            if bi:
                out = out + (h * bi) * ks[i]
        return out

    def _step_floats(self, t: float, y: np.ndarray, h: float) -> np.ndarray:
        """:meth:`_step_impl` in Python floats (module docstring), by a function generated
        for this method and this number of states (:func:`_float_step`)."""
        fn = _float_step(self, y.size)
        self.nfev += len(self.tableau[1])
        return fn(self.fun_floats, t, y, h)

    def _float_source(self, n: int) -> list[str]:
        """The body of the float step ``(f, t, y, h)`` for ``n`` states: :meth:`_step_impl`'s
        operations element by element (stage ``i``'s value of state ``e`` is ``k{i}_{e}``;
        a stage that adds nothing to ``y`` gets ``y`` itself, as in the array code)."""
        a, b, c = self.tableau
        el = range(n)
        lines = [_unpack("y", n) + " = y.tolist()"]
        for i in range(len(b)):
            terms = [j for j in range(i) if a[i][j]]
            for j in terms:
                lines.append(f"w{i}_{j} = h * {a[i][j]!r}")
            if terms:
                vals = []
                for e in el:
                    expr = f"y{e}"
                    for j in terms:
                        expr = f"({expr} + w{i}_{j} * k{j}_{e})"
                    vals.append(expr)
                arg = "[" + ", ".join(vals) + "]"
            else:
                arg = "y"
            lines.append(f"{_unpack(f'k{i}_', n)} = f(t + {c[i]!r} * h, {arg})")
        used = [i for i, bi in enumerate(b) if bi]
        if not used:
            return lines + ["return y.copy()"]
        for i in used:
            lines.append(f"v{i} = h * {b[i]!r}")
        outs = []
        for e in el:
            expr = f"y{e}"
            for i in used:
                expr = f"({expr} + v{i} * k{i}_{e})"
            outs.append(expr)
        return lines + ["return _array([" + ", ".join(outs) + "], dtype=float)"]


class Euler(ExplicitRungeKutta):
    """Forward Euler, order 1: :math:`y_{n+1} = y_n + h f(t_n, y_n)`."""

    order, name = 1, "euler"
    tableau = (((0.0,),), (1.0,), (0.0,))

    def _step_impl(self, t, y, h):
        return y + h * np.asarray(self.fun(t, y))

    def _float_source(self, n):
        return [_unpack("y", n) + " = y.tolist()", _unpack("a", n) + " = f(t, y)",
                "return _array([" + ", ".join(f"y{e} + h * a{e}" for e in range(n))
                + "], dtype=float)"]


class Heun(ExplicitRungeKutta):
    """Heun's method (explicit trapezoid), order 2."""

    order, name = 2, "heun"
    tableau = (((0.0, 0.0), (1.0, 0.0)), (0.5, 0.5), (0.0, 1.0))

    def _step_impl(self, t, y, h):
        k1 = np.asarray(self.fun(t, y))
        k2 = np.asarray(self.fun(t + h, y + h * k1))
        return y + (0.5 * h) * (k1 + k2)

    def _float_source(self, n):
        el = range(n)
        return [_unpack("y", n) + " = y.tolist()", _unpack("a", n) + " = f(t, y)",
                _unpack("b", n) + " = f(t + h, [" + ", ".join(f"y{e} + h * a{e}" for e in el)
                + "])",
                "w = 0.5 * h",
                "return _array([" + ", ".join(f"y{e} + w * (a{e} + b{e})" for e in el)
                + "], dtype=float)"]


class Midpoint(ExplicitRungeKutta):
    """Explicit midpoint rule, order 2."""

    order, name = 2, "midpoint"
    tableau = (((0.0, 0.0), (0.5, 0.0)), (0.0, 1.0), (0.0, 0.5))


class RK4(ExplicitRungeKutta):
    """Classical fourth-order Runge-Kutta method."""

    order, name = 4, "rk4"
    tableau = (((0, 0, 0, 0), (0.5, 0, 0, 0), (0, 0.5, 0, 0), (0, 0, 1.0, 0)),
               (1 / 6, 1 / 3, 1 / 3, 1 / 6), (0.0, 0.5, 0.5, 1.0))

    def _step_impl(self, t, y, h, k1=None):
        """One step; ``k1``: :math:`f(t, y)` when the caller has it (AB3's starter)."""
        f = self.fun_raw  # the hot path: one frame less than self.fun, counted here
        asarray = np.asarray
        if k1 is None:
            self.nfev += 4
            k1 = asarray(f(t, y))
        else:
            self.nfev += 3
        hh = 0.5 * h
        k2 = asarray(f(t + hh, y + hh * k1))
        k3 = asarray(f(t + hh, y + hh * k2))
        k4 = asarray(f(t + h, y + h * k3))
        return y + (h / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)

    def _float_source(self, n):
        """For n = 2::

            y0, y1, = y.tolist()
            a0, a1, = f(t, y)
            hh = 0.5 * h
            b0, b1, = f(t + hh, [y0 + hh * a0, y1 + hh * a1])
            c0, c1, = f(t + hh, [y0 + hh * b0, y1 + hh * b1])
            d0, d1, = f(t + h, [y0 + h * c0, y1 + h * c1])
            w = h / 6.0
            return _array([y0 + w * (a0 + 2.0 * (b0 + c0) + d0),
                           y1 + w * (a1 + 2.0 * (b1 + c1) + d1)], dtype=float)
        """
        el = range(n)

        def stage(k, dt, w, prev):
            return (_unpack(k, n) + f" = f(t + {dt}, ["
                    + ", ".join(f"y{e} + {w} * {prev}{e}" for e in el) + "])")
        return [_unpack("y", n) + " = y.tolist()", _unpack("a", n) + " = f(t, y)",
                "hh = 0.5 * h", stage("b", "hh", "hh", "a"), stage("c", "hh", "hh", "b"),
                stage("d", "h", "h", "c"), "w = h / 6.0",
                "return _array([" + ", ".join(f"y{e} + w * (a{e} + 2.0 * (b{e} + c{e}) + d{e})"
                                              for e in el) + "], dtype=float)"]


class AB3(FixedStepSolver):
    """Adams-Bashforth three-step method, order 3.

    .. math:: y_{n+1} = y_n + \\frac{h}{12}(23 f_n - 16 f_{n-1} + 5 f_{n-2})

    The first two steps (and any step after :meth:`reset`, or whose size
    differs from the history's) are taken with RK4, so the order is kept; the
    starter reuses :math:`f_n` as its first stage (3 more evaluations).
    """

    order, name = 3, "ab3"
    multistep = True

    def __init__(self, fun, *args, **kwargs):
        super().__init__(fun, *args, **kwargs)
        self._starter = RK4(fun)
        self.reset()

    def reset(self) -> None:
        self._hist: list[np.ndarray] = []
        self._h = None

    def history(self) -> tuple[list[np.ndarray], float | None]:
        """The history, oldest first (0 to 2 right-hand sides), and the step size it was
        taken with (None after :meth:`reset`): what a compiled run takes over
        (:mod:`cosim.compiled_run`)."""
        return [f.copy() for f in self._hist], self._h

    def restore(self, hist: list, h: float | None) -> None:
        """Go on from ``hist`` and ``h`` as :meth:`history` gives them (a compiled run's
        history handed back)."""
        self._hist = [np.array(f, dtype=float) for f in hist]
        self._h = h

    def _step_impl(self, t, y, h):
        fn = np.asarray(self.fun(t, y)).copy()
        if self._h is not None and h != self._h:
            self._hist = []
        self._h = h
        hist = self._hist
        if len(hist) < 2:
            hist.append(fn)
            y_new = self._starter._step_impl(t, y, h, fn)
            self.nfev += self._starter.nfev
            self._starter.nfev = 0
            return y_new
        f1, f2 = hist[-1], hist[-2]
        y_new = y + (h / 12.0) * (23.0 * fn - 16.0 * f1 + 5.0 * f2)
        hist.append(fn)
        if len(hist) > 2:
            del hist[0]
        return y_new


def _unpack(prefix: str, n: int) -> str:
    """``"a0, a1,"``: the names of ``n`` elements (a trailing comma: also for one)."""
    return ", ".join(f"{prefix}{e}" for e in range(n)) + ","


_FLOAT_STEPS: dict = {}


def _float_step(solver: FixedStepSolver, n: int) -> Callable:
    """``step(f, t, y, h)`` of ``solver``'s method in Python floats for ``n`` states,
    generated from its ``_float_source(n)`` and cached per class and size: the elements
    unrolled (no per-stage comprehension; ~0.15 us per stage at two states)."""
    key = (type(solver), n)
    fn = _FLOAT_STEPS.get(key)
    if fn is None:
        name = "".join(c if c.isalnum() else "_" for c in f"{solver.name}_floats_{n}")
        src = f"def _{name}(f, t, y, h):\n" + "".join(
            f"    {line}\n" for line in solver._float_source(n))
        filename = f"<cosim-{name}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        ns = {"_array": np.array}
        exec(compile(src, filename, "exec"), ns)
        fn = _FLOAT_STEPS[key] = ns[f"_{name}"]
    return fn


class VariableStepSolver:
    """A variable-step method: one of SciPy's :class:`scipy.integrate.OdeSolver` classes,
    driven by :mod:`cosim.variable_step` (the class is named, not held: SciPy is imported
    only when a variable-step run starts)."""

    fixed = False
    name = "base"
    scipy_name = ""
    #: implicit, for stiff systems: a failed step says so, and says nothing of stiffness
    stiff = False

    @classmethod
    def scipy_class(cls) -> type:
        import scipy.integrate as si
        return getattr(si, cls.scipy_name)


def _scipy_method(name: str, scipy_name: str, stiff: bool = False) -> type:
    return type(scipy_name, (VariableStepSolver,),
                {"name": name, "scipy_name": scipy_name, "stiff": stiff,
                 "__doc__": f"SciPy's ``{scipy_name}`` (variable step"
                            f"{', stiff' if stiff else ''})."})


#: Every solver by name (:func:`register_solver`); ``Simulator(solver=...)`` takes a name
#: from here or a solver class itself (a :class:`FixedStepSolver` subclass or a
#: :class:`VariableStepSolver`), as PathSim takes its solver classes.
SOLVERS: dict[str, type] = {}
#: The fixed-step part of :data:`SOLVERS` (kept in step by :func:`register_solver`).
FIXED_STEP: dict[str, type] = {}


def register_solver(cls: type) -> type:
    """Make ``cls`` known by its ``name`` (lower case) to ``Simulator(solver="name")``;
    usable as a class decorator.  A name already taken by another class is an error."""
    if not (isinstance(cls, type) and issubclass(cls, (FixedStepSolver, VariableStepSolver))):
        raise TypeError(f"register_solver: {cls!r} is not a FixedStepSolver subclass or a "
                        "VariableStepSolver")
    key = str(cls.name).lower()
    if key in ("", "base"):
        raise ValueError(f"register_solver: {cls.__name__} has no name of its own")
    if SOLVERS.get(key, cls) is not cls:
        raise ValueError(f"register_solver: the name {key!r} is taken by "
                         f"{SOLVERS[key].__name__}")
    SOLVERS[key] = cls
    if issubclass(cls, FixedStepSolver):
        FIXED_STEP[key] = cls
    return cls


for _cls in (Euler, Heun, Midpoint, RK4, AB3,
             _scipy_method("rk45", "RK45"), _scipy_method("rk23", "RK23"),
             _scipy_method("dop853", "DOP853"), _scipy_method("radau", "Radau", stiff=True),
             _scipy_method("bdf", "BDF", stiff=True),
             _scipy_method("lsoda", "LSODA", stiff=True)):
    register_solver(_cls)


def resolve_solver(solver: str | type) -> type:
    """The solver class of ``solver``: a registered name (any case) or a class."""
    if isinstance(solver, type):
        if issubclass(solver, FixedStepSolver) and solver is not FixedStepSolver \
                or issubclass(solver, VariableStepSolver) and solver.scipy_name:
            return solver
        raise ValueError(f"solver {solver.__name__} is neither a FixedStepSolver subclass "
                         "nor a VariableStepSolver with a scipy_name")
    key = str(solver).lower()
    if key not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)} "
                         "or pass a solver class (cosim.solvers.register_solver names one)")
    return SOLVERS[key]


def make_fixed(solver: str | type, fun: Callable,
               fun_floats: Callable | None = None) -> FixedStepSolver:
    """The fixed-step solver ``solver`` (name or class) on ``fun``; ``fun_floats``: the
    float path's right-hand side (module docstring; ignored by methods without one)."""
    return resolve_solver(solver)(fun, fun_floats=fun_floats)
