"""C forms of the ocean blocks of ``examples/ocean_moored_cylinder.py`` and
``examples/crane_vessel.py``: CraneVessel, MorisonMember, CatenaryMooring, PolynomialMooring
and the example's SurgeBody, compiled (``Simulator(compiled=True)``) against the Python loop,
their oracle.

Per block a generated corpus (seeded random parameters within their valid ranges, inputs as
sums of Sine, Step and Ramp sources of random amplitude): vessel motions and wave forces of the
crane vessel, slack and taut mooring lines (lines lifting off and lying on the seabed,
friction; elevated anchors on one line), regular and irregular seas of finite and infinite
depth with the three stretchings and members fixed or moving with a body (with and without
added mass), with the four fixed-step solvers; then both examples' own diagrams for 60 s with
their own solver and step (RK4). Recorded times identical, every signal within 1e-12 of its
range (``_compare`` of test_compiled_run). Without a block's C form the diagram cannot be
compiled (the last test removes each one).
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import blocks as bl
from blocks.ocean import (
    JONSWAP,
    CatenaryMooring,
    CraneVessel,
    IrregularSea,
    MooringLine,
    MooringSystem,
    MorisonMember,
    PolynomialMooring,
    RegularWave,
)
from blocks.ocean.mooring import catenary
from cosim import DiagramBuilder
from tests.corpus.compiled_oracle import check_without_c_form, run_both

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

SOLVERS = ["rk4", "heun", "midpoint", "euler"]
SEEDS = range(6)


def _both(make, t_end, record=None, **kw):
    """The Python loop's results of ``make()``, checked against the compiled run."""
    return run_both(make, t_end, record=record, **kw)[0]


def _signal(b, name, rng, lo, hi, t_end):
    """A source spanning about ``[lo, hi]``: bias + sine + a step + a ramp."""
    span = hi - lo
    parts = [
        bl.Sine(f"{name}_sin", amplitude=rng.uniform(0.25, 0.5) * span,
                frequency_hz=rng.uniform(0.5, 3.0) / t_end, phase_rad=rng.uniform(0, 2 * np.pi),
                bias=lo + 0.5 * span),
        bl.Step(f"{name}_up", time_s=round(rng.uniform(0.1, 0.4) * t_end, 3),
                final=rng.uniform(-0.2, 0.2) * span),
        bl.Ramp(f"{name}_ramp", slope=rng.uniform(-0.1, 0.1) * span / t_end,
                start_s=round(rng.uniform(0.3, 0.7) * t_end, 3)),
    ]
    s = b.add(bl.Sum(name, "+++"))
    for k, p in enumerate(parts):
        b.connect(b.add(p).y, s.inputs[f"u{k}"])
    return s.y


def _vector(b, name, signals):
    mux = b.add(bl.Mux(name, len(signals)))
    for k, s in enumerate(signals):
        b.connect(s, mux.inputs[f"u{k}"])
    return mux.y


def _zero(b, name):
    return b.add(bl.Constant(name, 0.0)).y


# ------------------------------------------------------------------ crane vessel
def _crane_vessel(seed):
    rng = np.random.default_rng(seed)
    M = rng.uniform(1e5, 5e7)
    m = M * rng.uniform(0.01, 0.2)
    c1 = rng.uniform(1e4, 1e6)
    ext = bool(seed % 2)
    kw = dict(mass_kg=M, added_mass_kg=M * rng.uniform(0, 0.2),
              damping_n_s_per_m=rng.uniform(0, 0.1) * 2 * math.sqrt(c1 * M), c1_n_per_m=c1,
              c2_n_per_m2=rng.uniform(-0.05, 0.05) * c1, c3_n_per_m3=rng.uniform(0, 2) * c1,
              wave_amplitude_m=rng.uniform(0, 2.5), wave_frequency_rad_s=rng.uniform(0.2, 1.0),
              wave_force_per_amplitude_n_per_m=rng.uniform(0.1, 1.0) * c1,
              rope_length_m=rng.uniform(5, 50), load_mass_kg=m,
              load_damping_n_s_per_m=rng.uniform(0, 0.1) * m,
              load_quadratic_damping_n_s2_per_m2=rng.uniform(0, 0.05) * m,
              crane_tip_height_m=rng.uniform(0, 60), external_force=ext,
              x0_m=rng.uniform(-1, 1), v0_m_s=rng.uniform(-0.5, 0.5),
              phi0_rad=rng.uniform(-1.0, 1.0), phi_dot0_rad_s=rng.uniform(-0.3, 0.3))
    t_end = 40.0

    def make():
        b = DiagramBuilder(f"cv{seed}")
        v = b.add(CraneVessel("vessel", **kw))
        if ext:
            b.connect(_signal(b, "f", np.random.default_rng(seed + 100), -0.5 * c1, 0.5 * c1,
                              t_end), v.input("wave_force"))
        return b.build()
    return make, t_end


