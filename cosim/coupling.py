"""Coupling algorithms: how a macro step exchanges signals between subsystems.

Each is a small strategy object with ``step(master, k, t0, H)`` that sets
inputs, steps the subsystems that are due and publishes their outputs.

Timing (what subsystem B sees of A's output over the macro step
``[t_k, t_{k+1}]``, order-``p`` polynomials)::

    Jacobi:        A and B step from t_k at the same time (may run in parallel).
                   B's input = extrapolation of A's outputs at t_{k-p} .. t_k.
    Gauss-Seidel:  A steps first and publishes y_A(t_{k+1}); then B steps with
                   the interpolation through t_{k+1-p} .. t_{k+1} (no delay for
                   B; A still extrapolates B).
    Iterative:     A and B step from t_k with inputs interpolated through
                   t_{k+1-p} .. t_k and a guess z at t_{k+1}; both are rolled
                   back and redone until y(t_{k+1}) = z: each sees the other's
                   converged value at t_{k+1} (no delay, no extrapolation).

A subsystem that holds its inputs over a step (``max_input_order`` 0, e.g. a
Co-Simulation FMU without input interpolation) gets the newest value: A's output
at t_k under Jacobi, y_A(t_{k+1}) as Gauss-Seidel's later subsystem, the iterate
z under iterative coupling.

A subsystem with ``rate = r`` steps every ``r`` macro steps over ``r H`` and
publishes its outputs only when the master reaches the end of its step (a slow
subsystem never shows a future value early: results do not depend on which
thread finishes first).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .errors import BuildError, LoopConvergenceError, RateError
from .extrapolation import evaluate


class Coupling:
    """Base class of coupling strategies."""

    name = "base"

    def check(self, master: Any) -> None:
        """Refuse, at ``MasterScheduler(...)``, a master this coupling cannot run."""

    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        raise NotImplementedError


class Jacobi(Coupling):
    """All due subsystems step from the same extrapolated inputs.

    Parameters
    ----------
    parallel : bool
        Step the subsystems in a thread pool (results are identical: inputs are
        fixed before, outputs are published after all steps).
    """

    name = "jacobi"

    def __init__(self, parallel: bool = False, workers: int | None = None) -> None:
        self.parallel = parallel
        self.workers = workers
        self._pool = None

    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        due = master.due(k)
        for s in due:
            master.feed_inputs(s, t0)
        if self.parallel and len(due) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers or len(master.subsystems))
            futures = [self._pool.submit(master.step_subsystem, s, t0, s.rate * H)
                       for s in due]
            for f in futures:
                f.result()
        else:
            for s in due:
                master.step_subsystem(s, t0, s.rate * H)
        for s in due:
            master.collect(s, t0 + s.rate * H)


class GaussSeidel(Coupling):
    """Subsystems step one after the other; later ones interpolate earlier ones.

    Parameters
    ----------
    order : list of subsystem names, optional
        Stepping order (default: the order the subsystems were given in).
    """

    name = "gauss_seidel"

    def __init__(self, order: list[str] | None = None) -> None:
        self.order = order

    def check(self, master: Any) -> None:
        if not self.order:
            return
        names = [s.name for s in master.subsystems]
        unknown = [n for n in self.order if n not in names]
        if unknown:
            raise BuildError(f"GaussSeidel order {list(self.order)} names subsystem(s) "
                             f"{', '.join(repr(n) for n in unknown)} that the master does not "
                             f"have; its subsystems are {', '.join(names)}")
        missing = [n for n in names if n not in self.order]
        if missing:
            raise BuildError(f"GaussSeidel order {list(self.order)} does not name subsystem(s) "
                             f"{', '.join(repr(n) for n in missing)}; list every subsystem "
                             f"once, in the order they should step ({', '.join(names)})")
        if len(set(self.order)) != len(self.order):
            raise BuildError(f"GaussSeidel order {list(self.order)} names a subsystem twice; "
                             "list every subsystem once")

    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        due = master.due(k)
        if self.order:
            rank = {n: i for i, n in enumerate(self.order)}
            due = sorted(due, key=lambda s: rank[s.name])
        for s in due:
            master.feed_inputs(s, t0)
            master.step_subsystem(s, t0, s.rate * H)
            master.collect(s, t0 + s.rate * H)


_DISCRETE = ("; a non-Real (Boolean, Integer, Enumeration, String, Binary) coupling "
             "output changed in the last sweep: a discrete loop that does not settle")


def _max_abs(v: Any) -> float:
    """``max(|v|)`` (0 for an empty ``v``, NaN if any is), as ``np.max(np.abs(v),
    initial=0.0)`` gives it; ``v`` a list of floats (the iteration's vectors) or an array, in
    plain floats where there are a few entries (a NumPy call costs more)."""
    if type(v) is not list:
        if v.size > 16:
            return float(np.max(np.abs(v), initial=0.0))
        v = v.tolist()
    m = 0.0
    for x in v:
        a = abs(x)
        if a > m:
            m = a
        elif a != a:
            return a
    return m


_SMALL = 16  #: up to this many coupled signals the iteration's algebra runs in plain floats
_UNROLLED = 8  #: up to this many, in straight-line code made once per size (:func:`_kernels`)


def _dot(a: list, b: list) -> float:
    """``sum(a_i b_i)``, added from the first term on (the order of the compiled loop's C,
    :mod:`fmus.compiled_iterative`, so both give the same bits)."""
    acc = 0.0
    for x, y in zip(a, b):
        acc += x * y
    return acc


def _rows(M: Any) -> list:
    """``M`` as a list of rows (up to :data:`_SMALL` signals the iteration keeps it so)."""
    return M if type(M) is list else M.tolist()


_KERNELS: dict = {}


def _kernels(n: int) -> tuple:
    """``(z - M g, Broyden update)`` for ``n`` signals, ``n <= _UNROLLED``: :func:`_step` and
    :func:`_broyden_update`'s loops written out as straight-line code (made once per ``n``),
    the same operations in the same order (each sum from ``0.0``, added as :func:`_dot`
    adds): the same bits, without a Python loop per entry."""
    k = _KERNELS.get(n)
    if k is not None:
        return k
    rng = range(n)
    m = [[f"m{i}_{j}" for j in rng] for i in rng]
    unpack = "".join(f"    {', '.join(m[i])}, = r{i}\n" for i in rng)
    rows = f"    {', '.join(f'r{i}' for i in rng)}, = M if type(M) is list else M.tolist()\n"

    def vec(name):  # "    name0, name1, = name"
        return f"    {', '.join(f'{name}{i}' for i in rng)}, = {name}\n"

    def dot(xs, ys):  # ((0.0 + x0 y0) + x1 y1) + ...: _dot's order
        return "(0.0" + "".join(f" + {x} * {y}" for x, y in zip(xs, ys)) + ")"
    g, a, b = [f"g{j}" for j in rng], [f"a{i}" for i in rng], [f"b{j}" for j in rng]
    src = (f"def step(M, z, g):\n{rows}{unpack}{vec('z')}{vec('g')}"
           f"    return [{', '.join(f'z{i} - ' + dot(m[i], g) for i in rng)}]\n\n"
           f"def broyden(M, zn, z, gn, g):\n{rows}{unpack}"
           f"{vec('zn')}{vec('z')}{vec('gn')}{vec('g')}"
           + "".join(f"    a{i} = zn{i} - z{i}\n    b{i} = gn{i} - g{i}\n" for i in rng)
           + "".join(f"    w{j} = {dot(a, [m[i][j] for i in rng])}\n" for j in rng)
           + f"    d = {dot([f'w{j}' for j in rng], b)}\n"
           "    if d == 0.0:\n        return M\n"
           + "".join(f"    u{i} = a{i} - {dot(m[i], b)}\n" for i in rng)
           + "    return [" + ", ".join(
               "[" + ", ".join(f"{m[i][j]} + (u{i} * w{j}) / d" for j in rng) + "]"
               for i in rng) + "]\n")
    ns: dict = {}
    exec(compile(src, f"<cosim.coupling kernels n={n}>", "exec"), ns)  # noqa: S102
    k = _KERNELS[n] = (ns["step"], ns["broyden"])
    return k


def _step(M: Any, z: list, g: list) -> list:
    """``z - M g`` for lists ``z``, ``g``; up to :data:`_SMALL` entries each row of ``M g``
    summed in order (:func:`_dot`), beyond that by NumPy."""
    n = len(z)
    if n <= _UNROLLED:
        return _kernels(n)[0](M, z, g)
    if n > _SMALL:
        return (np.array(z) - M @ np.array(g)).tolist()
    return [a - _dot(row, g) for a, row in zip(z, _rows(M))]


def _broyden_update(M: Any, z_new: list, z: list, g_new: list, g: list) -> Any:
    """``M + outer(dz - M dg, dz M) / (dz M dg)`` with ``dz = z_new - z``, ``dg = g_new - g``
    (``M`` itself where the denominator is 0); up to :data:`_SMALL` entries in plain floats,
    summed in order, and kept as a list of rows (no array is made per update)."""
    n = len(z)
    if n <= _UNROLLED:
        return _kernels(n)[1](M, z_new, z, g_new, g)
    a = [x - y for x, y in zip(z_new, z)]
    b = [x - y for x, y in zip(g_new, g)]
    if n > _SMALL:
        dz, dg = np.array(a), np.array(b)
        w = dz @ M
        denom = float(w @ dg)
        if denom == 0.0:
            return M
        return M + ((dz - M @ dg)[:, None] * w[None, :]) / denom
    rows = _rows(M)
    w = [_dot(a, col) for col in zip(*rows)]
    denom = _dot(w, b)
    if denom == 0.0:
        return M
    u = [x - _dot(r, b) for x, r in zip(a, rows)]
    return [[rj + (ui * wj) / denom for rj, wj in zip(r, w)] for r, ui in zip(rows, u)]


def _end_values(polys: dict, tau: float) -> dict:
    """Input polynomials (``Coupling`` form) at ``tau``, as zero-order polynomials."""
    out = {}
    for name, c in polys.items():
        if isinstance(c, tuple):
            out[name] = c if len(c) == 1 else (float(evaluate(c, tau)[0]),)
        else:
            out[name] = evaluate(c, tau)[None, :] if len(c) > 1 else c
    return out


class Iterative(Coupling):
    r"""Iterate each macro step until the coupling signals at its end are consistent.

    The unknowns are the coupling outputs ``z`` at ``t_{k+1}``.  One sweep rolls
    the subsystems back to ``t_k``, gives every input the polynomial through
    the history and the current guess at ``t_{k+1}`` (interpolation, order as
    configured; a subsystem that holds its inputs gets the end value ``z``
    itself), steps all subsystems (Jacobi) and reads ``y(z)`` at ``t_{k+1}``.
    The step is accepted when ``|y(z) - z| <= tol (1 + |y|)``.

    Methods: ``"fixed_point"`` (z <- y), ``"aitken"`` (dynamic relaxation),
    ``"anderson"`` (Anderson acceleration over the last ``depth`` sweeps),
    ``"broyden"`` (quasi-Newton on ``g(z) = y(z) - z``, as Schiehlen & Scholz
    do), ``"newton"``.  Each sweep ends by solving the direct feedthrough at
    ``t_{k+1}`` (the master's loop solver, with the subsystems' output
    Jacobians), so ``y(z)`` depends on ``z`` only through the states: that is
    the part these methods iterate on.

    Non-Real coupling outputs (Boolean, Integer, Enumeration, String, Binary) are
    not in ``z``: they are held over the step, at the value of the last sweep at
    ``t_{k+1}`` (the value at ``t_k`` in the first sweep), and propagated sweep by
    sweep; the step is accepted when, besides the Real residual, none of them
    changed in the last sweep.

    Newton's interface Jacobian is assembled, not swept:

    .. math:: \frac{\partial y}{\partial z} = (I - D)^{-1} (S - D)

    ``S``: each subsystem's sensitivity of its outputs at ``t_{k+1}`` to the end
    value of its inputs (its ``step_jacobian()`` where it gives one, else one
    extra step of that subsystem alone per source it reads, by finite
    differences, its outputs settled at the end value of its inputs where ``D``
    applies: a subsystem may report its outputs at the step end with the inputs
    of the step start, as FMUs that interpolate their inputs do, and ``S`` must
    hold the feedthrough ``D`` removes; ``tests/system/test_master_fmu_coupling.py``
    checks the assembled Jacobian against the sweep's by finite differences);
    ``D``: the feedthrough Jacobian at ``t_{k+1}`` chained from the
    subsystems' ``output_jacobian()`` (FMU directional derivatives where given),
    which the settling of feedthrough outputs adds.  Sources that only feed
    inputs nothing reads (``unread_inputs()``) get no column.  The inverse of
    ``J - I`` is kept across macro steps and improved by Broyden updates;
    it is recomputed only when a sweep reduces the residual by less than
    ``slow`` (or at the first step), so a linear coupling costs two sweeps
    per step.  ``reuse_jacobian=False`` recomputes it at every step.

    The converged result is an implicit (interpolating) coupling: no
    extrapolation error, stable where explicit coupling is not.  Needs
    subsystems that can save and restore their state; all rates must be 1.  Each
    step's checkpoint is saved into the one of the step before (the master's rollback
    slot, :meth:`MasterScheduler.save <cosim.master.MasterScheduler.save>`: an FMU
    overwrites the one state it holds, nothing is allocated per step), without the signal
    histories: every sweep pushes ``z`` at ``t_{k+1}`` (replacing the sample there) and
    publishes every output there before it reads a history, so they are those a full
    restore gives; and the communication point the last sweep settled is not settled again.

    ``z``, ``y`` and ``g`` are lists of floats.  Up to 16 coupled signals the iteration's
    algebra (``z - M g``, the Broyden update, Aitken's products) runs in plain floats summed
    in order (up to 8 in straight-line code made once per size, :func:`_kernels`), as the
    compiled master loop does (:mod:`fmus.compiled_iterative`, which takes these steps for
    FMUs and native twins): the two loops give the same bits.
    """

    name = "iterative"
    needs_rollback = True
    #: every step ends with a sweep that settles the feedthrough outputs at its end point
    #: (``MasterScheduler._macro`` need not settle them again)
    settles_end_point = True

    METHODS = ("fixed_point", "aitken", "anderson", "broyden", "newton")

    def __init__(self, method: str = "broyden", tol: float = 1e-10, max_iter: int = 30,
                 fd_step: float = 1e-7, depth: int = 5, reuse_jacobian: bool = True,
                 slow: float = 0.1) -> None:
        if method not in self.METHODS:
            raise ValueError(f"Iterative: method must be one of {', '.join(self.METHODS)}, "
                             f"got {method!r}")
        if not 0.0 < slow < 1.0:
            raise ValueError(f"Iterative: slow must be between 0 and 1, got {slow!r}")
        self.method, self.tol, self.max_iter, self.fd_step = method, tol, max_iter, fd_step
        self.depth = int(depth)
        self.reuse_jacobian = bool(reuse_jacobian)
        self.slow = float(slow)
        self.name = f"iterative/{method}"
        self.jacobians = 0  # interface Jacobians computed (Newton)
        self.jacobian_steps = 0  # extra subsystem steps spent on them
        self._M: np.ndarray | None = None  # (J - I)^-1, kept across steps
        self._plan: dict | None = None
        self._raw: dict = {}
        self._held: list = []  # the non-Real values at t_{k+1} the sweep used
        self._next_held: list = []  # and those it published
        self.predictor_gap: tuple | None = None
        self._neg_eye: np.ndarray | None = None

    def check(self, master: Any) -> None:
        slow = [f"'{s.name}' (rate {s.rate})" for s in master.subsystems if s.rate != 1]
        if slow:
            raise RateError(f"iterative coupling redoes every macro step with all subsystems "
                            f"together, so every subsystem must step at the macro step: "
                            f"{', '.join(slow)}; give them rate=1 or use Jacobi/GaussSeidel")
        self._M = None
        self._plan = None

    # ----------------------------------------------------------- sweeps
    def _sweep(self, master: Any, snap: dict, t0: int, H: int, z: list,
               first: bool) -> list:
        if not first:  # (the histories: z pushed at t0 + H, every output published there)
            master.restore(snap, histories=False)
        self._held = self._next_held
        subs = master.subsystems
        polys = self._polys(master, t0, H, z, subs)
        master._fed.update(polys)
        t0_s = t0 * 1e-9
        for s in subs:
            s.set_inputs(t0_s, polys[s.name])
        for s in subs:
            master.step_subsystem(s, t0, H)
        self._raw = raw = {}
        t1 = t0 + H
        for s in subs:
            raw[s.name] = outs = s.get_outputs()
            master.publish(s, t1, outs)
        master.settler.settle_point(t0 + H)
        self._next_held = master.interface.exact_last()
        return master.interface.pack_last_values()

    def _polys(self, master: Any, t0: int, H: int, z: Any, subs: list) -> dict:
        """The input polynomials through the history and ``z`` at ``t0 + H`` (the
        non-Real sources: the held values of this sweep)."""
        iface = master.interface
        iface.push(t0 + H, z, self._held)
        polys = {s.name: master.input_polys(s, t0) for s in subs}
        iface.truncate_after(t0)
        return polys

    def _minus_eye(self, n: int) -> Any:
        """``-I`` of size ``n`` (up to :data:`_SMALL`: as a list of rows), made once (never
        modified in place: ``M`` is rebound)."""
        m = self._neg_eye
        if m is None or len(m) != n:
            m = self._neg_eye = -np.eye(n) if n > _SMALL else (-np.eye(n)).tolist()
        return m

    # --------------------------------------------------- Newton's Jacobian
    def _layout(self, master: Any) -> dict:
        """Per subsystem: the sources it reads (index ranges in z) and its output rows."""
        if self._plan is not None:
            return self._plan
        offsets, i = {}, 0
        for key in master.interface.real_sources:  # non-Real sources get no column
            n = master.histories[key].last.size
            offsets[key] = (i, n)
            i += n
        plan = {}
        for s in master.subsystems:
            unread = set(s.unread_inputs()) if hasattr(s, "unread_inputs") else set()
            srcs = sorted({master.sources[(s.name, name)][0]
                           for name, *_ in master._feeds[s.name] if name not in unread}
                          & set(offsets))
            rows = [(o, offsets[(s.name, o)]) for o in s.output_names
                    if (s.name, o) in offsets]
            plan[s.name] = (srcs, rows)
        self._plan = {"offsets": offsets, "n": i, "subs": plan}
        return self._plan

    def _jacobian(self, master: Any, snap: dict, t0: int, H: int, z: np.ndarray) -> np.ndarray:
        """``dy/dz`` at the iterate ``z`` of the sweep just done (see class docstring)."""
        lay = self._layout(master)
        offsets, n = lay["offsets"], lay["n"]
        D = None
        if master.settler.subs:
            try:  # at the point the sweep reached, before the extra steps below
                D = master.interface.jacobian()
            except BuildError:  # a subsystem gives no output Jacobian: Broyden corrects
                D = None
        S = np.zeros((n, n))
        for s in master.subsystems:
            srcs, rows = lay["subs"][s.name]
            if not srcs or not rows:
                continue
            given = s.step_jacobian() if hasattr(s, "step_jacobian") else None
            if given is not None:
                for o, (r0, rn) in rows:
                    for name, *_rest in master._feeds[s.name]:
                        block = given.get((o, name))
                        if block is None:
                            continue
                        src, scale, _ = master.sources[(s.name, name)]
                        if src not in offsets:
                            continue
                        c0, cn = offsets[src]
                        S[r0:r0 + rn, c0:c0 + cn] += np.asarray(block, float).reshape(
                            rn, cn) * scale
                continue
            # with D, S must see the end value of the inputs through the subsystem's
            # feedthrough (S = S0 + D): settled there as the sweep's settling does, since a
            # subsystem may report its outputs at the step end with the inputs it was given
            # at the start (FMUs that interpolate their inputs inside the step do); the
            # baseline too, from the state the sweep at z left (the sweep settled it with
            # the published outputs, not with z)
            settle = D is not None and s in master.settler.subs

            def outputs_at(zp, step=True, s=s, settle=settle, rows=rows):
                if step or settle:
                    polys = self._polys(master, t0, H, zp, [s])
                    if step:
                        s.restore_state(snap["subs"][s.name])
                        s.set_inputs(t0 * 1e-9, polys[s.name])
                        master.step_subsystem(s, t0, H)
                        self.jacobian_steps += 1
                    if settle:
                        s.set_inputs((t0 + H) * 1e-9, _end_values(polys[s.name], H * 1e-9))
                        master.refresh_subsystem(s)
                    outs = s.get_outputs()
                else:  # the sweep at z's own outputs
                    outs = self._raw[s.name]
                return {o: np.ravel(np.asarray(outs[o], float)).copy() for o, _ in rows}

            y0 = outputs_at(z, step=False)
            for src in srcs:
                c0, cn = offsets[src]
                for j in range(cn):
                    dz = self.fd_step * max(1.0, abs(z[c0 + j]))
                    zp = z.copy()
                    zp[c0 + j] += dz
                    outs = outputs_at(zp)
                    for o, (r0, rn) in rows:
                        S[r0:r0 + rn, c0 + j] = (outs[o] - y0[o]) / dz
        self.jacobians += 1
        if D is None:
            return S
        eye = np.eye(n)
        return np.linalg.solve(eye - D, S - D)

    # ------------------------------------------------------------ a step
    def step(self, master: Any, k: int, t0: int, H: int) -> None:
        # z, y, g: lists of floats (elementwise the same operations NumPy would do)
        # the checkpoint of the previous step, reused; no histories: each sweep pushes every
        # one at t_{k+1} again (Iterative._sweep)
        snap = master.save(slot="iterative", histories=False)
        z = z_pred = master.interface.predict_values(t0, H)
        self._next_held = master.interface.exact_last()  # non-Real: held at t_k in the first sweep
        y = self._sweep(master, snap, t0, H, z, first=True)
        n = len(z)
        it = 1
        omega = 0.5
        r_prev = None
        g = [a - b for a, b in zip(y, z)]
        newton = self.method == "newton"
        if newton:
            M = self._M if self.reuse_jacobian else None
            fresh = False
            res_prev = None
        else:
            M = self._minus_eye(n)  # Broyden: inverse Jacobian of g(z) = y - z, g' = -I
        hist_g: list = []  # Anderson: recent residuals and images
        hist_y: list = []
        while True:
            res = _max_abs(g)
            if self._next_held != self._held:
                res = float("inf")  # a non-Real output changed: sweep again with it
            elif res <= self.tol or res <= self.tol * (1.0 + _max_abs(y)):
                break  # (res <= tol: y is finite, and tol (1 + max|y|) >= tol)
            if it >= self.max_iter:
                raise LoopConvergenceError(
                    f"iterative coupling ({self.method}) did not converge in macro step "
                    f"t = {t0 * 1e-9:.9g} s: {it} sweeps, residual {res:.3g} (tol "
                    f"{self.tol:g}{_DISCRETE if res == float('inf') else ''}); subsystems "
                    f"{', '.join(s.name for s in master.subsystems)}"
                    "; reduce the macro step, use 'newton', or raise max_iter")
            if self.method == "fixed_point" or not n:
                z_new = y
            elif self.method == "aitken":
                if r_prev is not None:
                    d = [a - b for a, b in zip(g, r_prev)]
                    if n > _SMALL:
                        da = np.array(d)
                        dd, rd = float(da @ da), float(np.array(r_prev) @ da)
                    else:
                        dd, rd = _dot(d, d), _dot(r_prev, d)
                    if dd > 0:
                        omega = -omega * rd / dd
                z_new = [a + omega * b for a, b in zip(z, g)]
                r_prev = g
            elif self.method == "anderson":
                hist_g.append(g)
                hist_y.append(y)
                if len(hist_g) > self.depth + 1:
                    hist_g.pop(0)
                    hist_y.pop(0)
                z_new = y
                if len(hist_g) > 1:
                    dF = np.diff(np.array(hist_g), axis=0).T
                    dG = np.diff(np.array(hist_y), axis=0).T
                    gamma = np.linalg.lstsq(dF, np.array(g), rcond=None)[0]
                    z_new = (np.array(y) - dG @ gamma).tolist()
            elif self.method == "broyden":
                z_new = _step(M, z, g)
            else:  # newton: the kept inverse, recomputed when convergence slows
                slow = res_prev is not None and res > self.slow * res_prev
                if M is None or (slow and not fresh):
                    J = self._jacobian(master, snap, t0, H, np.array(z))
                    M = np.linalg.inv(J - np.eye(n))
                    fresh = True
                res_prev = res
                z_new = _step(M, z, g)
            y_new = self._sweep(master, snap, t0, H, z_new, first=False)
            it += 1
            g_new = [a - b for a, b in zip(y_new, z_new)]
            if (self.method == "broyden" or newton) and n:
                M = _broyden_update(M, z_new, z, g_new, g)
            z, y, g = z_new, y_new, g_new
        if newton:
            self._M = M if self.reuse_jacobian else None
        #: the predictor and the converged outputs (step control's error estimate), as lists
        self.predictor_gap = (z_pred, y)
        c = master.counters
        c.iterations.append(it)
        c.iteration_total += it
        c.last_residual = res
