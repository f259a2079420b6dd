"""C forms of the blocks of ``examples/crane_vessel_6dof.py`` and ``examples/lim_manipulator.py``:
Vessel6DOF, WaveLoads and the examples' HoistRope and ValveCommand, compiled
(``Simulator(compiled=True)``) against the Python loop, their oracle.

Per block a generated corpus (seeded random parameters within their valid ranges, inputs as
sums of Sine, Step and Ramp sources of random amplitude): vessels from a 12 m workboat to a
300 m barge with full symmetric added mass, full damping, off-diagonal inertia, hull points
and load points, with and without the external, wave and Kirchhoff added-mass terms; regular
and irregular seas (JONSWAP, Pierson-Moskowitz) of several headings and depths with RAOs and
drift tables, the three drift methods; hoist ropes of several stiffnesses and lengths going
slack and taut; valve commands over random breakpoints and ranges.  Recorded times
identical; every signal within 1e-12 of its range (``_compare`` of test_compiled_run):
NumPy's OpenBLAS products (``@``, ``np.dot``, ``norm``) sum in an order of their own with
fused multiply-adds, so Vessel6DOF, WaveLoads and HoistRope cannot be bit for bit; the
valve command is (its outputs compared exactly; the integrator it feeds, a core block, to
1e-12).  Then both examples' diagrams as far as they compile on this branch (their
FunctionBlocks have no C form yet): crane_vessel_6dof without its 'mooring' FunctionBlock for
20 s, lim_manipulator's hydraulic circuit under the M1 command with the boom replaced by
sources.  Removing a block's C form keeps the diagram out of C (the last test).
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import blocks as bl
from blocks.ocean import JONSWAP, IrregularSea, PiersonMoskowitz, RegularWave
from blocks.ocean.vessel import Vessel6DOF, VesselData
from blocks.ocean.wave_loads import DriftCoefficients, ForceRAO, WaveLoads
from cosim import DiagramBuilder
from cosim.errors import ParameterError
from tests.corpus.compiled_oracle import check_without_c_form, run_both
from tests.system.test_c_forms_ocean import SEEDS, SOLVERS, _both, _signal, _vector

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

# ------------------------------------------------------------------ vessel
def _spd(rng, n, scale, off):
    """A symmetric positive definite n x n matrix with diagonal ~scale and off-diagonal
    coupling of relative size ``off``."""
    d = scale * rng.uniform(0.5, 1.5, n)
    a = rng.uniform(-off, off, (n, n)) * np.sqrt(np.outer(d, d))
    a = 0.5 * (a + a.T)
    np.fill_diagonal(a, d)
    return a


def _vessel_data(rng):
    L = float(rng.choice([12.0, 60.0, 150.0, 300.0])) * rng.uniform(0.8, 1.2)
    B, T = L * rng.uniform(0.2, 0.4), L * rng.uniform(0.04, 0.08)
    base = VesselData.box_barge(L, B, T, kg=T * rng.uniform(0.6, 1.6))
    Mrb = np.diag(base.rigid_body_mass())
    inertia = np.diag(base.inertia.diagonal())
    inertia[0, 2] = inertia[2, 0] = 0.05 * math.sqrt(inertia[0, 0] * inertia[2, 2])
    added = _spd(rng, 6, 1.0, 0.15) * np.sqrt(np.outer(Mrb, Mrb)) * rng.uniform(0.05, 0.6)
    damp = _spd(rng, 6, 1.0, 0.2) * np.sqrt(np.outer(Mrb, Mrb)) * rng.uniform(0.01, 0.2)
    return VesselData(mass=base.mass, inertia=inertia, added_mass=added, damping=damp,
                      volume=base.volume, waterplane_area=base.waterplane_area,
                      gm_t=base.gm_t, gm_l=base.gm_l), L


def _vessel_case(seed):
    rng = np.random.default_rng(seed)
    data, L = _vessel_data(rng)
    ext, wave = seed % 3 != 2, seed % 2 == 0
    pts = {f"p{i}": rng.uniform(-0.5, 0.5, 3) * L for i in range(int(rng.integers(0, 3)))}
    lps = {f"l{i}": rng.uniform(-0.5, 0.5, 3) * L for i in range(int(rng.integers(0, 3)))}
    kw = dict(position=rng.uniform(-1, 1, 3) * 0.01 * L, rpy=rng.uniform(-0.1, 0.1, 3),
              nu=np.concatenate([rng.uniform(-1, 1, 3), rng.uniform(-0.05, 0.05, 3)]),
              z_eq=rng.uniform(-2, 2), points=pts, load_points=lps, external=ext, wave=wave,
              coriolis_added_mass=bool(seed % 4 < 2), norm_gain=rng.uniform(0, 5))
    W = data.mass * 9.81 * 0.02
    t_end = 20.0

    def make():
        r = np.random.default_rng(seed + 11)
        b = DiagramBuilder(f"v{seed}")
        v = b.add(Vessel6DOF("v", data, **kw))
        ins = ([("force", W), ("moment", W * L * 0.05)] if ext else []) + \
              ([("wave_force", W), ("wave_moment", W * L * 0.05)] if wave else []) + \
              [(f"{k}_force", W) for k in lps]
        for p, a in ins:
            b.connect(_vector(b, p, [_signal(b, f"{p}{k}", r, -a, a, t_end)
                                     for k in range(3)]), v.input(p))
        return b.build()
    return make, t_end


@pytest.mark.parametrize("seed", range(8))
def test_vessel6dof_corpus(seed):
    make, t_end = _vessel_case(seed)
    py = _both(make, t_end, solver=SOLVERS[seed % 4], dt=0.05)
    assert np.ptp(py["v.rotation"][:, 0]) > 1e-3 and np.ptp(py["v.position"][:, 2]) > 1e-3


# ------------------------------------------------------------------ wave loads
def _wave_case(seed):
    rng = np.random.default_rng(seed)
    heading = float(rng.uniform(-math.pi, math.pi))
    depth = float(rng.choice([np.inf, rng.uniform(20, 200)]))
    if seed % 3 == 0:
        sea = RegularWave(rng.uniform(0.5, 6), rng.uniform(4, 14), depth, heading=heading,
                          phase=rng.uniform(0, 6))
    else:
        spec = (JONSWAP(rng.uniform(1, 6), rng.uniform(6, 14), rng.uniform(1, 5))
                if seed % 2 else PiersonMoskowitz(rng.uniform(1, 6), rng.uniform(6, 14)))
        sea = IrregularSea.from_spectrum(spec, int(rng.integers(3, 120)), seed=seed,
                                         heading=heading, depth=depth)
    L = rng.uniform(20, 200)
    B, T = L * rng.uniform(0.2, 0.4), L * rng.uniform(0.03, 0.08)
    w = np.linspace(0.05, 4.0, int(rng.integers(10, 60)))
    rao = ForceRAO.froude_krylov_box(L, B, T, w, heading=heading, depth=depth,
                                     reference=(0.0, 0.0, rng.uniform(-T, 2)),
                                     extrapolate="hold")
    drift = DriftCoefficients.box_reflection(L, B, T, w, heading=heading, extrapolate="zero")
    kw = dict(drift_method=("seed", "newman", "mean")[seed % 3],
              drift_factor=rng.choice([1.0, 0.5]), reference=rng.uniform(-50, 50, 2),
              first_order=seed % 5 != 4, second_order=seed % 7 != 6)
    return sea, rao, drift, kw


@pytest.mark.parametrize("seed", range(10))
def test_wave_loads_corpus(seed):
    sea, rao, drift, kw = _wave_case(seed)

    def make():
        b = DiagramBuilder(f"w{seed}")
        wl = b.add(WaveLoads("w", sea, rao, drift, **kw))
        integ = b.add(bl.Integrator("i", shape=(3,)))  # a continuous state: the RK stages
        b.connect(wl.output("force"), integ.u)
        return b.build()
    py = _both(make, 60.0, solver=SOLVERS[seed % 4], dt=0.1)
    assert np.ptp(py["w.eta"]) > 0.1
    if kw["first_order"]:
        assert np.ptp(py["w.first_order"][:, 0] + py["w.first_order"][:, 2]) > 0


# ------------------------------------------------------------------ hoist rope
def _rope_case(seed):
    from examples.crane_vessel_6dof import HoistRope
    rng = np.random.default_rng(seed)
    ell0 = rng.uniform(2, 100)
    k = 10 ** rng.uniform(4, 8)
    c = rng.uniform(0, 0.1) * k
    t_end = 10.0

    def make():
        r = np.random.default_rng(seed + 3)
        b = DiagramBuilder(f"r{seed}")
        rope = b.add(HoistRope("rope", ell0, k, c))
        # the hook about the rope's length below the tip: slack and taut in turn
        tip = [_signal(b, f"t{j}", r, -1.0, 1.0, t_end) for j in range(3)]
        hook = [_signal(b, f"h{j}", r, -1.0, 1.0, t_end) for j in range(2)] + [
            _signal(b, "h2", r, -ell0 * 1.05, -ell0 * 0.95, t_end)]
        for nm, sig in (("tip", tip), ("hook", hook)):
            pos = _vector(b, f"{nm}_p", sig)
            b.connect(pos, rope.input(f"{nm}_pos"))
            b.connect(_vector(b, f"{nm}_v", [_signal(b, f"{nm}v{j}", r, -0.5, 0.5, t_end)
                                             for j in range(3)]), rope.input(f"{nm}_vel"))
        integ = b.add(bl.Integrator("i", shape=(3,)))
        b.connect(rope.output("hook_force"), integ.u)
        return b.build()
    return make, t_end


@pytest.mark.parametrize("seed", SEEDS)
def test_hoist_rope_corpus_slack_and_taut(seed):
    make, t_end = _rope_case(seed)
    py = _both(make, t_end, solver=SOLVERS[seed % 4], dt=0.01)
    T = py["rope.tension"]
    assert T.min() == 0.0 and T.max() > 0.0  # slack and taut both seen


# ------------------------------------------------------------------ valve command
def _valve_case(seed):
    from examples.lim_manipulator import ValveCommand
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    t = np.sort(np.round(rng.uniform(0, 4, n), 3))
    if n > 2 and seed % 2:
        t[2] = t[1]  # a repeated breakpoint: a jump
    lo, hi = sorted(rng.uniform(-1, 2, 2))
    kappa = rng.uniform(lo, hi, n)

    def make():
        b = DiagramBuilder(f"k{seed}")
        cmd = b.add(ValveCommand("kappa", tuple(t), tuple(kappa)))
        integ = b.add(bl.Integrator("i"))
        b.connect(cmd.u, integ.u)
        return b.build()
    return make


@pytest.mark.parametrize("seed", range(8))
def test_valve_command_corpus_bit_for_bit(seed):
    make = _valve_case(seed)
    py, c = run_both(make, 5.0, solver=SOLVERS[seed % 4], dt=0.01)  # all to 1e-12
    for k in ("kappa.kappa", "kappa.u"):  # the command itself bit for bit (the core
        assert np.array_equal(py[k], c[k]), k  # integrator's C sums differ in the last bit)
    assert np.ptp(py["kappa.kappa"]) > 0


def test_valve_command_refuses_unsorted_breakpoints():
    from examples.lim_manipulator import ValveCommand
    with pytest.raises(ParameterError, match="non-decreasing"):
        ValveCommand("k", (0.0, 2.0, 1.0), (0.1, 0.2, 0.3))


# ------------------------------------------------------------------ the examples
def test_crane_vessel_6dof_example_without_its_function_block_mooring():
    """The example's diagram (vessel, waves, rope, multibody load) for 20 s with its own
    RK4 step; the 'mooring' FunctionBlock left out (no C form on this branch)."""
    from examples.crane_vessel_6dof import RECORD, SIMULATION, build
    py = _both(lambda: build(mooring=False), 20.0, record=RECORD, solver="rk4",
               dt=SIMULATION["dt"])
    assert np.ptp(py["rope.tension"]) > 1e3 and np.ptp(py["vessel.rotation"][:, 0]) > 1e-4


@pytest.mark.parametrize("compact", [False, True])
def test_lim_manipulator_hydraulics_with_the_m1_command(compact):
    """The example's hydraulic circuit (valve and cylinder, or the compact block) under its
    M1 valve command through all four corners (2, 2.001, 6, 6.002 s), the boom's motion
    replaced by sources (its FunctionBlocks have no C form on this branch)."""
    import examples.lim_manipulator as lm

    def make():
        b = DiagramBuilder("lim_h")
        _, cyl, _ = (lm.add_compact_hydraulics if compact else lm.add_hydraulics)(b)
        x = b.add(bl.Sine("x", amplitude=0.05, frequency_hz=0.5, bias=0.5 * lm.L_CYL))
        v = b.add(bl.Sine("v", amplitude=0.05 * np.pi, frequency_hz=0.5, phase_rad=np.pi / 2))
        b.connect(x.y, cyl.x)
        b.connect(v.y, cyl.v)
        return b.build()
    py, c = run_both(make, 7.0, solver="rk4", dt=1e-4)
    assert np.array_equal(py["kappa.u"], c["kappa.u"])
    assert len(np.unique(py["kappa.kappa"])) > 3 and np.ptp(py["cyl.p_1"]) > 1e4


def test_the_lim_manipulator_example_runs_in_c():
    """With ValveCommand's C form and its array FunctionBlocks translated, the whole LIM
    example runs in C and equals the Python loop (1e-12 of each signal's range)."""
    from examples.lim_manipulator import build
    from tests.corpus.compiled_oracle import run_both
    run_both(build, 0.02, solver="rk4", dt=1e-4)


# ------------------------------------------------------------------ without a C form
@pytest.mark.parametrize("which", ["Vessel6DOF", "WaveLoads", "HoistRope", "ValveCommand"])
def test_without_its_c_form_the_block_is_called_back_or_refused(which, monkeypatch):
    import examples.crane_vessel_6dof as ex
    import examples.lim_manipulator as lm
    cls = {"Vessel6DOF": Vessel6DOF, "WaveLoads": WaveLoads, "HoistRope": ex.HoistRope,
           "ValveCommand": lm.ValveCommand}[which]
    monkeypatch.delattr(cls, "c_model")
    make = _valve_case(0) if which == "ValveCommand" else (lambda: ex.build(mooring=False))
    check_without_c_form(make, which, 0.2, solver="rk4", dt=0.1)
