"""The native master loop in C (:mod:`cosim.native_loop`): macro steps of a master of native
subsystems without Python between them, subsystems held in C stepped by their own C, the
others called back in Python.

Oracles: the Python loop (``MasterScheduler(compiled=False)``: the same subsystems, their
states held in C and stepped by the master's Python loop, :mod:`cosim.held_step`; bit for
bit: the same C runs) and the Python loop all the way (subsystems ``compiled=False``: bit for
bit with ``fuse_linear=False``, 1e-12 of each signal's range with fused groups).  A
generated, seeded corpus: 2-4 subsystems of random blocks (lags, saturations, products, sines,
zero-order holds, unit delays), some with a block without a C form (called back) or a
Simulator in Python, feedthrough outputs the master settles at every point, connections with
unit scales and offsets, Jacobi and Gauss-Seidel (with a stepping order), extrapolation orders
0 to 3 (global and per input; from order 2 the high-order start), rates 1-3, macro steps of
1-5 ms with 1-5 micro steps, four solvers.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import blocks as bl
from cosim import (
    Block,
    DiagramBuilder,
    DiagramSubsystem,
    FunctionBlock,
    GaussSeidel,
    Jacobi,
    MasterScheduler,
    StepController,
)
from cosim.native_loop import NativeLoop
from cosim.native_plan import held_of
from tests.corpus.compiled_oracle import same_results
from tests.corpus.subsystem_diagrams import sqrt_diagram, sub_diagram


def _master(seed: int, loop: bool | None, python: bool, fuse: bool):
    """Seed ``seed``'s master; ``loop`` the master's ``compiled``; ``python``: every
    subsystem's Simulator in Python (the all-Python oracle)."""
    rng = np.random.default_rng(seed)
    H = float(rng.choice([1e-3, 2e-3, 5e-3]))
    micro = H / int(rng.choice([1, 2, 5]))
    n = int(rng.integers(2, 5))
    gs = seed % 3 == 2
    names = [f"s{i}" for i in range(n)]
    subs, feeds = [], {}
    for name in names:
        feed = bool(rng.integers(0, 2))
        py_block = rng.uniform() < 0.25
        in_python = rng.uniform() < 0.15 or python  # (the same draws either way)
        d = sub_diagram(rng, name, feed, micro, python_block=py_block)
        subs.append(DiagramSubsystem(
            d, solver=str(rng.choice(["rk4", "heun", "midpoint", "euler"])), dt=micro,
            compiled=False if in_python else True, fuse_linear=fuse,
            rate=int(rng.choice([1, 1, 2, 3]))))
        feeds[name] = feed
    conns = []
    for i, name in enumerate(names):
        for port in ("u", "v"):
            j = int(rng.integers(0, n - 1))
            j = j + 1 if j >= i else j  # another subsystem
            src = names[j]
            out = "f" if feeds[src] and port == "v" and rng.uniform() < 0.7 else "x"
            if rng.uniform() < 0.3:  # a unit scale and offset
                conns.append((f"{src}.{out}", f"{name}.{port}",
                              (float(rng.uniform(0.5, 2.0)), float(rng.uniform(-0.5, 0.5)))))
            else:
                conns.append((f"{src}.{out}", f"{name}.{port}"))
    order = {"*": int(rng.integers(0, 4))}
    if rng.uniform() < 0.5:  # per input
        order.update({f"{names[0]}.u": 3 - order["*"]})
    cpl = Jacobi()
    if gs:
        cpl = GaussSeidel(list(rng.permutation(names)) if rng.uniform() < 0.5 else None)
    m = MasterScheduler(subs, conns, H, coupling=cpl, extrapolation=order, compiled=loop)
    return m, subs


def _same(r0, r1, exact: bool, what: str) -> None:
    assert list(r0.signals) == list(r1.signals), what
    same_results(r0, r1, r0.signals, exact, what)


def _in_c(m) -> int:
    """The macro steps the native loop ran in C (``diagnostics["compiled"]``)."""
    ran = m.loop_ran
    if ran is True:
        return -1  # all of them
    got = re.search(r"the native loop: (\d+) macro step", str(ran))
    assert got, ran
    return int(got.group(1))


