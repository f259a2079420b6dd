"""Suite ``fluid``: cost of one discrete-vortex-method step against the number of vortices.

Case ``dvm-step/N``: one convection step of ``N`` free Krasny-blob vortices (self-induction
plus the velocity from a 64-panel cylinder's bound vortices, Adams–Bashforth update), i.e.
:meth:`blocks.vortex.DiscreteVortexFlow.velocities` plus the update, for N = 250 ... 4000,
on the Numba path (``ours``) and, as peers, the NumPy path and (N <= 500 only, full mode;
N = 250 in quick mode) a plain Python double loop (:func:`blocks.vortex.naive_self_induced`).
No DVM peer package is installed, so the comparison is between our own paths.  Accuracy:
max difference of the velocities between the paths.  Target: 2000 vortices <= 20 ms per
step (the issue's figure).
"""

from __future__ import annotations

import time

import numpy as np

from .harness import make_case, make_target, measure, not_timed

NAME = "fluid"
DESCRIPTION = "Discrete vortex method: step cost vs number of vortices (numba, numpy, loop)"
PACKAGES = ("numba",)
SIZES = (250, 500, 1000, 2000, 4000)


def _setup(n: int):
    from blocks.vortex import PanelBody
    body = PanelBody.circle(0.5, 64, separation_deg=70)
    rng = np.random.default_rng(n)
    xy = np.column_stack([rng.uniform(0.6, 8.0, n), rng.uniform(-1.5, 1.5, n)])
    g = rng.normal(0.0, 0.02, n)
    return body, xy, g


def _case(n: int, backend: str):
    from blocks.vortex import DiscreteVortexFlow
    body, xy, g = _setup(n)
    flow = DiscreteVortexFlow(body, 0.05, backend=backend)
    sol = body.solve(body.at_rest(), flow.u_inf, xy, g, flow.core_radius, -g.sum())
    core = np.full(n, flow.core_radius)
    flow.velocities(xy, g, core, sol)  # compile / warm up
    vprev = np.zeros_like(xy)

    def fn():
        t0 = time.perf_counter()
        u = flow.velocities(xy, g, core, sol)
        x = xy + flow.dt * (1.5 * u - 0.5 * vprev)
        t1 = time.perf_counter()
        return None, t1 - t0, {"u": u, "x": x}
    return fn


def _naive(n: int):
    from blocks.vortex import naive_self_induced
    body, xy, g = _setup(n)

    def fn():
        t0 = time.perf_counter()
        u = naive_self_induced(xy, g, float(body.panel_lengths.mean()))
        return None, time.perf_counter() - t0, {"u_self": u}
    return fn


def run(options) -> dict:
    from blocks.vortex import numba_available
    cases = []
    reps = options.repeats
    have_numba = numba_available()
    for n in SIZES:
        if have_numba:
            ours = measure(_case(n, "numba"), repeats=max(reps, 5), steps=1, blocks=None,
                           budget_s=options.budget_s)
        else:
            ours = not_timed("skipped (not installed)", "numba is not installed")
        peers = {"numpy": measure(_case(n, "numpy"), repeats=reps, steps=1, blocks=None,
                                  budget_s=options.budget_s)}
        if n <= (250 if options.quick else 500):
            peers["python-loop"] = measure(_naive(n), repeats=1, steps=1, blocks=None)
        ua = ours.get("extra", {}).pop("u", None)
        ub = peers["numpy"].get("extra", {}).pop("u", None)
        for m in (ours, peers["numpy"]):
            m.get("extra", {}).pop("x", None)
        peers.get("python-loop", {}).get("extra", {}).pop("u_self", None)
        if ua is not None and ub is not None:
            ours["abs_err"] = float(np.max(np.abs(ua - ub)))
            ours["accuracy_metric"] = "max |u(numba) - u(numpy)| [m/s]"
        cases.append(make_case(f"dvm-step/{n}", ours, peers))
    c2000 = next(c for c in cases if c["case"] == "dvm-step/2000")
    best = c2000["ours"] if c2000["ours"].get("median_s") else c2000["peers"]["numpy"]
    value = None if best.get("median_s") is None else 1e3 * best["median_s"]
    return {"cases": cases, "targets": [
        make_target("DVM step with 2000 vortices [ms]", value, "<=", "20",
                    note="Krasny blob, Numba path if installed (else NumPy), one core")]}
