"""The exact linear propagator evaluates its inputs at every Runge-Kutta stage, through
whatever lies upstream of them: nonlinear blocks, unit conversions and *state-free fused
linear groups* (a gain between a time-varying source and a saturation).

Found by the compiled master loop's native twin (issue 34): the propagator's stage inputs
skipped the fused groups upstream, so ``Sine -> Gain -> Saturation -> Integrator`` under RK4
integrated the stage values of the step's start (Euler's accuracy), and a co-simulation
subsystem with nothing observing its micro steps held them over the whole macro step.

Oracle: the same diagram with ``fuse_linear=False`` (no fused groups, no propagator: the
solver's own stages through the blocks' derivatives).  Corpus: 1-3 gains (and a unit
conversion) between a source (sine, ramp) and a nonlinear block (saturation, abs, product
with the source), feeding integrators and lags; every fixed-step solver; with and without an
observer of the micro steps.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from blocks import FirstOrderLag, Gain, Integrator
from blocks.math import Abs, Product, Saturation
from blocks.sources import Ramp, Sine
from cosim import DiagramBuilder, Simulator


def _diagram(n_gains: int, nonlinear: str, source: str, convert: bool):
    b = DiagramBuilder(f"chain_{n_gains}_{nonlinear}_{source}_{int(convert)}")
    src = b.add(Sine("src", 1.3, 2.0, bias=0.1) if source == "sine" else
                Ramp("src", slope=1.5, start_s=0.05))
    prev = src.y
    for k in range(n_gains):
        g = b.add(Gain(f"g{k}", 0.7 + 0.4 * k))
        b.connect(prev, g.u)
        prev = g.y
    if convert:  # a connection from mm to m: the plan's unit conversion node
        g = b.add(Gain("to_mm", 1000.0, unit="mm"))
        b.connect(prev, g.u)
        prev = g.y
    if nonlinear == "sat":
        nl = b.add(Saturation("nl", -0.6, 0.8, unit="m" if convert else None))
        b.connect(prev, nl.u)
    elif nonlinear == "abs":
        nl = b.add(Abs("nl"))
        b.connect(prev, nl.u)
    else:
        nl = b.add(Product("nl", "**"))
        b.connect(prev, nl.ins[0])
        b.connect(src.y, nl.ins[1])
    i = b.add(Integrator("i", 0.2))
    lag = b.add(FirstOrderLag("lag", tau_s=0.05))
    b.connect(nl.y, i.u)
    b.connect(nl.y, lag.u)
    b.export_output(i.y, "x")
    b.export_output(lag.y, "lag")
    return b.build()


CORPUS = [c for c in itertools.product([1, 3], ["sat", "abs", "prod"], ["sine", "ramp"],
                                       [False, True]) if c[1] == "sat" or not c[3]]


@pytest.mark.parametrize("solver", ["rk4", "heun", "midpoint", "euler"])
@pytest.mark.parametrize("case", CORPUS, ids=lambda c: "-".join(map(str, c)))
def test_the_propagator_sees_time_move_through_fused_gains(case, solver):
    runs = {}
    for fuse in (True, False):
        d = _diagram(*case)
        sim = Simulator(d, solver=solver, dt=2e-3, fuse_linear=fuse, record="all",
                        record_every=25)
        runs[fuse] = sim.run(0.5)
        if fuse:  # the case under test: the exact propagator runs
            assert sim.program.propagator is not None
    fused, plain = runs[True], runs[False]
    for key in ("x", "lag"):
        name = next(k for k in plain.signals if k.endswith(f".{key}"))
        a, b = fused[name], plain[name]
        err = float(np.max(np.abs(a - b))) / max(1.0, float(np.max(np.abs(b))))
        assert err <= 1e-12, (name, err)


def test_a_subsystem_whose_micro_steps_nobody_watches_integrates_its_input_polynomial():
    """DiagramSubsystem: the fast path (one fused propagation per macro step) with the
    coupling input through a gain and a saturation: the integral of the input over the
    step, as the Runge-Kutta stages give it."""
    from cosim.subsystem import DiagramSubsystem
    b = DiagramBuilder("sub")
    g = b.add(Gain("g", 1.0))
    sat = b.add(Saturation("sat", -0.8, 0.9))
    i = b.add(Integrator("i", 0.0))
    b.connect(g.y, sat.u)
    b.connect(sat.y, i.u)
    b.export_input(g.u, "u")
    b.export_output(i.y, "x")
    sub = DiagramSubsystem(b.build(), solver="rk4", dt=1e-4, name="s")
    sub.initialize(0)
    sub.set_inputs(0.0, {"u": (0.1,)})
    sub.refresh_outputs()
    sub.finish_initialization()
    sub.do_step(0, 1_000_000)
    x0 = float(sub.get_outputs()["x"])
    sub.set_inputs(1e-3, {"u": (0.5, 2.0)})  # u = 0.5 + 2 (t - 1 ms)
    sub.do_step(1_000_000, 1_000_000)
    assert float(sub.get_outputs()["x"]) - x0 == pytest.approx(0.5e-3 + 1e-6, rel=1e-12)