@pytest.mark.parametrize("seed", range(40))
def test_the_native_loop_equals_the_python_loop(seed):
    t_end = 0.3
    for fuse in (False, True):
        m, subs = _master(seed, None, False, fuse)
        assert isinstance(m._loop, NativeLoop), m.compiled_reason
        got = m.run(t_end)
        # (before s.sim hands it back; a held run calling blocks back in Python is not
        # stepped by the C loop: a failed C step could not be redone)
        held_any = any(held_of(s) is not None for s in subs)
        held, _ = _master(seed, False, False, fuse)
        ref_held = held.run(t_end)
        _same(ref_held, got, True, "against the Python loop stepping held subsystems")
        py, _ = _master(seed, False, True, fuse)
        _same(py.run(t_end), got, not fuse, "against the Python loop all the way")
        assert got.diagnostics["subsystem_steps"] == ref_held.diagnostics["subsystem_steps"]
        assert all(w > 0 for w in got.diagnostics["subsystem_wall_s"].values())  # (timed in C)
        for s, s0 in zip(subs, held.subsystems):  # the Simulators' own counts
            assert s.sim.stats["steps"] == s0.sim.stats["steps"], s.name
        in_c = _in_c(m)
        steps = round(t_end / (m.H * 1e-9))
        p = max(m.input_orders.values())  # (orders from 2: the high-order start's p steps)
        start = p if p >= 2 else 0
        if held_any:  # all but the first steps (before a state was held) in C
            assert in_c == -1 or in_c >= steps - 3 - start, (m.loop_ran, steps)
        else:
            assert in_c == 0, m.loop_ran


def test_the_corpus_calls_back_and_holds():
    """The corpus has what it claims: masters with subsystems held in C beside ones called
    back in Python, Gauss-Seidel, rates above 1, settled feedthrough outputs."""
    kinds = set()
    for seed in range(40):
        m, subs = _master(seed, None, False, False)
        m.run(0.06)
        held = [held_of(s) is not None for s in subs]
        kinds.add("mixed" if any(held) and not all(held) else
                  "all held" if all(held) else "none held")
        if isinstance(m.coupling, GaussSeidel):
            kinds.add("gauss-seidel")
        if any(s.rate > 1 for s in subs):
            kinds.add("multi-rate")
        if m.settler.subs:
            kinds.add("settled")
        kinds |= {f"order {o}" for o in m.input_orders.values()}
    assert {"mixed", "all held", "gauss-seidel", "multi-rate", "settled", "order 0", "order 1",
            "order 2", "order 3"} <= kinds, kinds


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.filterwarnings("ignore:MasterStepper. extrapolation order")
def test_stepping_one_macro_step_at_a_time_equals_the_run(seed):
    """The stepper (the real-time master's way: one call per macro step) gives the run's
    rows; reading a subsystem's context between steps hands its state back (planned again).
    The master's per-subsystem counters, read between two steps (the session adds the C's
    counts when they are read), equal those of the Python loop stepped alongside."""
    m, subs = _master(seed, None, False, False)
    m.high_order_start = False  # (the stepper has none: it starts with what history has)
    ref = m.run(0.3)
    m2, subs2 = _master(seed, None, False, False)
    st = m2.stepper(record_every=1)
    st.start()
    m3, _ = _master(seed, False, False, False)  # the Python loop, and the native loop
    m4, _ = _master(seed, None, False, False)  # with no rows kept (no marks read counters)
    steppers = [m3.stepper(record_every=None), m4.stepper(record_every=None)]
    for s in steppers:
        s.start()
    k = 0
    while m2.t < round(0.3e9):
        k += 1
        st.advance_to_ticks(m2.t + m2.H)
        for s in steppers:
            s.advance_to_ticks(s.master.t + s.master.H)
        if k % 5 == 0:
            assert m4.counters.steps == m3.counters.steps, k
            assert all((w > 0) == (m4.counters.steps[n] > 0)
                       for n, w in m4.counters.wall.items()), k
        if k % 17 == 0:
            _ = subs2[0].ctx.ticks  # hands a held state back
    assert m4.loop_ran is True
    for s in steppers:
        s.close()
    res = st.results()
    st.close()
    assert np.array_equal(ref.time, res.time)
    for path in ref.signals:
        assert np.array_equal(np.asarray(ref[path]), np.asarray(res[path])), path


def _same_failure(make):
    """``make(loop, compiled) -> (master, t_end)``: the run fails in the native loop and in
    the Python loop all the way with the same error; ``(master, its error, the other)``."""
    errors = []
    for loop, compiled in ((None, True), (False, False)):
        m, t_end = make(loop, compiled)
        with pytest.raises(Exception) as info:
            m.run(t_end)
        errors.append((m, info.value))
    (m, got), (_, ref) = errors
    assert type(got) is type(ref) and str(got) == str(ref), (got, ref)
    return m, got, ref


