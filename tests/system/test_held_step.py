"""Co-simulation subsystems that keep their state in C between macro steps
(:mod:`cosim.held_step`): the master's inputs written into the C state, the step run from
the C state, the outputs read from it, feedthrough outputs refreshed in C; every other use
of the subsystem hands the state back first.

Oracle: the same masters the whole way (``HeldStep.applies`` off: the context copied into C
and back at every step) and in the Python loop (``compiled=False``).  A generated, seeded
corpus of subsystem pairs: a coupling input through gains, saturations, products, a sine,
lags, a zero-order hold and a unit delay (sampled blocks: held outputs and discrete
updates) to a state output and, in some, a feedthrough output that the other subsystem
reads (the master refreshes it every macro step); Jacobi and Gauss-Seidel, extrapolation
orders 0-3, rates 1 and 2, several macro and micro steps.  Bit for bit with
``fuse_linear=False``; with fused linear groups to 1e-12 of each signal's range (the C sums a
fused group's outputs in its own order: ``docs/concepts/compiled-runs.md``).
"""

from __future__ import annotations

import numpy as np
import pytest

import blocks as bl
from cosim import (
    DiagramBuilder,
    DiagramSubsystem,
    GaussSeidel,
    Iterative,
    Jacobi,
    MasterScheduler,
)
from cosim.held_step import HeldStep
from tests.corpus.compiled_oracle import same_results as _same
from tests.corpus.subsystem_diagrams import sqrt_diagram
from tests.corpus.subsystem_diagrams import sub_diagram as _sub_diagram


def _master(seed: int, compiled: bool, order: int, coupling: str, fuse: bool,
            iterate: bool = False, loop: bool = False):
    """A generated pair; ``loop``: the master's ``compiled`` (False: its Python loop steps the
    held subsystems; the native loop, cosim.native_loop, has its own tests)."""
    rng = np.random.default_rng(seed)
    H = float(rng.choice([1e-3, 2e-3, 5e-3]))
    micro = H / int(rng.choice([1, 2, 5]))
    rate_c = int(rng.choice([1, 2])) if coupling == "jacobi" and not iterate else 1
    feed = bool(seed % 2)
    a = DiagramSubsystem(_sub_diagram(rng, "a", feed, micro),
                         solver=str(rng.choice(["rk4", "heun", "midpoint", "euler"])), dt=micro,
                         compiled=compiled, fuse_linear=fuse)
    c = DiagramSubsystem(_sub_diagram(rng, "c", False, micro),
                         solver=str(rng.choice(["rk4", "heun"])), dt=micro,
                         compiled=compiled, fuse_linear=fuse, rate=rate_c)
    # a.f (feedthrough from a.u) feeds c.v: the master refreshes a at every point
    conns = [("a.x", "c.u"), ("c.x", "a.u"), ("a.f" if feed else "a.x", "c.v"),
             ("c.x", "a.v")]
    cpl = Iterative("fixed_point") if iterate else (
        Jacobi() if coupling == "jacobi" else GaussSeidel())
    return MasterScheduler([a, c], conns, H, coupling=cpl, extrapolation=order,
                           compiled=loop), [a, c]


def _counting(monkeypatch) -> dict:
    """Count the held steps and refreshes (HeldStep.step, HeldStep.refresh)."""
    n = {"step": 0, "refresh": 0}
    step, refresh = HeldStep.step, HeldStep.refresh

    def counted_step(self, t0, end):
        n["step"] += 1
        return step(self, t0, end)

    def counted_refresh(self):
        n["refresh"] += 1
        return refresh(self)
    monkeypatch.setattr(HeldStep, "step", counted_step)
    monkeypatch.setattr(HeldStep, "refresh", counted_refresh)
    return n


def _whole_way(monkeypatch) -> None:
    monkeypatch.setattr(HeldStep, "applies", staticmethod(lambda sub: False))


CASES = [(seed, order, coupling) for seed in range(10) for order in range(4)
         for coupling in ("jacobi", "gauss_seidel")]


@pytest.mark.parametrize("seed,order,coupling", CASES)
def test_held_steps_equal_the_whole_way_and_the_python_loop(seed, order, coupling,
                                                            monkeypatch):
    for fuse in (False, True):
        with monkeypatch.context() as mp:
            _whole_way(mp)
            whole = _master(seed, True, order, coupling, fuse)[0].run(0.2)
        py = _master(seed, False, order, coupling, fuse)[0].run(0.2)
        with monkeypatch.context() as mp:
            n = _counting(mp)
            m, subs = _master(seed, True, order, coupling, fuse)
            held = m.run(0.2)
        steps = held.diagnostics["subsystem_steps"]
        # held but for each subsystem's first step (the whole way, which starts holding)
        # and, for orders 2-3, the start's waveform relaxation (steps redone from a
        # checkpoint: each save hands the state back)
        total = sum(steps.values())
        assert n["step"] == total - 2 if order < 2 else n["step"] >= 0.85 * total, (n, steps)
        if seed % 2:
            assert n["refresh"] >= steps["a"] - 1, n  # a's feedthrough output, every point
        paths = [p for p in held.signals if p.endswith((".x", ".f"))]
        _same(whole, held, paths, not fuse, "held against the whole way")
        _same(py, held, paths, not fuse, "held against the Python loop")
        assert all(s.sim.route.diagnostic() is True for s in subs)


