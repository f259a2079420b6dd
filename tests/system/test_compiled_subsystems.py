"""Native co-simulation subsystems (:class:`cosim.DiagramSubsystem`) whose Simulators run
in C: the master's input polynomials (the :class:`~cosim.subsystem.CouplingInput` blocks'
discrete state ``(t0, coefficients)``) are handed to the C as ``t0, n, c0..c3``
(``DiscreteState.c_codec``) and back, and the coupling input's C form evaluates them as
its Python output does.

Oracle: the same masters with ``compiled=False`` subsystems.  A generated, seeded corpus of
subsystem pairs (a coupling input through gains, saturations, products, sums with a sine,
integrators and lags to the output; fed back through the other subsystem), every
extrapolation order 0-3, Jacobi and Gauss-Seidel, several macro and micro steps: bit for
bit with ``fuse_linear=False``; to 1e-12 of each signal's range with the default fused
linear groups (the Python loop steps those with the exact propagator, the C stage by
stage: ``docs/concepts/compiled-runs.md``).
"""

from __future__ import annotations

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, DiagramSubsystem, GaussSeidel, Jacobi, MasterScheduler
from cosim.subsystem import CouplingInput, _pack_poly, _unpack_poly
from tests.corpus.subsystem_diagrams import random_chain


def _sub_diagram(rng, name: str):
    """``u -> (a few random blocks) -> x``, with a state somewhere on the path."""
    b = DiagramBuilder(name)
    first = b.add(bl.Gain("g0", float(rng.uniform(-2.0, 2.0))))
    b.export_input(first.u, "u")
    prev = random_chain(b, rng, first.y)
    damp = b.add(bl.Sum("damp", "+-"))
    integ = b.add(bl.Integrator("x", float(rng.uniform(-1, 1))))
    b.connect(prev, damp.input("u0"))
    b.connect(integ.y, damp.input("u1"))
    b.connect(damp.y, integ.u)
    b.export_output(integ.y, "x")
    return b.build()


def _master(seed: int, compiled: bool, order: int, coupling: str, fuse: bool):
    rng = np.random.default_rng(seed)
    H = float(rng.choice([1e-3, 2e-3, 5e-3]))
    micro = H / int(rng.choice([1, 2, 5]))
    subs = [DiagramSubsystem(_sub_diagram(rng, n), solver=str(rng.choice(["rk4", "heun"])),
                             dt=micro, compiled=compiled, fuse_linear=fuse)
            for n in ("a", "c")]
    c = Jacobi() if coupling == "jacobi" else GaussSeidel()
    return MasterScheduler(subs, [("a.x", "c.u"), ("c.x", "a.u")], H, coupling=c,
                           extrapolation=order), subs


CASES = [(seed, order, coupling) for seed in range(8) for order in range(4)
         for coupling in ("jacobi", "gauss_seidel")]


@pytest.mark.parametrize("seed,order,coupling", CASES)
def test_compiled_subsystems_equal_the_python_loop(seed, order, coupling):
    for fuse in (False, True):
        ref, _ = _master(seed, False, order, coupling, fuse)
        got, subs = _master(seed, True, order, coupling, fuse)
        r0, r1 = ref.run(0.3), got.run(0.3)
        assert all(s.sim.route.diagnostic() is True for s in subs), \
            [s.sim.route.diagnostic() for s in subs]
        assert np.array_equal(r0.time, r1.time)
        for path in ("a.x", "c.x"):
            a, b = np.asarray(r0[path]), np.asarray(r1[path])
            if not fuse:
                assert np.array_equal(a, b), (path, np.max(np.abs(a - b)))
            else:
                span = max(float(np.ptp(a)), 1e-300)
                assert np.max(np.abs(a - b)) <= 1e-12 * span, (path, np.max(np.abs(a - b)))


def test_the_polynomial_state_round_trips_exactly():
    """``(t0, coefficients)`` of 1 to 4 terms, packed and unpacked unchanged; more terms
    than the C holds is an error."""
    rng = np.random.default_rng(3)
    for n in range(1, 5):
        v = (float(rng.uniform(0, 10)), tuple(float(x) for x in rng.normal(size=n) * 1e3))
        d = _pack_poly(v)
        assert len(d) == 6 and _unpack_poly(d, None) == v
    with pytest.raises(ValueError, match="5 terms"):
        _pack_poly((0.0, (1.0,) * 5))


def test_an_array_coupling_input_names_itself():
    """Only a scalar Real coupling input has a C form; an array one says so."""
    from cosim.codegen.model import CodegenError
    blk = CouplingInput("u", shape=(3,))
    with pytest.raises(CodegenError, match="only a scalar Real input"):
        blk.c_model(None)


@pytest.mark.parametrize("t_end, compiles", [(0.5, True), (0.05, False)])
def test_a_masters_run_weighs_compiling_on_its_whole_run(t_end, compiles, monkeypatch):
    """``compiled=None`` subsystems of ``master.run(t_end)`` decide on the work up to
    ``t_end`` (``CompiledRoute.plan_to``), as a Simulator run to ``t_end`` would; stepping
    the same master by hand with no end announced they decide on the work so far."""
    from cosim.compiled_route import CompiledRoute

    def make():
        return _master(3, None, 1, "jacobi", True)

    m, subs = make()
    routes = [s.sim.route for s in subs]
    longest = min(r._estimate(round(0.5e9)) for r in routes)
    shortest = max(r._estimate(round(0.05e9)) for r in routes)
    assert shortest < longest  # (the cases' premise: 0.05 s below the bar, 0.5 s above)
    monkeypatch.setattr(CompiledRoute, "threshold", longest)
    m.run(t_end)
    for s in subs:
        d = s.sim.route.diagnostic()
        if compiles:
            assert d is True, d
        else:
            assert isinstance(d, str) and d.startswith("a short run so far"), d
    m2, subs2 = make()  # no end announced: each macro step's work alone, below the bar
    st = m2.stepper()
    st.advance_to_ticks(st.master.t + 5 * st.master.H)
    assert all(str(s.sim.route.diagnostic()).startswith("a short run so far") for s in subs2)