@pytest.mark.parametrize("coupling", ["jacobi", "gauss_seidel"])
def test_a_c_failure_hands_the_step_to_the_python_loop(coupling):
    """A held subsystem's C fails at 2 s: the loop undoes the macro step's C states and the
    Python loop runs it, raising its own error; the rows up to it are the Python loop's."""
    def run(loop, compiled):
        sub = DiagramSubsystem(sqrt_diagram(), solver="rk4", dt=1e-3, compiled=compiled)
        other = DiagramSubsystem(sub_diagram(np.random.default_rng(1), "c", False, 1e-3),
                                 solver="rk4", dt=1e-3, compiled=compiled)
        cpl = Jacobi() if coupling == "jacobi" else GaussSeidel(["c", "w"])
        m = MasterScheduler([other, sub], [("w.y", "c.u"), ("c.x", "w.v"), ("c.x", "c.v")],
                            1e-3, coupling=cpl, compiled=loop)
        return m, 3.0
    m, got, ref = _same_failure(run)
    # the first step in Python (nothing held yet), then C up to the failing step
    assert _in_c(m) == len(got.results.time) - 2, (m.loop_ran, len(got.results.time))
    a, b = got.results, ref.results
    assert np.array_equal(a.time, b.time)
    for path in b.signals:
        assert np.array_equal(np.asarray(a[path]), np.asarray(b[path])), path


def test_a_c_failure_when_settling_is_the_python_loops():
    """The settled feedthrough output ``sqrt(u)`` of a held subsystem fails only at the
    communication point (held inputs: inside the step it reads the value of the step's
    start): the C hands the settling over, the Python loop raises its own error."""
    def run(loop, compiled):
        b = DiagramBuilder("w")
        fb = b.add(FunctionBlock("r", lambda u: math.sqrt(u), ["u"], ["y"]))
        i = b.add(bl.Integrator("x", 0.0))
        b.connect(fb.output("y"), i.u)
        b.export_input(fb.input("u"), "u")
        b.export_output(fb.output("y"), "y")
        b.export_output(i.y, "x")
        sub = DiagramSubsystem(b.build(), solver="rk4", dt=1e-3, compiled=compiled)
        b2 = DiagramBuilder("c")
        src = b2.add(bl.Constant("k", -1.0))
        j = b2.add(bl.Integrator("z", 1.0))
        b2.connect(src.y, j.u)
        g = b2.add(bl.Gain("g", 1.0))
        b2.export_input(g.u, "u")
        t = b2.add(bl.Terminator("t"))
        b2.connect(g.y, t.u)
        b2.export_output(j.y, "z")
        other = DiagramSubsystem(b2.build(), solver="rk4", dt=1e-3, compiled=compiled)
        m = MasterScheduler([sub, other], [("c.z", "w.u"), ("w.x", "c.u")], 1e-3,
                            extrapolation=0, compiled=loop)
        return m, 2.0
    m, got, ref = _same_failure(run)
    assert m.settler.subs and _in_c(m) > 900, m.loop_ran
    assert np.array_equal(got.results.time, ref.results.time)


class _Event(Block):
    """Every ``period``: counts, and at ``at`` raises ``error`` (an exception instance) in its
    update, or (``error`` None) ends the run by a time event (``SimulationTerminated``)."""

    def __init__(self, name, period, at, error=None):
        super().__init__(name)
        self.at, self.error = at, error
        self.n = self.declare_discrete_state("n", 0.0)
        self.u = self.declare_input("u")
        self.declare_output("y", lambda ctx: ctx.discrete(self.n) + 0.0 * ctx.input(self.u),
                            depends_on=())
        self.declare_periodic_update(period, self._update)
        if error is None:
            self.declare_time_event(at, self._end)

    def _update(self, ctx):
        ctx.set_discrete(self.n, ctx.discrete(self.n) + 1.0)
        if self.error is not None and ctx.time >= self.at - 1e-12:
            raise self.error

    def _end(self, ctx):
        from cosim.errors import SimulationTerminated
        raise SimulationTerminated(f"count reached at t = {ctx.time:.3f}")


