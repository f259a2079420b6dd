"""The C form of :class:`blocks.multibody.MultibodyBlock` against the Python loop.

The C calls the block's own Numba kernels through cfuncs (:mod:`blocks.multibody.cform`),
so a run in C must equal the Python loop's **bit for bit**: every recorded signal (``q``,
``v``, marker positions and velocities, joint reactions, the loads) of every diagram of a
generated, seeded corpus is compared with ``np.array_equal`` (and ``run_both``'s 1e-12 of
the range, which it implies).  The corpus: pendulums (a bar, a particle in 2-D and 3-D),
open chains of 2 to 6 bars, A02 chains of four-bars (N = 1 to 3), scaled four-bars
(1 m, 1 cm, 1 mm), slider-cranks and the spatial RSSR four-bar, at scales from 1 mm to
1 m (the RSSR with a force and a torque on spatial bodies and markers on them: 1e-12 of
the range, not bit for bit, see :func:`_assert_bitwise`), with the ``lagrange`` (with and
without Baumgarte terms), ``penalty`` and
``augmented_lagrangian`` formulations, the solvers ``rk4``, ``heun``, ``midpoint``,
``euler`` and ``ab3``, loads driven by sources and by feedback of a marker's velocity;
and free bodies (particles and planar bodies without constraints: the C form's plain-C
path), on the mechanism's compiled and Python paths.

The block's monitors (singular positions, drift: Python callbacks after every step) keep a
diagram in the Python loop unless the codegen gives monitors C conditions (``CModel.monitors``,
another branch); the corpus turns them off with the block's own options (:func:`_unmonitored`:
``singular_tol=0``, ``drift_tol=None``), and the monitored tests run where the codegen has
them (:data:`MONITORS_IN_C`).
"""

from __future__ import annotations

import math
import re
import shutil

import numpy as np
import pytest

