"""Scripted crane operator: trapezoidal moves and the reference block."""

import numpy as np
import pytest

from blocks.cranes import OperatorProgram, trapezoid
from cosim.errors import ParameterError
from cosim.testing import BlockHarness
from cosim.time import to_ticks


def _area(pts):
    t, v = np.array(pts).T
    return float(np.sum(np.diff(t) * (v[1:] + v[:-1]) / 2))


@pytest.mark.parametrize("d, vmax, acc", [(35.0, 3.0, 0.4317), (-16.2, 2.0, 0.5),
                                          (0.5, 3.0, 0.5), (6.0, 0.75, 0.75 / 6.95)])
def test_trapezoid_moves_the_distance_with_corners_on_the_grid(d, vmax, acc):
    pts = trapezoid(7.0, d, vmax, acc)
    assert _area(pts) == pytest.approx(d, rel=1e-12)
    for t, _ in pts:
        assert to_ticks(t, "t") % to_ticks(0.005, "dt") == 0
    v = np.array([p[1] for p in pts])
    assert np.all(np.abs(v) <= vmax + 1e-12) and v[0] == 0.0 and v[-1] == 0.0
    assert np.all(np.sign(v[1:-1]) == np.sign(d))
    # the ramps are close to the asked acceleration (rounded to the grid, or shorter
    # when the move is too short to reach v_max)
    ramp = abs(v[1]) / (pts[1][0] - pts[0][0])
    assert ramp <= acc * 1.01


def test_trapezoid_short_move_is_triangular_and_zero_move_is_nothing():
    pts = trapezoid(0.0, 0.5, 3.0, 0.5)
    assert len(pts) == 3
    assert trapezoid(2.0, 0.0, 1.0, 1.0) == [(2.0, 0.0)]
    with pytest.raises(ParameterError, match="v_max, accel and grid_s must be > 0"):
        trapezoid(0.0, 1.0, 0.0, 1.0)


def test_program_values_and_time_events():
    op = OperatorProgram("op", trolley=[(1.0, 0.0), (3.0, 2.0), (5.0, 2.0), (7.0, 0.0)],
                         hoist=[(0.0, 0.5)], arms_12=[(4.0, 1.0), (6.0, 0.0)],
                         arm_6=[(2.0, 1.0)])
    h = BlockHarness(op)
    for t, vt, a12, a6 in ((0.5, 0.0, 0.0, 0.0), (2.0, 1.0, 0.0, 1.0), (4.5, 2.0, 1.0, 1.0),
                           (6.5, 0.5, 0.0, 1.0), (9.0, 0.0, 0.0, 1.0)):
        h.set_time(t)
        assert h.output("trolley_velocity_ref") == pytest.approx(vt)
        assert h.output("hoist_velocity_ref") == 0.5
        assert h.output("gantry_velocity_ref") == 0.0
        assert (h.output("arms_12"), h.output("arms_34"), h.output("arm_6")) == (a12, 0.0, a6)
        assert op.at(t)["trolley"] == pytest.approx(vt)
    events = sorted(t for ev in op.time_events for t in ev.times)
    assert events == [to_ticks(t, "t") for t in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)]
    # a step ending on a command change sees the left value: the branch is mode_time's
    h.set_time(4.0)
    h.ctx.mode_time = 3.995
    assert h.output("arms_12") == 0.0
    h.ctx.mode_time = 4.0
    assert h.output("arms_12") == 1.0


@pytest.mark.parametrize("kw, match", [
    ({"trolley": [(2.0, 0.0), (1.0, 1.0)]}, "trolley breakpoint times must increase"),
    ({"hoist": [(-1.0, 0.0)]}, "hoist must be finite with times >= 0"),
    ({"arm_5": [1.0, 2.0]}, "arm_5 must be \\(time, value\\) pairs"),
])
def test_program_errors_name_the_block_and_channel(kw, match):
    with pytest.raises(ParameterError, match="OperatorProgram 'op': " + match):
        OperatorProgram("op", **kw)
