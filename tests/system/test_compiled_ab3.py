"""AB3 in the compiled Simulator (``cosim.compiled_run``): the C equals the Python loop
(``cosim.solvers.AB3``: RK4 starter, restarts at breakpoints, at step-size changes and per
``multistep_restart`` at sample hits), also when C and Python advances alternate (the
history is handed over both ways), at off-grid stops (partial steps restart the history)
and after a parameter change; ``multistep_restarts``, ``steps`` and ``rhs_evals`` agree.

Without the C AB3 the runs fall back to the Python loop: every test asserts
``diagnostics["compiled"] is True`` on the C side (and ``compiled=True`` would raise)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import blocks as bl
from cosim import Block, DiagramBuilder, Simulator
from cosim.codegen.model import CModel
from tests.corpus.core_diagrams import core_diagram
from tests.system.test_compiled_run import _compare

MODES = ("modes", "hits", "events")
_SAME = ("multistep_restarts", "steps", "partial_steps", "rhs_evals")


def _kw(seed: int) -> dict:
    """dt and decimation drawn from the seed: every pair over the corpus."""
    return dict(solver="ab3", dt=[1e-3, 5e-4][seed % 2], record_every=[1, 3][seed // 2 % 2])


def _same_counts(py, c) -> None:
    assert c.diagnostics["compiled"] is True
    for k in _SAME:
        assert c.diagnostics[k] == py.diagnostics[k], k


@pytest.mark.parametrize("seed", range(48))
def test_generated_core_diagrams_ab3_compiled_equal_the_python_loop(seed):
    """Each corpus diagram, with each restart rule: the same results (1e-12 of each
    signal's range), restarts, steps and right-hand-side evaluations."""
    for mode in MODES:
        kw = dict(_kw(seed), multistep_restart=mode)
        py = Simulator(core_diagram(seed), compiled=False, **kw).run(0.5)
        c = Simulator(core_diagram(seed), compiled=True, **kw).run(0.5)
        _compare(py, c)
        _same_counts(py, c)


def _advances(seed: int, compiled: bool, ends, switch: bool, **kw):
    """The advances to ``ends``; ``switch``: the middle ones in the Python loop."""
    sim = Simulator(core_diagram(seed), compiled=compiled, **kw)
    for i, end in enumerate(ends):
        if switch and compiled:
            sim.route.compiled = compiled if i in (0, len(ends) - 1) else False
        sim.advance_to(end)
    return sim.finish()


@pytest.mark.parametrize("seed", range(0, 48, 4))
def test_interleaved_c_and_python_ab3_advances_equal_the_python_loop(seed):
    """C, the Python loop, C: each goes on from the other's AB3 history (no restart at the
    hand-over), as the same advances all in Python."""
    kw = dict(_kw(seed), multistep_restart=MODES[seed // 4 % 3])
    ends = (0.123, 0.3, 0.5)  # 0.123: on the grid (a hand-over mid-history)
    py = _advances(seed, False, ends, True, **kw)
    c = _advances(seed, True, ends, True, **kw)
    assert c.diagnostics["compiled"] == "partly: compiled=False"
    _compare(py, c)
    for k in _SAME:
        assert c.diagnostics[k] == py.diagnostics[k], k


def test_the_hand_over_keeps_the_history():
    """After a C advance the Python solver holds C's history (two right-hand sides and
    the step), and the next Python step is an AB3 step, not a restart."""
    sim = Simulator(core_diagram(4), solver="ab3", dt=1e-3, compiled=True)
    sim.advance_to(0.1)
    hist, h = sim.program.solver.history()
    assert len(hist) == 2 and h == pytest.approx(1e-3)
    ref = Simulator(core_diagram(4), solver="ab3", dt=1e-3, compiled=False)
    ref.advance_to(0.1)
    ref_hist, ref_h = ref.program.solver.history()
    assert ref_h == h
    for a, b in zip(ref_hist, hist):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("seed", [1, 7, 13, 19, 25, 30, 37, 43])  # with continuous states
def test_off_grid_advances_restart_the_history_as_in_python(seed):
    """Advances that end between grid points: the partial steps (a step size other than
    the history's) restart AB3, in C as in the Python loop."""
    kw = dict(_kw(seed), multistep_restart=MODES[seed % 3])
    ends = (0.0105, 0.0107, 0.1234567, 0.2, 0.33333, 0.5)
    py = _advances(seed, False, ends, False, **kw)
    c = _advances(seed, True, ends, False, **kw)
    _compare(py, c)
    _same_counts(py, c)
    assert c.diagnostics["partial_steps"] > 0


class _Gear(Block):
    """A sampled mode: the gear 0-3 of its input's level, an integer held output."""

    def __init__(self, name: str, period_s: float) -> None:
        super().__init__(name)
        self.u = self.declare_input("u")
        self.y = self.declare_output("y", self._y, dtype=np.int64, depends_on=("u",))
        self.declare_periodic_update(period_s, None)

    def _y(self, ctx) -> int:
        u = ctx.input(self.u)
        return int(u > -0.5) + int(u > 0.0) + int(u > 0.5)

    def c_model(self, cg) -> CModel:
        """C of :meth:`_y`."""
        u = cg.u(self.u)
        return CModel(outputs={"y": f"{cg.y(self.y)} = (double)(({u} > -0.5) + ({u} > 0.0)"
                                    f" + ({u} > 0.5));"})


def _lag_loop():
    """A first-order plant fed by a sampled gear (a mode) and a held float, through a
    parameter: restarts in "modes" and "hits", and a parameter to change mid-run."""
    b = DiagramBuilder("modes")
    src = b.add(bl.Sine("src", 1.0, 7.0))
    gear = b.add(_Gear("gear", 0.005))
    hold = b.add(bl.ZeroOrderHold("hold", 0.004))
    g = b.add(bl.Gain("g", 2.0))
    s = b.add(bl.Sum("s", "++"))
    lag = b.add(bl.FirstOrderLag("lag", 0.05))
    b.connect(src.y, gear.u)
    b.connect(src.y, hold.u)
    b.connect(gear.y, g.u)
    b.connect(g.y, "s.u0")
    b.connect(hold.y, "s.u1")
    b.connect(s.y, lag.u)
    return b.build()


@pytest.mark.parametrize("mode", MODES)
def test_a_parameter_change_mid_run_with_ab3(mode):
    """The Python loop steps once with the old solver's history and rebuilds at the first
    stop; the C forgets its history there too."""
    out = []
    for compiled in (False, True):
        sim = Simulator(_lag_loop(), solver="ab3", dt=1e-3, compiled=compiled,
                        fuse_linear=False, multistep_restart=mode)
        sim.advance_to(0.2)
        sim.ctx.set_param("g.k", 3.0)
        sim.advance_to(0.4)
        out.append(sim.finish())
    _compare(*out)
    py, c = out
    assert c.diagnostics["compiled"] is True
    # (not rhs_evals: both count only since the rebuild, the Python loop from its first stop)
    for k in ("multistep_restarts", "steps", "partial_steps"):
        assert c.diagnostics[k] == py.diagnostics[k], k
    assert out[1].diagnostics["rebuilds"] == out[0].diagnostics["rebuilds"] == 1


def test_the_restart_rules_fire():
    """The corpus's and this diagram's held outputs do restart AB3 (the rules are tested,
    not idle): "hits" more than "modes", "events" never."""
    got = {}
    for mode in MODES:
        py = Simulator(_lag_loop(), solver="ab3", dt=1e-3, compiled=False,
                       multistep_restart=mode).run(0.5)
        c = Simulator(_lag_loop(), solver="ab3", dt=1e-3, compiled=True,
                      multistep_restart=mode).run(0.5)
        _compare(py, c)
        _same_counts(py, c)
        got[mode] = c.diagnostics["multistep_restarts"]
    assert got["hits"] > got["modes"] > 0 == got["events"], got


@pytest.mark.parametrize("name", ["acc_cut_in", "acc_cut_out", "acc_stop_and_go"])
def test_acc_examples_run_ab3_in_c_equal_the_python_loop(name):
    """The ACC examples as they run (``examples.acc_plant.run``: AB3 at 8 ms) over their
    scenario time."""
    from examples.acc_plant import run
    mod = importlib.import_module(f"examples.{name}")
    py, _ = run(mod.build(), mod.T_END, compiled=False)
    c, _ = run(mod.build(), mod.T_END, compiled=True)
    _compare(py, c)
    _same_counts(py, c)
