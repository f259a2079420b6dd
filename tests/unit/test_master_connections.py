"""Master connections with a linear transformation (SSP ``LinearTransformation``)."""

import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import DiagramBuilder, MasterScheduler
from cosim.errors import BuildError
from cosim.subsystem import DiagramSubsystem


def _source(value=2.0, unit="m"):
    b = DiagramBuilder("src")
    c = b.add(Constant("c", value, unit=unit))
    b.export_output(c.y, "y")
    return DiagramSubsystem(b.build(), solver="euler", dt=1e-3)


def _integrator(unit="m"):
    b = DiagramBuilder("acc")
    i = b.add(Integrator("i", 0.0))
    b.export_input(i.u, "u")
    b.export_output(i.y, "x")
    return DiagramSubsystem(b.build(), solver="euler", dt=1e-3)


def test_factor_and_offset_apply_to_the_source_value():
    res = MasterScheduler([_source(), _integrator()], [("src.y", "acc.u", (3.0, 1.0))],
                          0.01).run(1.0)
    # x' = 3 * 2 + 1 = 7
    assert res["acc.x"][-1] == pytest.approx(7.0, rel=1e-12)


def test_a_malformed_connection_is_reported():
    with pytest.raises(BuildError, match="must be \\(src, dst\\)"):
        MasterScheduler([_source(), _integrator()], [("src.y",)], 0.01)
