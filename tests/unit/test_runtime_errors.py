"""Failures while running: NaN/inf states, solver failure, block exceptions, parameters."""

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.lti import FirstOrderLag
from blocks.sources import Constant
from cosim import Block, DiagramBuilder, FunctionBlock, Simulator
from cosim.errors import NonFiniteError, ParameterError, SolverError, StepError


class Blowup(Block):
    """x' = x^2, x(0) = 1: finite-time blow-up at t = 1 s.

    Ports
    -----
    out  x   state only
    """

    def __init__(self, name):
        super().__init__(name)
        self.s = self.declare_continuous_state("x", 1.0)
        self.x = self.declare_output("x", lambda ctx: ctx.state(self.s), depends_on=())

    def derivatives(self, ctx):
        return np.square(ctx.state(self.s))  # numpy: overflow gives inf, not an exception


def _blowup():
    b = DiagramBuilder("blow")
    b.add(Blowup("b"))
    return b.build()


def test_nan_state_names_block_state_and_time_and_keeps_results():
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(NonFiniteError) as ei:
            Simulator(_blowup(), solver="euler", dt=0.01, record=["b.x"]).run(2.0)
    msg = str(ei.value)
    assert "continuous state 'b.x' became" in msg and "at t = " in msg
    assert "results up to the previous step were kept" in msg
    res = ei.value.results
    assert len(res.time) > 50 and np.all(np.isfinite(res["b.x"]))
    assert res.time[-1] > 0.9


@pytest.mark.parametrize("solver", ["rk45", "radau"])
def test_variable_step_solver_failure_is_a_solver_error(solver):
    with pytest.raises(SolverError) as ei:
        Simulator(_blowup(), solver=solver, record=["b.x"]).run(2.0)
    msg = str(ei.value)
    assert f"solver {solver} failed at t = " in msg
    assert "step size" in msg and "blowing up" in msg
    assert ("try 'radau'" in msg) == (solver == "rk45")
    assert ei.value.results.time[-1] > 0.99  # results up to the failure are kept


def test_exception_in_a_block_names_the_block_and_time():
    b = DiagramBuilder("boom")
    c = b.add(Constant("c", 1.0))

    def f(u):
        raise ValueError("bad value")
    fb = b.add(FunctionBlock("explode", f))
    b.connect(c.y, fb.in_ports[0])
    with pytest.raises(StepError, match=r"block 'explode' \(fn f\) failed at t = 0 s: "
                                        r"ValueError: bad value"):
        Simulator(b.build()).run(1.0)


def test_invalid_parameters_are_reported_with_the_block():
    with pytest.raises(ParameterError, match="FirstOrderLag 'lag': tau_s = 0.0: expected .* > 0"):
        FirstOrderLag("lag", tau_s=0.0)
    b = DiagramBuilder("p")
    c = b.add(Constant("c", 1.0))
    i = b.add(Integrator("i"))
    b.connect(c.y, i.u)
    blk = Block("v")
    with pytest.raises(ParameterError, match="parameter 'v.k' = -1"):
        blk.declare_parameter("k", -1.0, validate=lambda v: _positive(v))


def _positive(v):
    if v <= 0:
        raise ValueError("must be > 0")