def _event_master(loop, error):
    b = DiagramBuilder("e")
    ev = b.add(_Event("ev", 1e-3, 0.5, error))
    b.export_input(ev.u, "u")
    b.export_output(ev.output("y"), "y")
    py = DiagramSubsystem(b.build(), solver="rk4", dt=1e-3, compiled=False)
    other = DiagramSubsystem(sub_diagram(np.random.default_rng(3), "c", False, 1e-3),
                             solver="rk4", dt=1e-3, compiled=True)
    return MasterScheduler([py, other], [("c.x", "e.u"), ("e.y", "c.u"), ("c.x", "c.v")],
                           1e-3, extrapolation=1, compiled=loop)


@pytest.mark.parametrize("error", [None, ValueError("the block's own error"),
                                   KeyboardInterrupt()])
def test_a_python_subsystem_ending_or_raising_is_the_python_loops(error):
    """A subsystem called back in Python ends the run, raises, or is interrupted (Ctrl-C) at
    0.5 s: the run stops there as the Python loop's does (same rows, same end)."""
    from cosim.errors import StepError
    raised = StepError if isinstance(error, Exception) else type(error)  # (the block's, named)

    def run(loop):
        m = _event_master(loop, error)
        if error is None:
            return m, m.run(1.0), ""
        with pytest.raises(raised) as info:
            m.run(1.0)
        return m, info.value.results, str(info.value)
    m, got, text = run(None)
    m0, ref, text0 = run(False)
    assert text == text0
    assert _in_c(m) > 400, m.loop_ran
    assert np.array_equal(got.time, ref.time) and len(got.time) > 400
    for path in ref.signals:
        assert np.array_equal(np.asarray(got[path]), np.asarray(ref[path])), path
    if error is None:
        assert got.diagnostics["terminated"]["by"] == "e"
        assert m.terminated["t"] == m0.terminated["t"]


def test_what_the_native_loop_does_not_run_says_why():
    m, _ = _master(0, None, False, False)
    assert m.compiled_reason == ""
    rng = np.random.default_rng(0)
    a = DiagramSubsystem(sub_diagram(rng, "a", False, 1e-3), solver="rk4", dt=1e-3)
    c = DiagramSubsystem(sub_diagram(rng, "c", False, 1e-3), solver="rk4", dt=1e-3)
    conns = [("a.x", "c.u"), ("c.x", "a.u"), ("a.x", "c.v"), ("c.x", "a.v")]
    m2 = MasterScheduler([a, c], conns, 1e-3, extrapolation=3)  # (orders 0-3 run in C)
    assert m2.compiled_reason == ""
    m2 = MasterScheduler([a, c], conns, 1e-3, step_control=StepController(h_max_s=2e-3))
    assert "communication-step control" in m2.compiled_reason, m2.compiled_reason
    with pytest.raises(Exception, match="compiled=True.*communication-step control"):
        MasterScheduler([a, c], conns, 1e-3, step_control=StepController(h_max_s=2e-3),
                        compiled=True)
    m3 = MasterScheduler([a, c], conns, 1e-3, compiled=False)
    assert m3.compiled_reason == "not asked for (compiled=False)"


@pytest.mark.parametrize("cc, said", [("/bin/false", "exit status 1"),
                                      ("no-such-compiler-cc", "not found")])
def test_without_a_compiler_the_python_loop_runs_and_says_why(private_cache, monkeypatch,
                                                              cc, said):
    """No cached library and a compiler that is missing or fails: compiled=None runs the
    Python loop with the compiler's reason; compiled=True raises it."""
    import cosim.codegen.cache as cache
    monkeypatch.setattr(cache, "_loaded", {})
    monkeypatch.setenv("CC", cc)
    rng = np.random.default_rng(0)
    a = DiagramSubsystem(sub_diagram(rng, "a", False, 1e-3), solver="rk4", dt=1e-3,
                         compiled=False)
    c = DiagramSubsystem(sub_diagram(rng, "c", False, 1e-3), solver="rk4", dt=1e-3,
                         compiled=False)
    conns = [("a.x", "c.u"), ("c.x", "a.u"), ("a.x", "c.v"), ("c.x", "a.v")]
    m = MasterScheduler([a, c], conns, 1e-3)
    assert m._loop is None and "native loop could not be built" in m.compiled_reason
    assert said in m.compiled_reason, m.compiled_reason
    res = m.run(0.01)
    assert said in res.diagnostics["compiled"]
    with pytest.raises(Exception, match="compiled=True.*native loop could not be built"):
        MasterScheduler([a, c], conns, 1e-3, compiled=True)
