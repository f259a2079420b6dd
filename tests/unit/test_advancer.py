"""The Simulator holds its stepping strategy (``cosim.advancer``): the advancers use only
the host interface the contract lists, and each advancer keeps its own stepping state."""

import pathlib
from functools import partial

import numpy as np
import pytest

from blocks.continuous import Integrator
from blocks.sources import Sine
from cosim import DiagramBuilder, Simulator
from cosim.advancer import SteppingHost
from cosim.fixed_step import FixedStepAdvancer
from cosim.variable_step import VariableStepAdvancer
from tests.unit.test_held_objects import contract, host_names

ROOT = pathlib.Path(__file__).resolve().parents[2]


_host_names = host_names
_contract = partial(contract, SteppingHost)


@pytest.mark.parametrize("module", ["fixed_step.py", "variable_step.py"])
def test_advancers_use_only_the_host_interface(module):
    used = _host_names(ROOT / "cosim" / module)
    assert used, "the scan found no host access"
    allowed = _contract()
    assert used <= allowed, f"{module} reaches past the SteppingHost contract: " \
                            f"{sorted(used - allowed)}"
    assert len(allowed) <= 12


def test_the_simulator_implements_the_host_interface():
    sim = Simulator(_diagram(), dt=0.01)
    sim.initialize()
    for name in _contract():
        assert hasattr(sim, name), name


def _diagram():
    b = DiagramBuilder("d")
    src = b.add(Sine("s", 1.0, 3.0))
    i = b.add(Integrator("i", 0.0))
    b.connect(src.y, i.u)
    return b.build()


@pytest.mark.parametrize(("solver", "kind"), [("rk4", FixedStepAdvancer),
                                              ("rk45", VariableStepAdvancer)])
def test_the_simulator_holds_one_advancer_and_its_state(solver, kind):
    sim = Simulator(_diagram(), solver=solver, dt=0.01, record=["i.y"])
    res = sim.run(1.0)
    assert isinstance(sim.advancer, kind) and sim.advancer.host is sim
    assert not hasattr(sim, "_next_out")  # the output grid is the advancer's
    if kind is VariableStepAdvancer:
        assert sim.advancer.next_out == 101 * sim.dt_ticks
    w = 2 * np.pi * 3.0  # 3 Hz
    exact = (1 - np.cos(w * res.time)) / w
    assert np.max(np.abs(res["i.y"] - exact)) < 1e-5


def test_a_diagram_without_states_uses_the_fixed_step_advancer_whatever_the_solver():
    b = DiagramBuilder("d")
    b.add(Sine("s", 1.0, 3.0))
    sim = Simulator(b.build(), solver="bdf", dt=0.1)
    sim.run(0.5)
    assert isinstance(sim.advancer, FixedStepAdvancer)


def test_an_observer_added_between_advances_sees_every_step_of_the_next():
    """The step ends between major points are observed by the observers of this advance
    (the fast runs of whole steps read the list afresh)."""
    from cosim import Observer

    class Times(Observer):
        def __init__(self):
            self.t = []

        def on_sample(self, sim):
            self.t.append(sim.ctx.ticks)

    early = Times()
    sim = Simulator(_diagram(), dt=0.01, record=False, observers=[early])
    sim.advance_to(0.5)
    late = Times()
    sim.observers.append(late)
    sim.advance_to(1.0)
    assert late.t == [round((0.5 + 0.01 * k) * 1e9) for k in range(1, 51)]
    assert early.t[-50:] == late.t