@pytest.mark.parametrize("seed", SEEDS)
def test_crane_vessel_corpus(seed):
    make, t_end = _crane_vessel(seed)
    py = _both(make, t_end, solver=SOLVERS[seed % 4], dt=0.05)
    assert np.ptp(py["vessel.x"]) > 0.1 and np.ptp(py["vessel.phi"]) > 0.05  # it moves


# ------------------------------------------------------------------ polynomial mooring
@pytest.mark.parametrize("seed", SEEDS)
def test_polynomial_mooring_corpus(seed):
    rng = np.random.default_rng(seed)
    c = (rng.uniform(1e3, 1e6), rng.uniform(-1e4, 1e4), rng.uniform(0, 1e5))
    even = ("square", "signed")[seed % 2]

    def make():
        b = DiagramBuilder(f"pm{seed}")
        p = b.add(PolynomialMooring("pm", *c, even_term=even))
        b.connect(_signal(b, "x", np.random.default_rng(seed), -5.0, 5.0, 10.0), p.x)
        return b.build()
    py = _both(make, 10.0, solver=SOLVERS[seed % 4], dt=0.01)
    assert py["x.y"].min() < 0 < py["x.y"].max()  # both sides of the asymmetric polynomial


# ------------------------------------------------------------------ catenary mooring
def _mooring_system(rng, seed):
    depth = rng.uniform(50, 400)
    # 2 to 4 lines: a one-line system's (1,) tensions output is pushed into the C state as
    # a scalar (cosim/codegen/state.py: float() of a 1-element array), reported
    n = int(rng.integers(2, 5))
    L = depth * rng.uniform(2.0, 4.0)
    lines = []
    for i in range(n):
        a = 2 * math.pi * i / n + rng.uniform(-0.3, 0.3)
        fr = float(rng.uniform(5, 15))
        fz = -float(rng.uniform(0, 0.3)) * depth
        hz = -depth  # anchors on the seabed (elevated ones: the one-line test below)
        # anchor radius: the chord of the line at rest 0.8 to 0.97 of its length
        dz = fz - hz
        chord = L * rng.uniform(0.8, 0.97)
        ra = math.sqrt(max(chord * chord - dz * dz, 1.0)) + fr
        lines.append(MooringLine((ra * math.cos(a), ra * math.sin(a), hz),
                                 (fr * math.cos(a), fr * math.sin(a), fz), L,
                                 float(10 ** rng.uniform(8, 9.5)), float(rng.uniform(100, 1500)),
                                 float(rng.choice([0.0, rng.uniform(0.1, 1.0)])),
                                 name=f"line{i}"))
    return MooringSystem(lines, depth), L


def _catenary_case(seed):
    """Run the seed's case in C and in Python; the line regimes the run went through."""
    rng = np.random.default_rng(seed)
    system, L = _mooring_system(rng, seed)
    amp = 0.06 * L
    t_end = 60.0

    def make():
        r = np.random.default_rng(seed + 1)
        b = DiagramBuilder(f"cm{seed}")
        m = b.add(CatenaryMooring("moor", system))
        pos = [_signal(b, "px", r, -amp, amp, t_end), _signal(b, "py", r, -amp, amp, t_end),
               _signal(b, "pz", r, -3.0, 3.0, t_end)]
        b.connect(_vector(b, "pos", pos), m.position)
        b.connect(_signal(b, "yaw", r, -0.3, 0.3, t_end), m.heading)
        return b.build()
    py = _both(make, t_end, solver=SOLVERS[seed % 4], dt=0.1)
    # the corpus goes through slack and taut lines: check the regimes of the recorded states
    regimes = set()
    for p, hd in zip(py["pos.y"][::10], py["yaw.y"][::10]):
        _, _, sols = system.solve(p, (0.0, 0.0, hd), warm_start=False)
        regimes.update(s.regime for s in sols)
    return regimes


def test_catenary_mooring_corpus_through_slack_and_taut_lines():
    seen = set()
    for seed in SEEDS:
        seen |= _catenary_case(seed)
    assert {"seabed contact", "suspended"} <= seen, seen


def test_catenary_c_equals_python_catenary_on_one_line_over_all_regimes():
    """One line moved far on the seabed (slack "L" line, seabed contact with friction,
    taut suspended); then an anchor 90 m above the seabed (suspended and reversed lines)."""
    cases = [(0.0, 440.0, 0.5, (-20.0, 60.0), (0.0, 60.0)),
             (90.0, 405.0, 0.0, (2.5, 12.5), (0.0, 40.0))]
    for h_a, L, fr, (xb, xa), (zb, za) in cases:
        def make(h_a=h_a, L=L, fr=fr, xb=xb, xa=xa, zb=zb, za=za):
            b = DiagramBuilder("one")
            ln = MooringLine((400.0, 0.0, -100.0 + h_a), (0.0, 0.0, -10.0), L, 5e8, 800.0, fr)
            # two copies of the line: the (1,) tensions of one line, see _mooring_system
            m = b.add(CatenaryMooring("moor", MooringSystem([ln, ln], 100.0)))
            x = b.add(bl.Sine("x", amplitude=xa, frequency_hz=0.05, bias=xb))
            z = b.add(bl.Sine("z", amplitude=za, frequency_hz=0.11, bias=zb))
            b.connect(_vector(b, "pos", [x.y, _zero(b, "y0"), z.y]), m.position)
            b.connect(_zero(b, "hd"), m.heading)
            return b.build()
        py = _both(make, 20.0, solver="rk4", dt=0.05)
        regimes = {catenary(400.0 - p[0], p[2] + 90.0 - h_a, L, 5e8, 800.0, fr, h_a).regime
                   for p in py["pos.y"]}
        assert len(regimes) >= 2, regimes