@pytest.mark.parametrize("seed", range(4))
def test_iterative_coupling_rolls_held_subsystems_back(seed, monkeypatch):
    """Fixed-point iteration saves and restores the subsystems every sweep: each save hands
    the state back (the next step goes the whole way); the results equal the Python loop's."""
    py = _master(seed, False, 1, "jacobi", False, iterate=True)[0].run(0.1)
    n = _counting(monkeypatch)
    got = _master(seed, True, 1, "jacobi", False, iterate=True)[0].run(0.1)
    _same(py, got, [p for p in got.signals if p.endswith((".x", ".f"))], True, "iterative")
    assert n["step"] == 0  # a checkpoint before every step: never held across one


def test_reading_a_subsystem_between_steps_hands_its_state_back(monkeypatch):
    """Between macro steps the context (``sub.ctx``) is the one the whole way leaves: read
    while held, it is handed back first; stepping on holds it again."""
    n = _counting(monkeypatch)
    m, subs = _master(3, True, 2, "jacobi", False)
    st = m.stepper(record_every=1)
    st.start()
    seen = []
    for k in range(1, 41):
        st.advance_to_ticks(k * m.H)
        if k % 10 == 0:
            a = subs[0]
            assert a._held is not None  # held until read
            seen.append((a.ctx.ticks, a.ctx.xc.copy(), list(a.ctx.signals)))
            assert a._held is None
    held_steps = n["step"]
    st.close()
    with monkeypatch.context() as mp:
        _whole_way(mp)
        m2, subs2 = _master(3, True, 2, "jacobi", False)
        st2 = m2.stepper(record_every=1)
        st2.start()
        for k in range(1, 41):
            st2.advance_to_ticks(k * m2.H)
            if k % 10 == 0:
                ticks, xc, sig = seen.pop(0)
                ctx = subs2[0].ctx
                assert ticks == ctx.ticks and np.array_equal(xc, ctx.xc)
                assert all(x == y or (x != x and y != y) for x, y in zip(sig, ctx.signals))
        st2.close()
    assert held_steps > 60  # 80 steps, each read costs the next step of a its holding


def test_a_c_failure_in_a_held_step_is_the_python_loops_error(monkeypatch):
    """The C fails at 2 s inside a held step: the state goes back to the slice's start, the
    Python loop takes over and raises its own error, as the Python loop alone does."""
    def run(compiled):
        sub = DiagramSubsystem(sqrt_diagram(), solver="rk4", dt=1e-3, compiled=compiled)
        other = DiagramSubsystem(_sub_diagram(np.random.default_rng(1), "c", False, 1e-3),
                                 solver="rk4", dt=1e-3, compiled=compiled)
        m = MasterScheduler([sub, other], [("w.y", "c.u"), ("c.x", "w.v"), ("c.x", "c.v")],
                            1e-3, coupling=Jacobi(), compiled=False)
        with pytest.raises(Exception) as info:
            m.run(3.0)
        return info.value
    n = _counting(monkeypatch)
    ref = run(False)
    got = run(True)
    assert n["step"] > 1000  # held until the failure
    assert type(got) is type(ref) and str(got) == str(ref), (got, ref)
    assert "2.00" in str(ref) or "t = 2" in str(ref), str(ref)


def test_a_monitor_acting_inside_a_held_step_is_the_python_loops(monkeypatch):
    """A monitor whose C condition holds inside a held step (its call returns to Python):
    the held step hands that step to the whole way, which runs the monitor; it acts at the
    same times as in the Python loop, and the results are equal."""
    from tests.system.test_compiled_monitors import _Late

    def master(compiled):
        b = DiagramBuilder("late")
        blk = b.add(_Late("blk", 0.25, 0.125))
        g = b.add(bl.Gain("g", 2.0))
        s = b.add(bl.Sum("s", "++"))
        b.connect(blk.y, s.input("u0"))
        b.connect(g.y, s.input("u1"))
        b.export_input(g.u, "u")
        b.export_output(s.y, "y")
        a = DiagramSubsystem(b.build(), solver="rk4", dt=1e-3, compiled=compiled,
                             fuse_linear=False)
        c = DiagramSubsystem(_sub_diagram(np.random.default_rng(5), "c", False, 1e-3),
                             solver="rk4", dt=1e-3, compiled=compiled, fuse_linear=False)
        m = MasterScheduler([a, c], [("late.y", "c.u"), ("c.x", "late.u"), ("c.x", "c.v")],
                            1e-3, coupling=Jacobi(), extrapolation=1, compiled=False)
        return m, blk
    n = _counting(monkeypatch)
    m, blk = master(True)
    got = m.run(1.0)
    m0, blk0 = master(False)
    ref = m0.run(1.0)
    assert blk0.log == [0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0] and blk.log == blk0.log
    assert n["step"] > 1900
    _same(ref, got, ["late.y", "c.x"], True, "monitor")


def test_an_input_given_as_an_array_hands_the_state_back_and_is_set():
    """A polynomial that is not a tuple (an array of coefficients): the held state is handed
    back and every input set the whole way; the step equals the whole way's."""
    outs = []
    for hold in (True, False):
        sub = DiagramSubsystem(_sub_diagram(np.random.default_rng(2), "a", True, 1e-3),
                               solver="rk4", dt=1e-3, compiled=True, fuse_linear=False)
        sub.initialize(0)
        sub.finish_initialization()
        t, H = 0, 1_000_000
        for k in range(5):
            sub.set_inputs(t * 1e-9, {"u": (0.1 * k, 0.5), "v": (0.2,)})
            sub.do_step(t, H)
            t += H
            if not hold:
                assert sub.ctx.ticks == t  # (hands the state back: the whole way)
        assert (sub._held is not None) is hold
        sub.set_inputs(t * 1e-9, {"u": np.array([0.7, -0.25]), "v": (0.3,)})
        assert sub._held is None  # handed back
        sub.do_step(t, H)
        outs.append(sub.get_outputs())
    assert outs[0] == outs[1]
