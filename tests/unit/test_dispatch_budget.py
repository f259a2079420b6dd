"""Interpreter dispatch per unit of work stays within budget (issue 30).

The cost of a Python simulator is its dispatch (DESIGN.md), so the hot paths are held to
a count of our own Python function calls (in ``cosim``, ``hil``, ``blocks`` and generated
code; other libraries' calls are not counted) per unit of work, measured with
``sys.setprofile``: deterministic, whatever the machine's load (not a timing test).  The
budgets sit between the counts before issue 30's work and after it (in parentheses):

* one RK4 step of a small co-simulation subsystem (two scalar states, coupling inputs,
  a time source): 62 (85 before, 50 after);
* one CAN message through ``CanTransmit`` and ``CanReceive`` on python-can ``virtual``
  (the send and the receiving hit's read): 25 (33 before, 18 after);
* one 1 ms step of a diagram of CAN bridges (no continuous states): 52 (65 before, 41
  after).
"""

from __future__ import annotations

import itertools
import os
import sys
from collections import Counter

import pytest

import blocks
import cosim
import hil
from blocks.hydraulics import ValveControlledCylinder
from blocks.sources import Sine
from cosim import DiagramBuilder, Simulator
from cosim.subsystem import DiagramSubsystem

OURS = tuple(os.path.dirname(m.__file__) for m in (cosim, hil, blocks))
_ids = itertools.count()


def own_calls(fn, n: int) -> tuple[float, Counter]:
    """Our Python calls per call of ``fn`` (mean of ``n``), and where they went."""
    where: Counter = Counter()

    def prof(frame, event, arg):
        if event == "call":
            f = frame.f_code.co_filename
            if f.startswith(OURS) or f.startswith("<cosim-generated"):
                where[f"{os.path.basename(f)}:{frame.f_code.co_name}"] += 1
    sys.setprofile(prof)
    try:
        for _ in range(n):
            fn()
    finally:
        sys.setprofile(None)
    return sum(where.values()) / n, where


def _actuator():
    b = DiagramBuilder("act")
    c = b.add(ValveControlledCylinder(
        "cyl", supply_pressure_pa=2e7, tank_pressure_pa=1e5, q_nominal_m3_s=1e-4,
        dp_nominal_pa=3.5e6, area_1_m2=2e-3, area_2_m2=1e-3, stroke_m=0.5,
        dead_volume_1_m3=1e-4, dead_volume_2_m3=1e-4, p1_0_pa=5e6, p2_0_pa=5e6))
    u = b.add(Sine("u", amplitude=0.2, frequency_hz=2.0))
    b.connect(u.y, c.u)
    b.export_input(c.x, "x")
    b.export_input(c.v, "v")
    b.export_output(c.force, "f")
    return b.build()


def test_rk4_step_of_a_small_subsystem():
    sub = DiagramSubsystem(_actuator(), solver="rk4", dt=1e-4)
    sub.initialize(0)
    t = [0]

    def macro():  # 10 RK4 steps, the inputs linear in time
        sub.set_inputs(t[0] * 1e-9, {"x": (0.25, 0.01), "v": (0.01, 0.0)})
        sub.do_step(t[0], 1_000_000)
        t[0] += 1_000_000
    macro()
    per, where = own_calls(macro, 10)
    assert per / 10 <= 62, where.most_common(12)


@pytest.fixture
def bridges():
    can = pytest.importorskip("can")
    assert can
    from bench.hil import bridge_diagram
    from hil.can import ACC_DBC, CanBackend, CanDatabase
    db = CanDatabase(ACC_DBC)
    ch = f"budget-{os.getpid()}-{next(_ids)}"
    a = CanBackend("virtual", ch, timeout=0.0).open()
    b = CanBackend("virtual", ch, timeout=0.0).open()
    d, tx, rx = bridge_diagram(a, b, db)
    sim = Simulator(d, solver="rk4", dt=1e-3, record=["rx.throttle"])
    sim.advance_to(0.01)
    yield sim, tx, rx
    a.close()
    b.close()


def test_can_message_through_the_bridges(bridges):
    sim, tx, rx = bridges
    ctx = sim.ctx

    def message():  # what bench.hil.bridge_cost times
        tx._send(ctx)
        ctx.ticks += 1
        rx.receive(ctx)
    per, where = own_calls(message, 50)
    assert rx.stats()["received"]["ACC_CMD"] >= 50
    assert per <= 25, where.most_common(12)


def test_step_of_a_diagram_of_bridges(bridges):
    sim = bridges[0]

    def step():
        sim.advance_to_ticks(sim.ctx.ticks + 1_000_000)
    per, where = own_calls(step, 50)
    assert per <= 52, where.most_common(12)