# ------------------------------------------------------------------ Morison member
def _sea(rng, seed):
    depth = float(rng.choice([np.inf, rng.uniform(30, 300)]))
    stretch = ("extrapolate", "wheeler", "vertical")[seed % 3]
    if seed % 2:
        return RegularWave(rng.uniform(1, 8), rng.uniform(5, 14), depth,
                           heading=rng.uniform(-1, 1), phase=rng.uniform(0, 6),
                           stretching=stretch), depth
    return IrregularSea.from_spectrum(JONSWAP(rng.uniform(2, 7), rng.uniform(7, 13), 3.3),
                                      int(rng.integers(5, 40)), seed=seed, depth=depth,
                                      heading=rng.uniform(-1, 1), stretching=stretch), depth


@pytest.mark.parametrize("seed", SEEDS)
def test_morison_member_corpus(seed):
    rng = np.random.default_rng(seed)
    sea, depth = _sea(rng, seed)
    bottom = -min(0.8 * depth, rng.uniform(10, 60))
    motion = "fixed" if seed % 3 == 0 else "rigid_body"
    added = motion == "rigid_body" and seed % 2 == 0
    kw = dict(diameter=rng.uniform(0.5, 10), cd=rng.uniform(0, 1.2), ca=rng.uniform(0, 1.5),
              motion=motion, include_added_mass=added, n_gauss=int(rng.integers(2, 9)),
              n_segments=int(rng.integers(1, 5)), wet_to=("surface", "swl")[seed % 2])
    end_a = [rng.uniform(-5, 5), rng.uniform(-5, 5), bottom]
    end_b = [rng.uniform(-8, 8), rng.uniform(-8, 8), rng.uniform(3, 15)]
    t_end = 30.0

    def make():
        r = np.random.default_rng(seed + 7)
        b = DiagramBuilder(f"mm{seed}")
        m = b.add(MorisonMember("m", sea, end_a, end_b, **kw))
        if motion == "rigid_body":
            ports = [("position", 4.0), ("rotation", 0.15), ("velocity", 1.5),
                     ("angular_velocity", 0.1)]
            if added:
                ports += [("acceleration", 0.8), ("angular_acceleration", 0.05)]
            for p, a in ports:
                sig = [_signal(b, f"{p}{k}", r, -a, a, t_end) for k in range(3)]
                b.connect(_vector(b, p, sig), m.input(p))
        return b.build()
    py = _both(make, t_end, solver=SOLVERS[seed % 4], dt=0.1)
    assert np.max(np.abs(py["m.force"])) > 0
    if kw["wet_to"] == "surface":  # the surface cut moves along the member
        assert np.ptp(py["m.wetted_length"]) > 0


# ------------------------------------------------------------------ the examples
@pytest.mark.parametrize("case", ["P3", "P2"])
def test_crane_vessel_example_60_s(case):
    from examples.crane_vessel import STEPS_PER_PERIOD, build, period_of
    dt = round(period_of(case) / STEPS_PER_PERIOD, 9)  # the example's own RK4 step
    _both(lambda: build(case, (0.5, 0.0, 0.1, 0.0)), 60.0, solver="rk4", dt=dt)


def test_ocean_moored_cylinder_example_60_s():
    from examples.ocean_moored_cylinder import RECORD, SIMULATION, build
    py = _both(build, 60.0, record=RECORD, solver=SIMULATION["solver"], dt=SIMULATION["dt"])
    assert np.ptp(py["body.x"]) > 0.1


# ------------------------------------------------------------------ without a C form
@pytest.mark.parametrize("cls", [CraneVessel, MorisonMember, CatenaryMooring,
                                 PolynomialMooring, "SurgeBody"])
def test_without_its_c_form_the_block_is_called_back_or_refused(cls, monkeypatch):
    from examples import ocean_moored_cylinder as oc
    if cls == "SurgeBody":
        cls = oc.SurgeBody
    monkeypatch.delattr(cls, "c_model")
    if cls is CraneVessel:
        make, _ = _crane_vessel(0)
    elif cls is PolynomialMooring:
        def make():
            b = DiagramBuilder("pm")
            b.connect(b.add(bl.Sine("s", 1.0, 1.0)).y, b.add(PolynomialMooring("pm", 1.0)).x)
            return b.build()
    else:
        make = oc.build
    check_without_c_form(make, cls.__name__, 0.2, solver="rk4", dt=0.1)
