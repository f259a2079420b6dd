"""Schedules asserted with spy blocks: which block ran at which tick."""

import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant, Sine
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.errors import RateError
from cosim.testing import SpyBlock

MS = 1_000_000


def _multirate():
    b = DiagramBuilder("mr")
    fast = b.add(SpyBlock("fast", period_s=0.010))
    slow = b.add(SpyBlock("slow", period_s=0.025, offset_s=0.005, with_input=True))
    src = b.add(Sine("src", 1.0, 1.0))
    i = b.add(Integrator("plant"))
    b.connect(src.y, i.u)
    b.connect(fast.y, slow.u)
    return b.build(), fast, slow


def test_multirate_spies_run_on_their_ticks():
    d, fast, slow = _multirate()
    Simulator(d, solver="rk4", dt=0.001, record=False).run(0.1)
    assert fast.ticks("update") == [k * 10 * MS for k in range(11)]
    assert slow.ticks("update") == [(5 + 25 * k) * MS for k in range(4)]
    # sampled outputs are computed at their own hits only (held in between)
    assert fast.ticks("output") == [k * 10 * MS for k in range(11)]
    # ... plus once at the start, so the held value before the first hit is defined
    assert slow.ticks("output") == [0] + [(5 + 25 * k) * MS for k in range(4)]


def test_slow_block_reads_fast_output_held_at_its_hit():
    d, fast, slow = _multirate()
    Simulator(d, solver="rk4", dt=0.001, record=False).run(0.1)
    # fast.y is computed at fast's hit before its update and held: at time t it
    # equals the number of fast updates before the latest fast hit <= t
    expected = [(t, float(t // (10 * MS))) for t, _ in slow.seen]
    assert slow.seen == expected


def test_execution_order_is_deterministic_and_printable():
    d1, _, _ = _multirate()
    d2, _, _ = _multirate()
    text = d1.compile().describe()
    assert text == d2.compile().describe()
    assert "rate groups:" in text and "every 10 ms: fast" in text
    assert "every 25 ms offset 5 ms: slow" in text


def test_discrete_only_diagram_steps_hit_to_hit():
    b = DiagramBuilder("disc")
    a = b.add(SpyBlock("a", period_s=0.003))
    c = b.add(SpyBlock("c", period_s=0.002))
    Simulator(b.build(), record=False).run(0.012)
    assert a.ticks() == [k * 3 * MS for k in range(5)]
    assert c.ticks() == [k * 2 * MS for k in range(7)]


def test_period_not_multiple_of_solver_step_is_rejected():
    b = DiagramBuilder("bad")
    b.add(SpyBlock("ctrl", period_s=0.0015))
    src = b.add(Constant("c", 1.0))
    i = b.add(Integrator("i"))
    b.connect(src.y, i.u)
    with pytest.raises(RateError, match=r"block 'ctrl' period 1.5 ms is not a multiple of the "
                                         r"solver step dt = 1 ms"):
        Simulator(b.build(), solver="rk4", dt=0.001)


def test_period_off_the_tick_grid_is_rejected_at_declaration():
    with pytest.raises(RateError, match="period = 1e-10 s is not a whole number of"):
        SpyBlock("x", period_s=1e-10)


def test_fixed_step_solver_needs_dt():
    b = DiagramBuilder("d")
    i = b.add(Integrator("i"))
    f = b.add(FunctionBlock("f", lambda u: -u))
    b.connect(i.y, f.in_ports[0])
    b.connect(f.out_ports[0], i.u)
    with pytest.raises(RateError, match="give dt"):
        Simulator(b.build(), solver="rk4")


def test_sampled_output_before_first_hit_comes_from_initial_state():
    from blocks.discrete import UnitDelay
    b = DiagramBuilder("off")
    c = b.add(Constant("c", 1.0))
    ud = b.add(UnitDelay("ud", period_s=0.01, initial=5.0, offset_s=0.005))
    i = b.add(Integrator("i"))
    b.connect(c.y, ud.u)
    b.connect(c.y, i.u)
    res = Simulator(b.build(), solver="rk4", dt=0.001, record=["ud.y"]).run(0.02)
    assert res.at("ud.y", 0.0) == 5.0 and res.at("ud.y", 0.004) == 5.0
    assert res.at("ud.y", 0.005) == 5.0 and res.at("ud.y", 0.015) == 1.0
