"""The simulator's multistep restarts at sample hits and its reuse of a major point's
evaluation (cosim/simulator.py: ``multistep_restart``, ``_hit_plan``, ``_rhs``).

AB3 extrapolates from the derivatives of earlier steps; where a held input of the
continuous part jumps at a sample hit, those are from before the jump.  The simulator
restarts the history there (``"modes"``: integer/Boolean held outputs; ``"hits"``: any
held output the derivatives read); these tests show the exactness it buys against the
exact solution and against RK45, and that the engine's reuse of the evaluation at a
major point for the first solver stage changes no result.
"""

import math

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.discrete import ZeroOrderHold
from blocks.sources import Sine
from cosim import Block, DiagramBuilder, Simulator
from cosim.errors import ParameterError


class Mode(Block):
    """A sampled switch: ``y`` = 1 until the hit after ``t_switch``, then ``high``
    (``dtype`` int: a mode; float: an ordinary zero-order-hold signal)."""

    def __init__(self, name, period_s=0.05, t_switch=0.2, high=3, dtype=int):
        super().__init__(name)
        self.m = self.declare_discrete_state("m", dtype(1))
        self.y = self.declare_output("y", lambda ctx: ctx.discrete(self.m), dtype=dtype,
                                     unit="1", depends_on=())
        self.declare_periodic_update(
            period_s, lambda ctx: ctx.set_discrete(self.m, dtype(high if ctx.time >= t_switch
                                                                 else 1)))


class Cubic(Block):
    """A nonlinear plant, x' = -x^3 + u (state-only output)."""

    def __init__(self, name, x0=1.0):
        super().__init__(name)
        self.u = self.declare_input("u", unit="1")
        self.s = self.declare_continuous_state("x", x0)
        self.x = self.declare_output("x", lambda ctx: ctx.state(self.s), unit="1",
                                     depends_on=())

    def derivatives(self, ctx):
        x = ctx.state(self.s)
        return -x * x * x + ctx.input(self.u)


class Quiet(Block):
    """A no-op monitor (a monitor may set discrete states: the simulator then evaluates
    again instead of reusing the major point's evaluation)."""

    def __init__(self, name):
        super().__init__(name)
        self.declare_monitor(lambda ctx: None)


def mode_integrator(dtype=int):
    b = DiagramBuilder("modes")
    m = b.add(Mode("mode", dtype=dtype))
    itg = b.add(Integrator("itg"))
    b.connect(m.y, itg.u)
    return b.build()


@pytest.mark.parametrize("policy, restarts", [("modes", 1), ("hits", 1), ("events", 0)])
def test_ab3_is_exact_across_a_mode_change_only_with_the_restart(policy, restarts):
    # the mode shows 3 from the hit at 0.25 s (decided at 0.2 s, held one period):
    # x(0.5) = 0.25 * 1 + 0.25 * 3 exactly, a polynomial that AB3 and RK4 integrate
    # exactly on each side of the jump
    res = Simulator(mode_integrator(), solver="ab3", dt=0.01, record=["itg.y"],
                    multistep_restart=policy).run(0.5)
    assert res.diagnostics["multistep_restarts"] == restarts
    err = abs(res["itg.y"][-1] - 1.0)
    if restarts:
        assert err < 1e-12, err
    else:  # stale history: 23/12 f_n - 16/12 f_(n-1) + 5/12 f_(n-2) across the jump
        assert err == pytest.approx(0.01 * 2.0 * (11 - 5) / 12, rel=1e-9)


def test_modes_ignores_float_holds_and_hits_restarts_at_them():
    for policy, restarts in (("modes", 0), ("hits", 1)):
        res = Simulator(mode_integrator(float), solver="ab3", dt=0.01, record=["itg.y"],
                        multistep_restart=policy).run(0.5)
        assert res.diagnostics["multistep_restarts"] == restarts, policy
    with pytest.raises(ParameterError, match="multistep_restart must be"):
        Simulator(mode_integrator(), solver="ab3", dt=0.01, multistep_restart="always")


def test_one_step_solvers_need_no_restart():
    res = Simulator(mode_integrator(), solver="rk4", dt=0.01, record=["itg.y"]).run(0.5)
    assert res.diagnostics["multistep_restarts"] == 0
    assert res["itg.y"][-1] == pytest.approx(1.0, abs=1e-12)


def zoh_plant(monitor=False):
    b = DiagramBuilder("zoh")
    src = b.add(Sine("src", amplitude=1.0, frequency_hz=2.0))
    zoh = b.add(ZeroOrderHold("zoh", 0.03))
    plant = b.add(Cubic("plant"))
    b.connect(src.y, zoh.u)
    b.connect(zoh.y, plant.u)
    if monitor:
        b.add(Quiet("quiet"))
    return b.build()


@pytest.mark.parametrize("solver", ["ab3", "rk4"])
def test_reusing_the_major_points_evaluation_changes_no_result(solver):
    """The first stage after a sample hit reuses the hit's evaluation (same t and x);
    a monitor turns the reuse off.  Every recorded value is the same, bit for bit."""
    runs = [Simulator(zoh_plant(mon), solver=solver, dt=0.01, record=["plant.x", "zoh.y"],
                      multistep_restart="events").run(1.0) for mon in (False, True)]
    fast, slow = runs
    # one per hit at 0.03, ..., 0.99 (the start's evaluation is made before run() may
    # change inputs, so the first step evaluates again)
    assert fast.diagnostics["reused_evaluations"] == 33
    assert slow.diagnostics["reused_evaluations"] == 0
    assert np.array_equal(fast["plant.x"], slow["plant.x"])
    assert np.array_equal(fast["zoh.y"], slow["zoh.y"])


def test_ab3_with_restarts_at_every_hold_meets_rk45():
    """``"hits"``: AB3 restarted at every jump of the held input equals RK45 (rtol 1e-12)
    to its own truncation error; without the restarts the error is many times larger."""
    t_end = 1.5
    ref = Simulator(zoh_plant(), solver="rk45", dt=0.01, rtol=1e-12, atol=1e-12,
                    record=["plant.x"]).run(t_end)
    err = {}
    for policy in ("hits", "events"):
        res = Simulator(zoh_plant(), solver="ab3", dt=0.01, record=["plant.x"],
                        multistep_restart=policy).run(t_end)
        err[policy] = np.max(np.abs(res["plant.x"] - ref["plant.x"]))
    print(f"\nAB3 10 ms vs RK45 on a 30 ms zero-order hold: {err}")
    assert err["hits"] < 5e-6  # measured 2.7e-6
    assert err["events"] > 1000 * err["hits"]  # measured 6.3e-3
    assert math.isfinite(err["events"])
