"""A variable-step run's right-hand side in C (:mod:`cosim.compiled_rhs`) against the Python
loop's, its oracle.

The class: any diagram of core blocks under any variable-step solver.  First the right-hand
side itself, pointwise: the generated core corpus (:mod:`tests.corpus.core_diagrams`) at
random states and times, C against the Python right-hand side: bit for bit for the states of
blocks whose derivatives are scalar statements, to 1e-13 of the largest derivative where NumPy
sums (fused linear groups, a transfer function's or state-space block's ``A x`` on the array
path).  Then whole runs with every SciPy method on smooth all-linear diagrams (the
propagator corpus): the same right-hand-side evaluations (the same steps) and every value
within 1e-12 of the signal's range.  On diagrams with switching blocks (relays, rate
limiters) a 1-ulp difference of such a sum can move a switch by a step and grow (measured up
to 4e-6 relative on the corpus): both runs are then as right as each other, and the tests
compare the right-hand side, not those runs.  Then what the diagnostics say, what keeps the
Python right-hand side, and a failing C call.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.compiled_rhs import CompiledRhs
from cosim.errors import BuildError
from tests.corpus.core_diagrams import core_diagram
from tests.system.test_compiled_propagator import linear_diagram
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

METHODS = ["rk45", "rk23", "dop853", "radau", "bdf", "lsoda"]


def _summed_states(sim) -> set[int]:
    """The state indices whose derivatives NumPy sums (fused groups, multi-state blocks)."""
    plan = sim.plan
    out = {int(i) for g in sim.program.ev.groups for i in g.state_index}
    for h in plan.continuous_states:
        a, b, _ = plan.cstate_index[h]
        if b - a > 1 or isinstance(h.block, (bl.TransferFunction, bl.StateSpace)):
            out.update(range(a, b))
    return out


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("seed", range(16))
def test_the_c_right_hand_side_is_the_python_one(seed, fuse):
    sim = Simulator(core_diagram(seed), solver="rk45", dt=1e-3, fuse_linear=fuse,
                    compiled=True)
    sim.initialize()
    if not sim.plan.n_continuous:
        pytest.skip("no continuous states")
    c_rhs = CompiledRhs(sim.route.run).bind()
    py_rhs = sim.program.rhs
    x0 = np.asarray(sim.ctx.xc, dtype=float).copy()
    summed = _summed_states(sim)
    rng = np.random.default_rng(seed)
    for _ in range(40):
        t = float(rng.uniform(0.0, 0.5))
        x = x0 + rng.normal(0.0, 1.0, x0.size) * (1.0 + np.abs(x0))
        a, b = py_rhs(t, x.copy()), c_rhs(t, x.copy())
        scale = max(float(np.max(np.abs(a))), 1e-300)
        for i in range(x.size):
            if i in summed:
                assert abs(a[i] - b[i]) <= 1e-13 * scale, (i, a[i], b[i])
            else:
                assert a[i] == b[i] or (math.isnan(a[i]) and math.isnan(b[i])), (i, a[i], b[i])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", [0, 1, 3, 4])
def test_variable_step_runs_take_the_python_loops_steps(seed, method):
    def run(compiled):
        d, rec = linear_diagram(seed)
        return Simulator(d, solver=method, dt=2e-3, record=rec, compiled=compiled).run(0.3)

    py, c = run(False), run(True)
    assert py.diagnostics["compiled"] == "compiled=False"
    assert c.diagnostics["compiled"].startswith("the right-hand side in C, variable-step")
    assert c.diagnostics["rhs_evals"] == py.diagnostics["rhs_evals"]
    assert c.diagnostics["steps"] == py.diagnostics["steps"]
    _compare(py, c)


def test_compiled_none_keeps_the_python_right_hand_side_and_says_why():
    d, rec = linear_diagram(3)
    res = Simulator(d, solver="rk45", dt=1e-3, record=rec).run(0.5)
    assert res.diagnostics["compiled"].startswith("variable-step solver 'rk45' (compiled=True "
                                                   "runs its right-hand side in C")


def _with_monitor():
    b = DiagramBuilder("mon")
    b.add(bl.Sine("s", 1.0, 1.0))
    z = b.add(bl.Integrator("z"))
    b.connect("s.y", "z.u")
    seen = []
    z.declare_monitor(lambda ctx: seen.append(ctx.time), "seen")
    return b.build()


def test_monitors_keep_the_python_right_hand_side():
    with pytest.raises(BuildError, match="with monitors"):
        Simulator(_with_monitor(), solver="rk45", dt=1e-3, compiled=True).run(0.05)


def test_a_failing_c_call_raises_the_python_loops_own_error():
    def make():
        b = DiagramBuilder("dom")
        b.add(bl.Ramp("r", -1.0, 0.1, 1.0))  # 1 - (t - 0.1): below zero after t = 1.1 s
        f = b.add(FunctionBlock("f", lambda u: math.sqrt(u)))
        b.add(bl.Integrator("z"))
        b.connect("r.y", f.in_ports[0])
        b.connect(f.out_ports[0], "z.u")
        return b.build()

    errors = []
    for compiled in (False, True):
        with pytest.raises(Exception) as got:
            Simulator(make(), solver="rk45", dt=1e-2, compiled=compiled).run(2.0)
        errors.append((type(got.value), str(got.value)))
    assert errors[0] == errors[1]
    assert "math domain error" in errors[0][1]