import blocks as bl
from bench.multibody_chain import four_bar_chain
from bench.multibody_corpus import rssr
from bench.multibody_models import scaled_four_bar, slider_crank
from blocks.multibody import Mechanism, MultibodyBlock, cform
from blocks.multibody._numba import HAVE_NUMBA
from cosim import DiagramBuilder, Simulator
from cosim.errors import BuildError
from tests.corpus.compiled_oracle import run_both
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.skipif(not HAVE_NUMBA, reason="the C form needs numba"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

G = 9.81
#: the codegen gives monitors C conditions (``CModel.monitors``)
MONITORS_IN_C = cform.CMonitor is not None
SOLVERS = ("rk4", "heun", "midpoint", "euler", "ab3")
#: name -> (formulation, options)
FORMS = {"lagrange": ("lagrange", {}),
         "baumgarte": ("lagrange", dict(alpha=10.0, beta=10.0)),
         "penalty": ("penalty", {}),
         "augmented": ("augmented_lagrangian", dict(penalty=1e5, iterations=3))}


def _unmonitored(**options):
    """The block options that turn its monitors off (module docstring)."""
    return dict(options, singular_tol=0.0, drift_tol=None)


# ------------------------------------------------------------------ mechanisms
def _e(th):
    return np.array([math.cos(th), math.sin(th)])


def bar_chain(rng, n: int, scale: float, tip_particle: bool = False) -> Mechanism:
    """``n`` bars hanging from the ground by revolutes (random lengths, masses, angles and
    rates; the assembly makes the velocities consistent), optionally a particle at the tip
    on a distance joint; loads: a force at the first bar's tip marker ``link0.Q`` and a
    torque on the last bar."""
    mech = Mechanism(f"chain{n}", dim=2, gravity=(0.0, -G * scale))
    pin = np.zeros(2)
    prev = mech.ground.marker("O", (0.0, 0.0))
    for k in range(n):
        L = scale * rng.uniform(0.3, 1.2)
        th = rng.uniform(-math.pi, 0.0)
        m = rng.uniform(0.2, 3.0)
        b = mech.add_body(f"link{k}", m, m * L * L / 12, pin + 0.5 * L * _e(th), th,
                          angular_velocity=rng.uniform(-3.0, 3.0))
        b.marker("P", (-0.5 * L, 0.0))
        b.marker("Q", (0.5 * L, 0.0))
        mech.add_joint("revolute", f"R{k}", prev, b.marker("P"))
        prev, pin = b.marker("Q"), pin + L * _e(th)
    if tip_particle:
        L = scale * rng.uniform(0.2, 0.6)
        mech.add_particle("tip", rng.uniform(0.1, 1.0), pin + L * _e(-1.2))
        mech.add_joint("distance", "rope", prev, "tip.cm", length=L)
    mech.add_load("push", "link0.Q")
    mech.add_load("twist", f"link{n - 1}.cm", "torque")
    return mech


def particle_pendulum(rng, dim: int, scale: float) -> Mechanism:
    """A point mass on a massless rod (a ``distance`` joint) in 2-D or 3-D, with a force
    load on the particle."""
    L = scale * rng.uniform(0.5, 2.0)
    g = np.zeros(dim)
    g[1 if dim == 2 else 2] = -G * scale
    mech = Mechanism(f"pendulum{dim}", dim=dim, gravity=g)
    d = rng.normal(size=dim)
    d[1 if dim == 2 else 2] = -abs(d[1 if dim == 2 else 2])
    v = rng.normal(size=dim) * scale
    mech.add_particle("bob", rng.uniform(0.5, 2.0), L * d / np.linalg.norm(d), velocity=v)
    mech.add_joint("distance", "rod", mech.ground.marker("O", np.zeros(dim)), "bob.cm",
                   length=L)
    mech.add_load("push", "bob.cm")
    return mech


def _case(seed: int):
    """``(mechanism, markers, reactions, loads)`` of corpus entry ``seed``."""
    rng = np.random.default_rng(seed)
    scale = (1.0, 1e-2, 1e-3)[seed % 3]
    kind = seed % 7
    if kind == 0:
        mech = bar_chain(rng, 1, scale)
        return mech, ["link0.Q", "link0.cm"], ["R0"], True
    if kind == 1:
        n = 2 + seed % 5
        mech = bar_chain(rng, n, scale, tip_particle=seed % 2 == 0)
        markers = [f"link{n - 1}.Q"] + (["tip.cm"] if seed % 2 == 0 else [])
        return mech, markers, [f"R{n - 1}"], True
    if kind == 2:
        return particle_pendulum(rng, 2 + seed % 2, scale), ["bob.cm"], ["rod"], True
    if kind == 3:
        return four_bar_chain(1 + seed % 3, L=scale, g=G * scale, vx=0.3 * scale,
                              theta0=rng.uniform(1.0, 2.0)), ["crank0.Q"], ["A0"], False
    if kind == 4:
        return scaled_four_bar(scale, w0=rng.uniform(1.0, 4.0)), ["coupler.Q"], ["B"], False
    if kind == 5:
        return slider_crank(w0=rng.uniform(5.0, 12.0)), ["rod.B"], ["slider"], False
    mech = rssr(w0=rng.uniform(2.0, 5.0))
    mech.add_load("push", "rocker.Q")
    mech.add_load("twist", "crank.cm", "torque")
    return mech, ["crank.Q", "rocker.Q"], ["coupler"], True


def corpus_diagram(seed: int, form: str, monitored: bool = False, springs: bool = False):
    """The diagram of corpus entry ``seed`` with formulation ``form`` (:data:`FORMS`):
    the block, its loads driven by sines (and, for a force on a planar body, minus a
    damping gain times the first marker's velocity: a feedback through the block), forces
    in proportion to the mechanism's scale, torques to its square; ``monitored``: with the
    block's default monitors (else :func:`_unmonitored`); ``springs``: with
    :func:`add_springs`."""
    mech, markers, reactions, loaded = _case(seed)
    if springs:
        add_springs(mech, seed)
    kind, options = FORMS[form]
    b = DiagramBuilder(f"mb{seed}")
    blk = b.add(MultibodyBlock("mech", mech, kind, markers=markers, reactions=reactions,
                               **(options if monitored else _unmonitored(**options))))
    rng = np.random.default_rng(1000 + seed)
    scale = mech.gravity[-1] / -G if mech.gravity[-1] else 1.0
    for name in mech.load_names if loaded else ():
        lkind, marker = mech.loads[name]
        n = mech.dim if lkind == "force" or mech.dim == 3 else 1
        unit = "N" if lkind == "force" else "N*m"
        amp = (scale if lkind == "force" else scale * scale) * rng.uniform(0.5, 5.0)
        sines = [b.add(bl.Sine(f"{name}{k}", amplitude=amp, frequency_hz=rng.uniform(0.3, 3),
                               phase_rad=rng.uniform(0, 6.28), unit=unit)) for k in range(n)]
        if n == 1:
            b.connect(sines[0].y, blk.input(name))
            continue
        mux = b.add(bl.Mux(f"{name}_mux", n, unit=unit))
        for k, s in enumerate(sines):
            b.connect(s.y, mux.input(f"u{k}"))
        if marker.body.kind == "planar" and markers:
            damp = b.add(bl.Gain(f"{name}_damp", -rng.uniform(0.1, 2.0),
                                 input_unit="m/s", unit="N", shape=(n,)))
            first = mech._m(markers[0])
            b.connect(blk.output(f"{first.body.name}_{first.name}_vel"), damp.input("u"))
            add = b.add(bl.Sum(f"{name}_sum", "++", shape=(n,), unit="N"))
            b.connect(mux.y, add.ins[0])
            b.connect(damp.y, add.ins[1])
            b.connect(add.y, blk.input(name))
        else:
            b.connect(mux.y, blk.input(name))
    return b.build()


def _record(d) -> list:
    """Every output of every block (the loads too)."""
    return [p for b in d.leaf_blocks() for p in b.outputs.values()]


#: Where the C is not bit for bit: a load on a spatial body (``J' F``, ``A' n``) and a
#: marker on one (``A s'``, ``p . p``): NumPy computes these small products with BLAS, whose
#: order of operations is its own (neither left to right nor one fused chain: measured),
#: where the C and the cfunc sum left to right.  The corpus' RSSR cells (a force on the
#: rocker, a torque on the crank, two markers) are held to run_both's 1e-12 of each
#: signal's range; measured: 5.1e-13 at most (the rocker tip's velocity after 0.3 s, with
#: Baumgarte terms: the rounding differences of the loads grow with the motion).


def _assert_bitwise(py, c):
    for k, a in py.signals.items():
        assert np.array_equal(np.asarray(a), np.asarray(c[k])), \
            (k, float(np.max(np.abs(np.asarray(a, float) - np.asarray(c[k], float)))))


CELLS = [(seed, form) for seed in range(28) for form in FORMS
         if not (seed % 7 == 6 and form == "lagrange")]  # (RSSR: with and without B.)


@pytest.mark.parametrize(("seed", "form"), CELLS, ids=[f"{s}-{f}" for s, f in CELLS])
def test_corpus_in_c_equals_the_python_loop_bit_for_bit(seed, form):
    solver = SOLVERS[(seed + len(form)) % len(SOLVERS)]
    dt = (1e-3, 5e-4)[seed % 2]
    record = _record(corpus_diagram(seed, form))
    names = [p.path for p in record]
    py, c = run_both(lambda: corpus_diagram(seed, form), 0.3, solver=solver, dt=dt,
                     record=names)
    if seed % 7 != 6:  # the spatial RSSR: 1e-12 of the range (run_both; comment above)
        _assert_bitwise(py, c)
    q = np.asarray(c["mech.q"])
    assert np.all(np.isfinite(q)) and np.ptp(q, axis=0).max() > 0  # it moved


def free_bodies(seed: int) -> Mechanism:
    """Bodies without constraints (the C form's plain-C path): particles (2-D or 3-D) and,
    in 2-D, planar bodies with a force at an offset marker ``b0.Q`` and a torque; each
    particle has a force load; the mechanism on its compiled or its Python path."""
    rng = np.random.default_rng(seed)
    dim = 2 + seed % 2
    scale = (1.0, 1e-3)[seed % 2 == 0 and seed % 4 == 0]
    g = np.zeros(dim)
    g[-1] = -G * scale
    mech = Mechanism(f"free{seed}", dim=dim, gravity=g, compiled=(None, False)[seed % 3 == 0])
    for k in range(1 + seed % 3):
        mech.add_particle(f"p{k}", rng.uniform(0.1, 3.0), rng.normal(size=dim) * scale,
                          velocity=rng.normal(size=dim) * scale)
        mech.add_load(f"fp{k}", f"p{k}.cm")
    if dim == 2:
        for k in range(1 + seed % 2):
            m = rng.uniform(0.5, 2.0)
            b = mech.add_body(f"b{k}", m, m * scale * scale * rng.uniform(0.01, 0.2),
                              rng.normal(size=2) * scale, rng.uniform(-3, 3),
                              velocity=rng.normal(size=2) * scale,
                              angular_velocity=rng.uniform(-2, 2))
            b.marker("Q", rng.normal(size=2) * 0.3 * scale)
        mech.add_load("push", "b0.Q")
        mech.add_load("twist", "b0.cm", "torque")
    return mech


def free_diagram(seed: int):
    """:func:`free_bodies` with every load driven by sines (forces in proportion to the
    scale), the particles' and ``b0.Q``'s markers as outputs."""
    mech = free_bodies(seed)
    scale = -mech.gravity[-1] / G
    markers = [f"{b.name}.cm" for b in mech.moving if b.kind == "particle"] + \
        (["b0.Q"] if mech.dim == 2 else [])
    b = DiagramBuilder(f"free{seed}")
    blk = b.add(MultibodyBlock("mech", mech, markers=markers))
    rng = np.random.default_rng(2000 + seed)
    for name in mech.load_names:
        lkind, _ = mech.loads[name]
        n = mech.dim if lkind == "force" else 1
        unit = "N" if lkind == "force" else "N*m"
        amp = (scale if lkind == "force" else scale * scale) * rng.uniform(0.5, 5.0)
        sines = [b.add(bl.Sine(f"{name}{k}", amplitude=amp, frequency_hz=rng.uniform(0.3, 3),
                               phase_rad=rng.uniform(0, 6.28), unit=unit)) for k in range(n)]
        if n == 1:
            b.connect(sines[0].y, blk.input(name))
            continue
        mux = b.add(bl.Mux(f"{name}_mux", n, unit=unit))
        for k, s in enumerate(sines):
            b.connect(s.y, mux.input(f"u{k}"))
        b.connect(mux.y, blk.input(name))
    return b.build()


@pytest.mark.parametrize("seed", range(12))
def test_free_bodies_in_c_equal_the_python_loop_bit_for_bit(seed):
    """Without constraints the C form is plain C (``v̇ = Q / diag(M)``, where the Python
    path's ``np.linalg.solve`` of the diagonal ``M`` divides): bit for bit too."""
    names = [p.path for p in _record(free_diagram(seed))]
    py, c = run_both(lambda: free_diagram(seed), 0.5, solver=SOLVERS[seed % len(SOLVERS)],
                     dt=1e-3, record=names)
    _assert_bitwise(py, c)


def test_a_singular_position_hands_the_run_to_the_python_loop():
    """Where the compiled solve fails (the A02 chain without gravity turns uniformly and
    is on its singular line, all bars on the ground, exactly at t = 1 s, a grid point),
    the C run fails and the Python loop takes over from the slice's start: its general
    path (the independent rows) passes the position, and the results are the Python
    loop's."""
    def make():
        b = DiagramBuilder("a02")
        mech = four_bar_chain(2, L=1.0, g=0.0, vx=math.pi / 2, theta0=math.pi / 2)
        b.add(MultibodyBlock("mech", mech, "lagrange", **_unmonitored()))
        return b.build()
    kw = dict(solver="rk4", dt=1e-3, record=["mech.q", "mech.v"])
    py = Simulator(make(), compiled=False, **kw).run(1.5)
    c = Simulator(make(), compiled=True, **kw).run(1.5)
    why = c.diagnostics["compiled"]
    assert why.startswith("partly: the C run failed (block 'mech': the compiled solve left")
    assert "the Python loop took over" in why
    _assert_bitwise(py, c)


def _sim(make, **kw):
    return Simulator(make(), solver="rk4", dt=1e-3, compiled=True, **kw)


def _single(mech, form="lagrange", **options):
    def make():
        b = DiagramBuilder("one")
        b.add(MultibodyBlock("mech", mech, form, **options))
        return b.build()
    return make


def _timed_crank():
    from blocks.multibody.joints import driver
    mech = scaled_four_bar(1.0)
    crank = mech.bodies["crank"]
    mech.add_joint("angle_driver", "motor", mech.ground.marker("M", (0.0, 0.0)),
                   mech.marker(crank.name, "cm"), fn=driver(lambda t: math.pi / 3 + t))
    return mech


def _pushed():
    mech = scaled_four_bar(1.0)
    mech.add_force("push", "coupler.Q", lambda P, V, t: -V)
    return mech


def _free_spatial():
    mech = Mechanism("tumbler", dim=3)
    mech.add_body("box", 1.0, (0.1, 0.2, 0.3), (0.0, 0.0, 0.0), angular_velocity=(1, 2, 3))
    return mech


NO_C_FORM = {
    "driving functions of time are Python callables": lambda: (_timed_crank(), "lagrange", {}),
    "force elements 'push' (MarkerForce) are Python": lambda: (_pushed(), "lagrange", {}),
    "the projection formulation's periodic correction is Python": lambda: (
        scaled_four_bar(1.0), "projection", dict(project_every_s=1e-3)),
    "has no constraints and spatial bodies": lambda: (_free_spatial(), "lagrange", {}),
    "runs on its Python path (compiled=False": lambda: (
        scaled_four_bar(1.0, compiled=False), "lagrange", {}),
}


@pytest.mark.parametrize("why", list(NO_C_FORM))
def test_what_has_no_c_form_says_why(why):
    """Each case the C form does not cover is named (``compiled=True`` raises with the
    reason; ``compiled=None`` gives it in ``diagnostics`` and runs in Python)."""
    mech, form, options = NO_C_FORM[why]()
    make = _single(mech, form, **_unmonitored(**options))
    with pytest.raises(BuildError, match=r"block 'mech' \(MultibodyBlock\) has no C form: .*"
                       + re.escape(why)):
        _sim(make).initialize()


def test_without_numba_there_is_no_c_form(monkeypatch):
    from blocks.multibody import cform
    monkeypatch.setattr(cform, "HAVE_NUMBA", False)
    make = _single(scaled_four_bar(1.0), **_unmonitored())
    with pytest.raises(BuildError, match=r"has no C form: it needs numba"):
        _sim(make).initialize()


@pytest.mark.skipif(MONITORS_IN_C, reason="monitors have a C form in this codegen")
def test_the_monitors_keep_the_python_loop():
    """The block's default monitors (singular positions, drift) are Python callbacks: the
    diagram runs in the Python loop, and the reason names them (a C form of monitors is
    what full diagrams still need)."""
    make = _single(scaled_four_bar(1.0))
    with pytest.raises(BuildError, match=r"monitors .* of block 'mech' \(MultibodyBlock\)"):
        _sim(make).initialize()


def test_the_fmu_export_refuses_a_diagram_that_calls_compiled_python(tmp_path):
    from fmus import export_fmu
    from fmus.cgen.model import FMUExportError
    make = _single(scaled_four_bar(1.0), **_unmonitored())
    with pytest.raises(FMUExportError, match=r"calls compiled Python code by address "
                       r"\(blocks\.multibody\.cfuncs\.deriv\)"):
        export_fmu(make(), tmp_path / "mb.fmu", step=1e-3)


def test_the_monitor_cfunc_equals_the_python_monitor_bit_for_bit():
    """The ``monitor`` cfunc (the monitors' C condition) gives ``Tables.monitor``'s numbers:
    rank measure, dependent rows, drift and worst row, at perturbed states of three
    mechanisms (planar chain, a four-bar in mm, the spatial RSSR)."""
    import ctypes

    from blocks.multibody import cfuncs
    from blocks.multibody.cform import tables

    def ptr(a, t):
        return a.ctypes.data_as(ctypes.POINTER(t))
    fn = cfuncs.function("monitor").ctypes
    for mech in (four_bar_chain(3), scaled_four_bar(1e-3), rssr()):
        blk = MultibodyBlock("m", mech)
        I, F = cfuncs.pack(tables(blk))
        rng = np.random.default_rng(7)
        x0 = np.concatenate([mech.q_init, mech.v_init])
        for k in range(50):
            x = x0 + rng.normal(size=x0.size) * 1e-2 * (k % 5)
            out, u = np.zeros(4), np.zeros(1)
            assert fn(0.0, ptr(x, ctypes.c_double), ptr(u, ctypes.c_double),
                      ptr(out, ctypes.c_double), ptr(I, ctypes.c_int64),
                      ptr(F, ctypes.c_double)) == 1
            ref = mech._tables.monitor(x[:mech.nq], 0.0, mech.holonomic, mech.row_scale)
            assert out.tolist() == [float(v) for v in ref], (mech.name, k)


def _outcome(make, compiled, t_end, **kw):
    """The results of a run, or its error's type and message."""
    try:
        return Simulator(make(), compiled=compiled, **kw).run(t_end)
    except Exception as exc:  # noqa: BLE001 - the outcome compared
        return (type(exc).__name__, str(exc))


@pytest.mark.skipif(not MONITORS_IN_C, reason="monitors have no C form in this codegen")
@pytest.mark.parametrize("seed", range(0, 28, 3))
def test_monitored_diagrams_in_c_equal_the_python_loop(seed):
    """With the block's default monitors (their C condition, ``cform.monitor_condition``):
    the same results (bit for bit, the RSSR to 1e-12), or the same error."""
    form = ("baumgarte", "penalty", "augmented")[seed % 3]

    def monitored():
        return corpus_diagram(seed, form, monitored=True)
    names = [p.path for p in _record(monitored())]
    kw = dict(solver="rk4", dt=1e-3, record=names)
    py, c = _outcome(monitored, False, 0.3, **kw), _outcome(monitored, True, 0.3, **kw)
    if isinstance(py, tuple):
        assert c == py
        return
    assert c.diagnostics["compiled"] is True
    _compare(py, c)
    if seed % 7 != 6:  # the spatial RSSR: 1e-12 of the range (_assert_bitwise's comment)
        _assert_bitwise(py, c)


@pytest.mark.skipif(not MONITORS_IN_C, reason="monitors have no C form in this codegen")
def test_the_singular_position_monitor_stops_the_c_run_as_the_python_loop():
    """The A02 chain with gravity reaches its singular line: the monitor stops the Python
    loop with a StepError; the C returns to Python at the same step and stops the same."""
    def make():
        b = DiagramBuilder("a02")
        b.add(MultibodyBlock("mech", four_bar_chain(2), "lagrange"))
        return b.build()
    kw = dict(solver="rk4", dt=1e-3, record=["mech.q"])
    py, c = _outcome(make, False, 3.0, **kw), _outcome(make, True, 3.0, **kw)
    assert isinstance(py, tuple) and py[0] == "StepError" and "lost rank" in py[1]
    assert c == py


def test_the_lim_manipulator_boom_in_c_equals_the_python_loop_bit_for_bit():
    """The LIM example's boom (``examples.lim_manipulator``: Lagrange with Baumgarte, a
    load at the link's centre, its marker fed back) under the equilibrium force F_H0 along
    the actuator with a sine on top: the block the example needs in C (its monitors off
    here; the example's FunctionBlocks and its valve command still keep it in Python)."""
    from examples import lim_manipulator as lim

    def make():
        b = DiagramBuilder("boom")
        boom = b.add(MultibodyBlock("mech", lim.mechanism(), "lagrange", alpha=10.0,
                                    beta=10.0, markers=["link1.cm"], reactions=["A", "Q"],
                                    **_unmonitored()))
        fx = b.add(bl.Sine("fx", amplitude=300.0, frequency_hz=0.7,
                           bias=-lim.F_H0 * 0.6, unit="N"))
        fy = b.add(bl.Sine("fy", amplitude=200.0, frequency_hz=1.3,
                           bias=lim.F_H0 * 0.8, unit="N"))
        mux = b.add(bl.Mux("f", 2, unit="N"))
        b.connect(fx.y, mux.input("u0"))
        b.connect(fy.y, mux.input("u1"))
        b.connect(mux.y, boom.input("f_act"))
        return b.build()
    names = [p.path for p in _record(make())]
    py, c = run_both(make, 2.0, solver="rk4", dt=1e-3, record=names)
    _assert_bitwise(py, c)


def add_springs(mech, seed: int) -> None:
    """Point-to-point spring-dampers on ``mech`` (random stiffness, damping, rest length):
    from the ground to the last body, and a rope between the first and the last."""
    rng = np.random.default_rng(3000 + seed)
    bodies = list(mech.moving)
    scale = -mech.gravity[-1] / G
    mass = max(b.mass for b in bodies)
    first, last = bodies[0], bodies[-1]
    mech.add_spring_damper("spring",
                           mech.ground.marker("S", rng.normal(size=mech.dim) * scale),
                           f"{last.name}.cm", stiffness=mass * rng.uniform(5, 50),
                           damping=mass * rng.uniform(0.0, 2.0))
    if len(bodies) > 1:
        mech.add_spring_damper("rope", f"{first.name}.cm", f"{last.name}.cm", rope=True,
                               stiffness=mass * rng.uniform(5, 50),
                               length0=scale * rng.uniform(0.2, 1.0))


SPRUNG = [(seed, form) for seed in range(14) for form in ("baumgarte", "penalty")
          if seed % 7 not in (0, 2)]  # (every mechanism with two or more bodies)


@pytest.mark.parametrize(("seed", "form"), SPRUNG, ids=[f"{s}-{f}" for s, f in SPRUNG])
def test_spring_dampers_in_c_agree_with_the_python_loop(seed, form):
    """Linear point-to-point spring-dampers and ropes run in the cfunc (``_add_springs``):
    ``Kin.point``'s ``A s'``, ``d . d`` and ``J' F`` are BLAS products in NumPy, summed left
    to right in the cfunc, so these agree to run_both's 1e-12 of each signal's range, not
    bit for bit (measured over these 20 cells: 2.6e-13 at most, the RSSR's rocker tip
    velocity; 2 cells bit for bit)."""
    names = [p.path for p in _record(corpus_diagram(seed, form, springs=True))]
    py, c = run_both(lambda: corpus_diagram(seed, form, springs=True), 0.3, solver="rk4",
                     dt=1e-3, record=names)
    assert np.ptp(np.asarray(c["mech.q"]), axis=0).max() > 0


def test_cold_kernels_keep_compiled_none_in_python(monkeypatch):
    """``compiled=None`` does not wait for the cfuncs' one-time compilation (10-20 s on a
    machine whose Numba cache lacks them): the Python loop runs, the reason says why;
    ``compiled=True`` compiles; with the kernels cached, ``None`` runs in C."""
    from blocks.multibody import cfuncs
    from cosim.compiled_route import CompiledRoute
    monkeypatch.setattr(CompiledRoute, "threshold", 10)  # a run long enough to pay for C
    monkeypatch.setattr(cfuncs, "cold", lambda: "kernels not cached (test)")
    res = Simulator(corpus_diagram(1, "lagrange"), solver="rk4", dt=1e-3).run(0.05)
    assert res.diagnostics["compiled"] == "block 'mech': kernels not cached (test)"
    hot = Simulator(corpus_diagram(1, "lagrange"), solver="rk4", dt=1e-3, compiled=True)
    assert hot.run(0.05).diagnostics["compiled"] is True
    monkeypatch.setattr(cfuncs, "cold", lambda: "")
    res = Simulator(corpus_diagram(1, "lagrange"), solver="rk4", dt=1e-3).run(0.05)
    assert res.diagnostics["compiled"] is True


def test_cold_reads_numbas_cache():
    """The cfuncs compiled in this process (the tests above) are not cold."""
    from blocks.multibody import cfuncs
    for name in ("deriv", "accel", "monitor"):
        cfuncs.function(name)
    assert cfuncs.cold() == ""
