"""Suite ``multibody``: a 10-body spatial mechanism with closed loops.

``ladder``: two chains of five spatial rigid links (0.3 m, 1 kg) hang from
the ground by spherical joints, link to link by spherical joints, and every
pair of corresponding link ends is tied by a rung (distance constraint):
10 bodies, 5 closed loops, 20 degrees of freedom, gravity, released from a
bent configuration.  Ours: ``MultibodyBlock`` (Lagrange with Baumgarte) in the
simulator, RK4 at h = 1 ms for 1 s.  Reference: SciPy ``solve_ivp`` (DOP853,
rtol 1e-10) on the same equations of motion (a monolithic ODE solution, not an
independent model): its cost is reported beside ours and its end state is the
accuracy reference.  Target (issue 4): 1 s of simulated time in at most 0.2 s
of wall time (5x real time).

``a01_drift/<formulation>``: the IFToMM A01 pendulum over 2000 s (200 s quick)
with RK4 at h = 10 ms: the constraint drift max | |P| - 1 | per formulation
and the position error against the exact P(2000 s) (anchors-domain.md §1.3).  The
block's drift monitor is off here (``drift_tol=None``): the drift is the figure (with it,
plain Lagrange stops at t = 53 s, where its drift reaches 1e-3).

``a02_chain/...``: the IFToMM A02 chain of N four-bar linkages (``bench/multibody_chain.py``)
through its singular positions with ``Index3Stepper`` at h = 1 ms.  N = 40 over the
specification's 20 s (also in quick mode: it is a target, issue 24: at most 10 s of wall
time, 20x the 195 s the dense RK4 path took), its B0 error against the exact
parallelogram-branch solution, and beside it, measured in the same run on a shorter span
and scaled to 20 s, the same stepper on the dense LAPACK path (``compiled=False``: what
every step cost before the banded kernels) and ``MultibodyBlock`` (Lagrange, RK4, banded
Schur complement) up to just before the first singular position, where it stops.  Cost
per step for N = 2, 10, 20, 40 (2 s each in quick mode): the growth exponent of a
least-squares fit ``cost ~ N^b`` is a target (b <= 1.5; banded factorizations make it
about linear).

``corpus/...``: issue 32's differential-testing corpus (``bench/multibody_corpus.py``):
nine mechanisms x ten formulations, steppers and integrators, each cell against an
independent minimal-coordinate reference over 10 s (also in quick mode: about 6 min in
two processes) at h = 1 ms or the formulation's documented step (``Index3Stepper`` 0.5 ms;
``staggered_integrate`` 0.25 ms with PCST and projection, 0.125 ms without projection:
``multibody_corpus.DOCUMENTED_STEP``).  Target: every cell
that is not a documented refusal passes (tracked points within 1e-4 m, scaled with the
four-bar).  The table goes to stderr; the cells are in the JSON (the case's ``extra``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from . import multibody_models as mm
from .harness import make_case, make_target, measure

PACKAGES = ()
LINK, N = 0.3, 5


def ladder():
    from blocks.multibody import Mechanism
    m = Mechanism("ladder", dim=3, gravity=(0.0, 0.0, -9.81))
    J = (0.02 * 0.02, 1.0 * LINK ** 2 / 12 + 0.0001, 1.0 * LINK ** 2 / 12 + 0.0001)
    for side, y in (("L", -0.2), ("R", 0.2)):
        prev = m.ground.marker(f"top{side}", (0.0, y, 0.0))
        for k in range(N):
            ang = 0.35 * (k + 1) * (1 if side == "L" else 0.8)  # bent start
            x0 = sum(LINK * np.sin(0.35 * (i + 1) * (1 if side == "L" else 0.8))
                     for i in range(k)) + 0.5 * LINK * np.sin(ang)
            z0 = -sum(LINK * np.cos(0.35 * (i + 1) * (1 if side == "L" else 0.8))
                      for i in range(k)) - 0.5 * LINK * np.cos(ang)
            b = m.add_body(f"{side}{k}", 1.0, J, (x0, y, z0), ((0, 1, 0), ang - np.pi / 2))
            top = b.marker("top", (-LINK / 2, 0.0, 0.0))
            b.marker("bottom", (LINK / 2, 0.0, 0.0))
            m.add_joint("spherical", f"s{side}{k}", prev, top)
            prev = m.marker(f"{side}{k}", "bottom")
    for k in range(N):
        m.add_joint("distance", f"rung{k}", f"L{k}.bottom", f"R{k}.bottom", length=0.4)
    return m


def _ours():
    from blocks.multibody import MultibodyBlock
    from cosim import DiagramBuilder, Simulator
    t0 = time.perf_counter()
    b = DiagramBuilder("d")
    blk = b.add(MultibodyBlock("mb", ladder(), "lagrange", alpha=10.0, beta=10.0))
    b.export_output(blk.output("q"), "q")
    sim = Simulator(b.build(), solver="rk4", dt=1e-3, record=False)
    t1 = time.perf_counter()
    sim.run(1.0)
    t2 = time.perf_counter()
    q = sim.ctx.state(blk.x)[:70].copy()
    return t1 - t0, t2 - t1, {"q_end": q}


def _scipy():
    from scipy.integrate import solve_ivp

    from blocks.multibody import Formulation
    mech = ladder()
    rep = mech.assemble()
    form = Formulation("lagrange", alpha=10.0, beta=10.0)
    nq = mech.nq

    def rhs(t, x):
        q, v = x[:nq], x[nq:]
        return np.concatenate([mech.qdot(q, v), mech.accelerations(q, v, t, form)[0]])
    t0 = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([mech.q_init, mech.v_init]),
                    method="DOP853", rtol=1e-10, atol=1e-12)
    wall = time.perf_counter() - t0
    return None, wall, {"q_end": sol.y[:nq, -1], "nfev": sol.nfev, "dof": rep["dof"]}


A01_END = (-0.814603068589032, -0.580018827836935)  # exact P at t = 2000 s (mpmath)
A01_FORMS = {"lagrange": {"alpha": 5.0, "beta": 5.0}, "lagrange-plain": {},
             "penalty": {"penalty": 1e7, "omega": 10.0, "mu": 1.0},
             "augmented_lagrangian": {"penalty": 1e5, "omega": 10.0, "mu": 1.0},
             "projection": {"project_every_s": 1e-2},
             "partitioning": {"project_every_s": 1e-2}}


def _a01(form: str, t_end: float):
    from blocks.multibody import Mechanism, MultibodyBlock
    from cosim import DiagramBuilder, Simulator
    t0 = time.perf_counter()
    m = Mechanism("A01", dim=2, gravity=(0.0, -9.81))
    bob = m.add_particle("bob", 1.0, (1.0, 0.0))
    m.add_joint("distance", "link", m.ground.marker("O"), bob.marker("cm"), length=1.0)
    b = DiagramBuilder("A01")
    kind = "lagrange" if form.startswith("lagrange") else form
    blk = b.add(MultibodyBlock("pend", m, kind, markers=["bob.cm"], drift_tol=None,
                               **A01_FORMS[form]))
    port = blk.output("bob_cm_pos")
    sim = Simulator(b.build(), solver="rk4", dt=1e-2, record=[port], record_every=100)
    t1 = time.perf_counter()
    res = sim.run(t_end)
    t2 = time.perf_counter()
    P = res[port.path]
    drift = float(np.max(np.abs(np.linalg.norm(P, axis=1) - 1.0)))
    extra = {"drift": drift, "accuracy_metric": "max | |P| - 1 | (constraint drift)",
             "abs_err": drift}
    if t_end == 2000.0:
        extra["position_error_2000s"] = float(np.max(np.abs(P[-1] - np.array(A01_END))))
    return t1 - t0, t2 - t1, extra


CHAIN_H, CHAIN_T, CHAIN_NS = 1e-3, 20.0, (2, 10, 20, 40)


def _chain(N: int, t_end: float, compiled=None):
    from .multibody_chain import ChainExact, simulate_index3
    r = simulate_index3(N, CHAIN_H, t_end, record_every=max(1, round(0.05 / CHAIN_H)),
                        compiled=compiled)
    P, _ = ChainExact(N).b0(r["t"])
    err = float(np.max(np.abs(r["B0"] - P)))
    return r["build"], r["wall"], {"abs_err": err, "accuracy_metric":
                                   "max |B0 - exact| (parallelogram branch) [m]"}


def _chain_rk4(N: int, t_end: float):
    from blocks.multibody import MultibodyBlock
    from cosim import DiagramBuilder, Simulator

    from .multibody_chain import four_bar_chain
    t0 = time.perf_counter()
    b = DiagramBuilder("a02")
    b.add(MultibodyBlock("chain", four_bar_chain(N), "lagrange", alpha=10.0, beta=10.0))
    sim = Simulator(b.build(), solver="rk4", dt=CHAIN_H, record=False)
    t1 = time.perf_counter()
    sim.run(t_end)
    return t1 - t0, time.perf_counter() - t1, {}


def _chain_cases(options) -> tuple[list, list]:
    from .multibody_chain import ChainExact
    steps = int(round(CHAIN_T / CHAIN_H))
    ours = measure(lambda: _chain(40, CHAIN_T), repeats=1, steps=steps, blocks=1)
    t_dense = 0.2 if options.quick else 1.0
    dense = measure(lambda: _chain(40, t_dense, compiled=False), repeats=1,
                    steps=int(round(t_dense / CHAIN_H)), blocks=1, scale=CHAIN_T / t_dense,
                    basis=f"measured over {t_dense:g} s, scaled to {CHAIN_T:g} s")
    t_rk4 = math.floor(ChainExact(40).singular_times(1.0)[0] * 100) / 100 - 0.01
    rk4 = measure(lambda: _chain_rk4(40, t_rk4), repeats=1,
                  steps=int(round(t_rk4 / CHAIN_H)), blocks=1, scale=CHAIN_T / t_rk4,
                  basis=f"measured over {t_rk4:g} s (it stops at the first singular "
                        f"position, 0.72 s), scaled to {CHAIN_T:g} s")
    cases = [make_case("a02_chain/N40/index3-1ms/20s", ours,
                       {"index3-dense-lapack": dense, "multibodyblock-lagrange-rk4": rk4})]
    t_scale = 2.0 if options.quick else CHAIN_T
    per_step = {}
    for N in CHAIN_NS:
        m = measure(lambda n=N: _chain(n, t_scale), repeats=1,
                    steps=int(round(t_scale / CHAIN_H)), blocks=1)
        cases.append(make_case(f"a02_chain_scaling/N{N}/index3-1ms/{t_scale:g}s", m, {}))
        if m.get("status") == "ok":
            per_step[N] = m["median_s"] / (t_scale / CHAIN_H)
    slope = None
    if len(per_step) == len(CHAIN_NS):
        x, y = np.log(list(per_step)), np.log(list(per_step.values()))
        slope = float(np.polyfit(x, y, 1)[0])
    us = ", ".join(f"N={n}: {1e6 * c:.0f}" for n, c in per_step.items())
    targets = [
        make_target("A02 chain N = 40: wall time for 20 s at h = 1 ms (Index3Stepper) [s]",
                    ours.get("median_s"), "<=", "10", source="issue 24",
                    note="20x the 195 s of the dense RK4 path; ratios: dense LAPACK "
                         "stepper and MultibodyBlock RK4 measured in the same run"),
        make_target("A02 chain N = 40: B0 error at h = 1 ms against the exact solution [m]",
                    ours.get("abs_err"), "<=", "1e-3",
                    source="IFToMM A02 high-precision tolerance"),
        make_target("A02 chain: growth exponent b of the cost per step ~ N^b, N = 2..40",
                    slope, "<=", "1.5", source="issue 24", note=f"us/step {us}"),
    ]
    return cases, targets


def _scale_invariance() -> list:
    """Issue 32's ``scale_invariance`` targets: the four-bar in m, mm and km under every
    formulation (RK4, 1 ms, 2 s): do the monitors decide the same, and how far apart are
    the trajectories (brought back to metres)."""
    from cosim.errors import StepError
    units = {"m": 1.0, "mm": 1e3, "km": 1e-3}
    worst, per_form, differ = 0.0, [], []
    for name, (kind, opts) in mm.formulations(1e-3).items():
        runs = {}
        for u, k in units.items():
            try:
                q = mm.simulate(mm.scaled_four_bar(k), kind, 2.0, 1e-3, **opts)["q"].copy()
            except StepError as exc:
                runs[u] = f"stopped: {str(exc)[:60]}"
                continue
            q[:, 0::3] /= k
            q[:, 1::3] /= k
            runs[u] = q
        verdicts = {u: isinstance(r, str) for u, r in runs.items()}
        if len(set(verdicts.values())) > 1:
            differ.append(name)
            continue
        if isinstance(runs["m"], str):
            continue
        err = max(float(np.max(np.abs(runs[u] - runs["m"])) / np.max(np.abs(runs["m"])))
                  for u in ("mm", "km"))
        worst = max(worst, err)
        per_form.append(f"{name} {err:.1e}")
    return [
        make_target("scale_invariance: formulations whose monitors decide differently in "
                    "m, mm and km", len(differ), "<=", "0", source="issue 32",
                    note=", ".join(differ) or "the same verdicts everywhere"),
        make_target("scale_invariance: largest relative trajectory difference m/mm/km",
                    worst, "<=", "1e-9", source="issue 32",
                    note="; ".join(per_form) + " (the penalty forms solve in the "
                         "range-space form J M^-1 J' + 1/a: with M + J' a J the penalty "
                         "run read 1.25e-9, its own rounding amplified by a = 1e7; bit for "
                         "bit under powers of two, tests/system/test_multibody_scale.py)"),
    ]


CORPUS_T = 10.0
CORPUS_WORKERS = 2  #: processes for the corpus' cells (the target is accuracy, not speed)


def _corpus(options) -> tuple[list, list]:
    """Issue 32's corpus: a case (the wall time of all cells; the cells in ``extra``) and
    the target (cells that pass / cells that are not documented refusals)."""
    from . import multibody_corpus as mc
    from .harness import log
    cells: list[dict] = []

    def run_all():
        t0 = time.perf_counter()
        cells[:] = mc.run_corpus(CORPUS_T, workers=CORPUS_WORKERS)
        return None, time.perf_counter() - t0, {"cells": list(cells)}
    m = measure(run_all, repeats=1, steps=None, blocks=None)
    log(mc.markdown_table(cells), options)
    s = mc.summary(cells)
    failed = "; ".join(f"{c['mechanism']} / {c['formulation']}" for c in cells
                       if c["status"] == "FAIL")
    value = s["pass"] / s["judged"] if s["judged"] else None
    n = len(mc.CASES) * len(mc.FORMULATIONS)
    return [make_case(f"corpus/{len(mc.CASES)}x{len(mc.FORMULATIONS)}-cells/"
                      f"{CORPUS_T:g}s", m, {})], [
        make_target(f"corpus: cells within tolerance of the independent reference over "
                    f"{CORPUS_T:g} s at h = 1 ms or the formulation's documented step "
                    "/ cells that are not documented refusals", value, ">=", "1",
                    source="issue 32",
                    note=f"{s['pass']} of {s['judged']} pass, {s['refused']} documented "
                         f"refusals, {n} cells; FAIL: {failed or 'none'}")]


def run(options) -> dict:
    ours = measure(_ours, repeats=1 if options.quick else options.repeats, steps=1000,
                   blocks=10, budget_s=options.budget_s)
    ref = measure(_scipy, repeats=1, steps=None, blocks=None)
    qa = ours.get("extra", {}).pop("q_end", None)
    qb = ref.get("extra", {}).pop("q_end", None)
    if qa is not None and qb is not None:
        ours["abs_err"] = float(np.max(np.abs(qa - qb)))
        ours["accuracy_metric"] = "max |q - q_scipy| at 1 s"
    cases = [make_case("ladder/10-body-5-loops/rk4-1ms/1s", ours, {"scipy-dop853": ref})]
    t_a01 = 200.0 if options.quick else 2000.0
    for form in A01_FORMS:
        m = measure(lambda f=form: _a01(f, t_a01), repeats=1, steps=int(t_a01 / 1e-2),
                    blocks=1)
        cases.append(make_case(f"a01_drift/{form}/rk4-10ms/{t_a01:g}s", m, {}))
    chain_cases, chain_targets = _chain_cases(options)
    corpus_cases, corpus_targets = _corpus(options)
    return {"cases": cases + chain_cases + corpus_cases, "targets": [
        make_target("10-body closed-loop mechanism: wall time for 1 s at h = 1 ms (RK4) [s]",
                    ours.get("median_s"), "<=", "0.2",
                    note="goal 0.1 s; compiled kernel (Numba), one call per derivative, "
                         "banded Schur complement, singular-position and drift monitors"),
    ] + chain_targets + _scale_invariance() + corpus_targets}
