"""The Simulator's held parts: its ``dt`` decided once (``StepGrid``) and its run's events
(``RunEvents``) reaching the Simulator only through the names their docstring lists."""

import pathlib

import pytest

from cosim import Simulator
from cosim.errors import RateError
from cosim.step_grid import StepGrid
from tests.unit.test_advancer import _diagram, _host_names

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("dt, solver, role, ticks", [
    (1e-3, "rk4", "step", 1_000_000),
    (1e-3, "rk45", "output", 1_000_000),
    (None, "rk45", "none", None),
    ("advance", "euler", "advance", None),
])
def test_dt_means_one_thing_per_solver(dt, solver, role, ticks):
    sim = Simulator(_diagram(), solver=solver, dt=dt)
    assert (sim.grid.role, sim.grid.ticks, sim.dt_ticks) == (role, ticks, ticks)
    assert sim.solver_settings()["dt"] == dt


@pytest.mark.parametrize("dt, solver, fixed, n, match", [
    ("advance", "rk45", False, 1, "needs a fixed-step solver"),
    (None, "rk4", True, 1, "give dt"),
    (-1e-3, "rk4", True, 1, "dt"),
])
def test_a_dt_that_cannot_take_effect_is_an_error(dt, solver, fixed, n, match):
    with pytest.raises((RateError, ValueError), match=match):
        StepGrid.of(dt, solver, fixed, n)


def test_a_fixed_step_diagram_without_states_needs_no_dt():
    assert StepGrid.of(None, "rk4", True, 0).role == "none"


def test_run_events_use_only_their_listed_host_names():
    used = _host_names(ROOT / "cosim" / "run_events.py")
    assert used == {"ctx", "stats", "program", "observers", "reset_solver_history",
                    "zeno_events", "zeno_span_s"}
